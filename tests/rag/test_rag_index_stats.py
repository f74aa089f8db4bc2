"""Index statistics: loading, checks, coverage rates, provenance, the shipped JSON Schema."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from ragmeter import evaluate
from ragmeter.cli import main
from ragmeter.errors import InputError
from ragmeter.io.index_stats import index_stats_json_schema, load_index_stats
from ragmeter.metrics.indexing import index_coverage, is_context_reason
from ragmeter.schema.rag import IndexStats

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag"
SAMPLES = [{"id": "q", "gold_supports": [{"rel_path": "a.md"}]}]
OUTPUTS = {"q": {"retrieved": [{"rel_path": "a.md"}]}}


def write(tmp_path: Path, data: Any, name: str = "index_stats.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_example_index_coverage() -> None:
    result = evaluate(SAMPLES, OUTPUTS, metrics=["mrr"], index_stats=EXAMPLE / "index_stats.json")
    cov = result.index_coverage
    assert cov is not None
    assert cov["no_chunks_rate"] == 3 / 120
    assert cov["skipped_for_context_rate"] == 11 / 1480  # exceeds_context_window 9 + too_long 2
    assert cov["context_skip_reasons"] == ["exceeds_context_window", "too_long"]
    assert cov["chunks_skipped_for_context"] == 11
    assert cov["tokens_per_chunk"] == {"min": 12.0, "max": 2048.0, "mean": 311.5, "p95": 890.0}
    assert cov["zero_chunk_rel_paths"][0] == "personal/scans/receipt.pdf"
    index = result.provenance["inputs"]["index"]
    assert index["chunker_version"] == "md-heading-chunker 2.1.0"
    assert index["embedding_model"] == "bge-small-en-v1.5"
    assert index["index_version"] == "2024-06-01.1"
    assert index["created_at"] == "2024-06-01T09:30:00Z"
    assert len(index["sha256"]) == 64
    assert result.to_json_dict()["index_coverage"] == cov


@pytest.mark.parametrize(
    ("reason", "context"),
    [
        ("exceeds_context_window", True),
        ("CONTEXT_LENGTH_EXCEEDED", True),
        ("too long", True),
        ("Too-Long", True),
        ("oversize", True),
        ("oversized_chunk", True),
        ("empty_text", False),
        ("binary_file", False),
        ("duplicate", False),
    ],
)
def test_context_reasons(reason: str, context: bool) -> None:
    assert is_context_reason(reason) is context


def test_zero_chunk_docs_as_a_count_and_attempted_derived() -> None:
    stats = IndexStats.model_validate(
        {
            "docs_processed": 8,
            "docs_with_zero_chunks": 2,
            "chunks_embedded": 90,
            "chunks_skipped": 10,
            "skip_reasons": {"too_long": 4, "empty": 6},
        }
    )
    cov = index_coverage(stats)
    assert cov["no_chunks_rate"] == 0.25
    assert cov["skipped_for_context_rate"] == 0.04  # chunks_attempted missing: embedded + skipped
    assert cov["zero_chunk_rel_paths"] == []


def test_missing_inputs_give_no_rate() -> None:
    cov = index_coverage(IndexStats.model_validate({"chunker_version": "v1", "chunks_attempted": 0}))
    assert cov["no_chunks_rate"] is None and cov["skipped_for_context_rate"] is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"docs_processed": 2, "docs_with_zero_chunks": 3},
            r"docs_with_zero_chunks \(3\) is more than docs_processed",
        ),
        ({"docs_with_zero_chunks": {"count": 2, "rel_paths": ["a.md"]}}, "lists 1 documents but count is 2"),
        (
            {"chunks_attempted": 5, "chunks_embedded": 6},
            r"chunks_embedded \(6\) is more than chunks_attempted",
        ),
        ({"chunks_attempted": -1}, "chunks_attempted: Input should be greater than or equal to 0"),
        ({"docs_with_zero_chunks": -2}, "docs_with_zero_chunks must be >= 0"),
        ({"skip_reasons": {"too_long": -1}}, r"skip_reasons\['too_long'\] must be >= 0"),
        ({"tokens_per_chunk": {"min": 9, "max": 3}}, r"tokens_per_chunk.min \(9.0\) is more than"),
        ({"tokens_per_chunk": {"median": 3}}, "tokens_per_chunk.median: unknown setting"),
        ([1, 2], "index stats must be a JSON object"),
    ],
)
def test_impossible_stats_are_input_errors(tmp_path: Path, data: Any, message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(InputError, match=message) as err:
        load_index_stats(path)
    assert str(path) in str(err.value)


def test_inconsistent_counts_and_unknown_fields_are_warnings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "chunks_attempted": 10,
            "chunks_embedded": 7,
            "chunks_skipped": 2,
            "skip_reasons": {"too_long": 1},
            "chunkr_version": "v2",
        },
    )
    result = evaluate(SAMPLES, OUTPUTS, metrics=["mrr"], index_stats=path)
    assert [w.split(": ", 1)[1] for w in result.warnings] == [
        "chunks_embedded + chunks_skipped = 9, but chunks_attempted = 10",
        "skip_reasons add up to 1, but chunks_skipped = 2",
        "unknown field 'chunkr_version' (ignored)",
    ]


def test_shipped_json_schema_is_generated_from_the_model() -> None:
    shipped = (
        resources.files("ragmeter.schema").joinpath("index_stats.schema.json").read_text(encoding="utf-8")
    )
    assert shipped == index_stats_json_schema()
    schema = json.loads(shipped)
    assert set(schema["properties"]) == {
        "docs_processed",
        "docs_with_zero_chunks",
        "chunks_attempted",
        "chunks_embedded",
        "chunks_skipped",
        "skip_reasons",
        "tokens_per_chunk",
        "chunker_version",
        "embedding_model",
        "index_version",
        "created_at",
    }


def test_example_validates_against_the_json_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(index_stats_json_schema())
    jsonschema.validate(json.loads((EXAMPLE / "index_stats.json").read_text(encoding="utf-8")), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"chunks_attempted": -3}, schema)


def test_cli_index_stats_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "eval",
                "-d",
                str(EXAMPLE / "tests.yaml"),
                "--outputs",
                str(EXAMPLE / "run.jsonl"),
                "-m",
                "mrr",
                "--index-stats",
                str(EXAMPLE / "index_stats.json"),
                "--json",
            ]
        )
    assert exit_info.value.code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["index_coverage"]["no_chunks_rate"] == 0.025
    assert data["provenance"]["inputs"]["index"]["index_version"] == "2024-06-01.1"


def test_config_index_stats_is_relative_to_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    write(conf, {"docs_processed": 4, "docs_with_zero_chunks": 1}, "stats.json")
    (conf / "ragmeter.yaml").write_text("index_stats: stats.json\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = evaluate(SAMPLES, OUTPUTS, metrics=["mrr"], config=conf / "ragmeter.yaml")
    assert result.index_coverage is not None and result.index_coverage["no_chunks_rate"] == 0.25


def test_index_stats_apply_to_datasets_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "--qrels", "q", "--run", "r", "--index-stats", "s.json"])
    assert (
        capsys.readouterr().err
        == "Error: --index-stats and --snippet-matching apply to --dataset evaluations only\n"
    )
    with pytest.raises(InputError, match="file not found"):
        evaluate(SAMPLES, OUTPUTS, metrics=["mrr"], index_stats=tmp_path / "nope.json")
