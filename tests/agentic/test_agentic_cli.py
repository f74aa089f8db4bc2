from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ragmeter.io import text_files

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agentic"
TRACES = str(EXAMPLES / "traces.jsonl")
LABELS = str(EXAMPLES / "labels.jsonl")


def test_table_output(cli: Any) -> None:
    code, out, err = cli(["agentic", "--traces", TRACES, "--labels", LABELS])
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


def test_json_output(tmp_path: Path, cli: Any) -> None:
    out_file = tmp_path / "agentic.json"
    code, out, _ = cli(["agentic", "-t", TRACES, "-l", LABELS, "--json", "--out", str(out_file)])
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
    assert data["provenance"]["labels"]["sha256"] and data["provenance"]["labels"]["path"] == LABELS
    assert data["provenance"]["settings"]["dedup_fingerprint"]


def test_details(cli: Any) -> None:
    code, out, _ = cli(["agentic", "-t", TRACES, "--json", "--details"])
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
def test_errors_exit_2(argv: list[str], message: str, cli: Any) -> None:
    code, _, err = cli(argv)
    assert code == 2
    assert err.strip().startswith(message)


def test_bad_record_names_line_and_field(tmp_path: Path, cli: Any) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        '{"trace_id": "a", "turns": [{"iterations": [{"searches": [{"results": [{"gain": 2}]}]}]}]}\n'
    )
    code, _, err = cli(["agentic", "--traces", str(path)])
    assert code == 2
    assert err.strip() == (
        f"Error: {path}:1: turns[0].iterations[0].searches[0].results[0]: "
        "a result needs at least one of domain_id, id, url, title or snippet"
    )


def test_help_lists_the_command(cli: Any) -> None:
    code, out, _ = cli(["agentic", "--help"])
    assert code == 0
    assert "--traces" in out and "--labels" in out and "--format" in out


def test_progress_shows_once_the_work_takes_a_while(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI log (stderr not a terminal) gets plain progress lines, for reading and for scoring."""
    code, _, err = cli(["agentic", "--traces", TRACES, "--labels", LABELS])
    assert code == 0 and "reading traces" not in err and "scoring traces" not in err  # quick: no lines
    import ragmeter.cli.agentic_cmd as command

    monkeypatch.setattr(command, "PROGRESS_AFTER_S", 0.0)  # as if the work had taken a while
    monkeypatch.setattr(text_files, "READ_PROGRESS_BYTES", 1)
    code, _, err = cli(["agentic", "--traces", TRACES, "--labels", LABELS])
    assert code == 0
    assert "reading traces: 0/0 MB" in err  # a small file: 0 whole MB
    assert "scoring traces: 3/3 traces (100%)" in err
    assert re.search(r"keying URLs and texts: (\d+)/\1 strings \(100%\)", err)  # the fast path's keys


def test_the_fast_reader_reports_the_bytes_it_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ragmeter.agentic.columnar_read as reader

    monkeypatch.setattr(text_files, "READ_PROGRESS_BYTES", 100)
    lines = Path(TRACES).read_bytes()
    path = tmp_path / "t.jsonl"
    path.write_bytes(lines)
    heard: list[tuple[int, int]] = []
    reader.read_columns(path, lambda done, total: heard.append((done, total)))
    size = len(lines)
    assert heard[-1] == (size, size) and len(heard) >= 2
    offsets = [done for done, _ in heard]
    assert offsets == sorted(offsets) and all(total == size for _, total in heard)
    assert all(b - a >= 100 for a, b in itertools.pairwise(offsets[:-1]))  # every 100 bytes at most


def test_the_fast_path_reports_the_keys_chunk_by_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The distinct URLs, then the distinct texts, a chunk at a time; before the scoring starts."""
    import functools

    from ragmeter.agentic import api, columnar_keys, evaluate_agentic

    chunked = functools.partial(columnar_keys.url_key_codes, chunk=2)
    monkeypatch.setattr(columnar_keys, "url_key_codes", chunked)
    monkeypatch.setattr(
        columnar_keys, "normalised_codes", functools.partial(columnar_keys.normalised_codes, chunk_chars=40)
    )
    results = [
        {"url": f"https://a.org/{i % 7}", "title": f"Title {i % 5}", "snippet": f"a snippet of page {i}"}
        for i in range(30)
    ]
    record = {"trace_id": "t", "turns": [{"iterations": [{"searches": [{"results": results}]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    heard: list[tuple[str, int, int]] = []
    evaluate_agentic(
        path,
        progress=lambda done, total: heard.append(("scoring", done, total)),
        step_progress=lambda step, done, total: heard.append((step, done, total)),
    )
    keying = [(d, t) for s, d, t in heard if s == api.KEYING]
    total = (1 + 7) + (1 + 5 + 30)  # each table's distinct values and its None
    assert keying[-1] == (total, total) and all(t == total for _, t in keying)
    done = [d for d, _ in keying]
    assert done == sorted(done) and len(done) >= 4 + 3  # four chunks of URLs, several of texts
    assert [s for s, _, _ in heard] == [api.KEYING] * len(keying) + ["scoring", "scoring"]


def _heard(run: Any) -> list[tuple[int, int]]:
    heard: list[tuple[int, int]] = []
    run(lambda done, total: heard.append((done, total)))
    return heard


def _reports_every(heard: list[tuple[int, int]], size: int, every: int) -> None:
    assert heard[-1] == (size, size) and len(heard) >= 3
    offsets = [done for done, _ in heard]
    assert offsets == sorted(offsets) and all(total == size for _, total in heard)
    assert all(b - a >= every for a, b in itertools.pairwise(offsets[:-1]))


def test_the_reference_path_reports_the_bytes_it_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """engine="reference" (and --details, a judge, other formats) reads as a stream: progress as it goes."""
    from ragmeter.agentic import evaluate_agentic

    monkeypatch.setattr(text_files, "READ_PROGRESS_BYTES", 100)
    path = tmp_path / "t.jsonl"
    path.write_bytes(Path(TRACES).read_bytes())
    size = path.stat().st_size
    for engine in ("reference", "auto"):  # the same reports on both paths
        heard = _heard(lambda p, e=engine: evaluate_agentic(path, LABELS, engine=e, read_progress=p))
        _reports_every(heard, size, 100)
    heard = _heard(lambda p: evaluate_agentic(path, LABELS, details=True, read_progress=p))
    _reports_every(heard, size, 100)


def test_trace_exports_report_their_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON Lines records (an OTLP or LangSmith export) as they are parsed; one JSON document at its end."""
    from ragmeter.agentic.load import iter_traces, read_records

    monkeypatch.setattr(text_files, "READ_PROGRESS_BYTES", 100)
    lines = Path(TRACES).read_text(encoding="utf-8").splitlines()
    records = tmp_path / "records.jsonl"
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    heard = _heard(lambda p: read_records(records, p))
    _reports_every(heard, records.stat().st_size, 100)
    whole = tmp_path / "whole.json"
    whole.write_text("[\n" + ",\n".join(lines) + "\n]\n", encoding="utf-8")  # one document: no line alone
    heard = []
    stream, _ = iter_traces(whole, read_progress=lambda d, t: heard.append((d, t)))
    assert len(list(stream)) == 3
    assert heard == [(whole.stat().st_size,) * 2]


def test_details_show_reading_progress_in_a_ci_log(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import ragmeter.cli.agentic_cmd as command

    monkeypatch.setattr(command, "PROGRESS_AFTER_S", 0.0)
    monkeypatch.setattr(text_files, "READ_PROGRESS_BYTES", 1)
    code, _, err = cli(["agentic", "--traces", TRACES, "--labels", LABELS, "--details", "--json"])
    assert code == 0
    assert "reading traces: 0/0 MB" in err and "scoring traces: 3/3 traces (100%)" in err
