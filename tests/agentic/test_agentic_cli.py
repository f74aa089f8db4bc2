from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agentic"
TRACES = str(EXAMPLES / "traces.jsonl")
LABELS = str(EXAMPLES / "labels.jsonl")


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return int(exc.value.code or 0), out, err


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["agentic", "--traces", TRACES, "--labels", LABELS], capsys)
    assert code == 0
    assert "agentic search: averages at iteration i" in out
    assert "redundancy by matching key" in out
    assert "3 traces: 2 scored, 1 results not captured, 0 without search" in out
    metrics_table = out.split("result counts")[0]
    rows = {
        cells[0]: cells
        for cells in map(str.split, metrics_table.splitlines())
        if cells and cells[0] in "123N"
    }
    assert rows["1"][:3] == ["1", "7.000", "7.000"]  # i, CG, RG
    assert rows["3"][1] == "12.000"
    assert "IterationsForAllGoodResults: 2.00" in out
    assert "warning: 1 traces left out: results not captured" in err


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "agentic.json"
    code, out, _ = run_cli(["agentic", "-t", TRACES, "-l", LABELS, "--json", "--out", str(out_file)], capsys)
    assert code == 0
    data = json.loads(out)
    assert data == json.loads(out_file.read_text(encoding="utf-8"))
    assert data["kind"] == "agentic" and data["schema_version"] == "1"
    assert data["averages_by_iteration"]["CG"] == [7.0, 10.0, 12.0]
    assert data["aggregate"]["averages_at_n"]["IterationsForAllGoodResults"] == 2.0
    assert data["aggregate"]["redundancy"]["by_key"]["url"] == 2
    traces = {t["trace_id"]: t for t in data["traces"]}
    assert traces["py-311"]["series"]["CG"] == [10.0, 12.0, 12.0]
    assert traces["py-311"]["details"] is None
    assert traces["not-captured"]["status"] == "results_not_captured"
    assert data["provenance"]["labels"]["sha256"]
    assert data["provenance"]["settings"]["dedup_fingerprint"]


def test_details(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["agentic", "-t", TRACES, "--json", "--details"], capsys)
    assert code == 0
    papers = next(t for t in json.loads(out)["traces"] if t["trace_id"] == "papers")
    assert [d["matched_by"] for d in papers["details"]] == [None, None, "domain_id", None]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["agentic", "--traces", "nope.jsonl"], "Error: nope.jsonl: file not found"),
        (
            ["agentic", "--traces", TRACES, "--format", "xml"],
            "Error: --format must be one of auto, native, otel, openai-agents, langsmith, got 'xml'",
        ),
        (["agentic"], "Error: Missing option '--traces'"),
    ],
)
def test_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert err.strip().startswith(message)


def test_bad_record_names_line_and_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"trace_id": "a", "turns": [{"iterations": [{"searches": [{"results": [{"gain": 2}]}]}]}]}\n'
    )
    code, _, err = run_cli(["agentic", "--traces", str(path)], capsys)
    assert code == 2
    assert err.strip() == (
        f"Error: {path}:1: turns[0].iterations[0].searches[0].results[0]: "
        "a result needs at least one of domain_id, id, url, title or snippet"
    )


def test_help_lists_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["agentic", "--help"], capsys)
    assert code == 0
    assert "--traces" in out and "--labels" in out and "--format" in out
