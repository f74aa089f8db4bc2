from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragmeter
from ragmeter.agentic import evaluate_agentic
from ragmeter.agentic.load import read_records
from ragmeter.agentic.trace import SCHEMA_PATH, trace_json_schema
from ragmeter.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agentic"


def test_shipped_schema_matches_the_models() -> None:
    shipped = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert shipped == trace_json_schema(), (
        "trace.schema.json is stale; regenerate it with "
        "python -c 'from ragmeter.agentic.trace import write_json_schema; write_json_schema()'"
    )


def test_examples_validate_against_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for record in read_records(EXAMPLES / "traces.jsonl"):
        validator.validate(record.value)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"trace_id": "t", "turns": [{"iterations": [{"searches": [{"hits": []}]}]}]})


def test_example_files_score() -> None:
    result = evaluate_agentic(EXAMPLES / "traces.jsonl", EXAMPLES / "labels.jsonl")
    agg = result.aggregate
    assert (agg.counts.traces, agg.counts.scored, agg.counts.results_not_captured) == (3, 2, 1)
    # py-311: CG = [10, 12, 12]; papers: CG = [4, 8] (see docs/agentic.md for the arithmetic)
    assert agg.averages_by_iteration["CG"] == [7.0, 10.0, 12.0]
    assert agg.redundancy.by_key == {"domain_id": 1, "generic_id": 0, "url": 2, "content": 0}
    assert agg.averages_at_n["IterationsForAllGoodResults"] == 2.0


def write(tmp_path: Path, text: str, name: str = "traces.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


OK = (
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": [{"url": "https://a.org"}]}]}]}]}'
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            OK + "\n{not json",
            ":2: invalid JSON (Expecting property name enclosed in double quotes at column 2)",
        ),
        (
            OK.replace('"results"', '"hits"'),
            ":1: turns[0].iterations[0].searches[0].hits: unknown field (not part of the trace format; see trace.schema.json)",
        ),
        (
            OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gain": 5'),
            ":1: turns[0].iterations[0].searches[0].results[0].gain: Input should be less than or equal to 4",
        ),
        (
            OK.replace('"url": "https://a.org"', '"id": 1.5'),
            ":1: turns[0].iterations[0].searches[0].results[0].id: Input should be a valid string",
        ),
        (
            OK.replace('{"url": "https://a.org"}', '{"url": "  ", "score": 0.3}'),
            ":1: turns[0].iterations[0].searches[0].results[0]: a result needs at least one of domain_id, id, url, title or snippet",
        ),
        (
            '{"trace_id": "t1", "turns": []}',
            ":1: turns: List should have at least 1 item after validation, not 0",
        ),
        (OK + "\n" + OK, ":2: duplicate trace_id 't1' (first at {path}:1)"),
        ('{"something": 1}', ":1: cannot tell the trace format from the first record"),
    ],
)
def test_errors_name_file_line_and_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as exc:
        evaluate_agentic(path)
    assert str(exc.value).startswith(f"{path}" + message.replace("{path}", str(path)))


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="file not found"):
        evaluate_agentic(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="file is empty"):
        evaluate_agentic(write(tmp_path, "\n\n"))


def test_a_json_document_with_a_list_of_traces(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps([json.loads(OK)], indent=2), name="traces.json")
    result = evaluate_agentic(path)
    assert result.traces[0].where == f"{path}:[0]"
    assert result.provenance["traces"]["format"] == "native"
    assert result.provenance["ragmeter_version"] == ragmeter.__version__


def test_integer_ids_are_kept_as_text() -> None:
    (s,) = evaluate_agentic(
        [
            {
                "trace_id": 7,
                "turns": [
                    {"iterations": [{"searches": [{"results": [{"id": 12, "gain": 2}, {"id": "12"}]}]}]}
                ],
            }
        ]
    ).traces
    assert s.trace_id == "7"
    assert s.duplicates_by_key["generic_id"] == 1
