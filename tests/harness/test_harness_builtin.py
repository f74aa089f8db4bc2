"""The builtin system: the reference pipeline on the example vault, and its suite checks."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from ragmeter.cli import main
from ragmeter.harness.suite_run import run_suite

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.mark.skipif(not (EXAMPLES / "tests.yaml").is_file(), reason="examples/tests.yaml not present")
def test_harness_builtin_demo_suite_runs_and_writes_everything(tmp_path: Path) -> None:
    outcome = run_suite(EXAMPLES / "suite.yaml", results_dir=tmp_path / "demo")
    folder = tmp_path / "demo"
    assert {p.name for p in folder.iterdir()} == {
        "outputs.jsonl",
        "metrics.json",
        "per_query.jsonl",
        "config.json",
        "index_stats.json",
    }
    lines = [json.loads(line) for line in (folder / "outputs.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == outcome.result.n_queries == outcome.summary.n_ok
    first = lines[0]["output"]
    assert {"retrieved", "answer", "references", "abstained", "folder_mode", "timings", "tokens"} <= set(
        first
    )
    assert first["latency"] >= 0 and first["attempts"] == 1
    assert outcome.result.aggregate["hit@5"] > 0.5
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["suite"]["name"] == "demo"
    assert config["pipeline_config"]["k"] == 5
    assert config["run"]["n_called"] == len(lines)
    assert outcome.result.provenance["inputs"]["index"]["path"].endswith("index_stats.json")


def _suite(tmp_path: Path, system: str) -> Path:
    (tmp_path / "vault").mkdir()
    (tmp_path / "vault" / "a.md").write_text("# A\nSome text about apples.\n", encoding="utf-8")
    (tmp_path / "tests.yaml").write_text(
        'samples:\n  - id: q-1\n    input: {question: "apples?"}\n    expected_output: [x]\n',
        encoding="utf-8",
    )
    path = tmp_path / "suite.yaml"
    body = textwrap.indent(textwrap.dedent(system), "  ")
    path.write_text(f"name: b\ndataset: tests.yaml\nsystem:\n  type: builtin\n{body}", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        (
            "vault: vault\nmax_chunk_token: 50\n",
            "{path}:6: system.max_chunk_token: unknown key; did you mean 'max_chunk_tokens'?",
        ),
        (
            "vault: vault\nk: 3\n",
            "{path}:6: system.k: set k at the top level of the suite (it is what the pipeline retrieves)",
        ),
        (
            "vault: vault\nmax_chunk_tokens: 0\n",
            "{path}:6: system.max_chunk_tokens: Input should be greater than or equal to 1",
        ),
        (
            "vault: vault\nfolder_mode: sometimes\n",
            "{path}:6: system.folder_mode: Input should be 'off', 'on' or 'on_with_fallback'",
        ),
        ("vault: notes\n", "{path}:5: system.vault: folder not found: {dir}/notes"),
    ],
)
def test_harness_builtin_settings_are_checked_with_suite_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], system: str, expected: str
) -> None:
    path = _suite(tmp_path, system)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(path)])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.strip() == "Error: " + expected.format(path=path, dir=tmp_path)


def test_harness_builtin_pipeline_settings_pass_through(tmp_path: Path, h: SimpleNamespace) -> None:
    path = _suite(tmp_path, "vault: vault\nabstain_threshold: 100\nmax_answer_sentences: 1\n")
    outcome = run_suite(path, results_dir=tmp_path / "out")
    output = h.read_outputs(tmp_path / "out" / "outputs.jsonl")["q-1"]
    assert output["abstained"] is True, "abstain_threshold 100 reached the pipeline"
    config = json.loads((tmp_path / "out" / "config.json").read_text(encoding="utf-8"))
    assert config["pipeline_config"]["max_answer_sentences"] == 1
    assert config["suite"]["system"]["max_answer_sentences"] == 1
    assert outcome.summary.n_ok == 1
