"""``ragmeter report``: malformed results are an error, never a report (and no report.html is left)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ragmeter.results import EvalResult

W = "is not a number JSON allows"


@pytest.fixture
def res(tmp_path: Path) -> Path:
    """A results folder written by ragmeter: two queries, ``mrr``."""
    return EvalResult(
        aggregate={"mrr": 0.75},
        per_query={"q1": {"mrr": 0.5}, "q2": {"mrr": 1.0}},
        n_queries=2,
        n_scored={"mrr": 2},
        n_skipped={"mrr": 0},
    ).write(tmp_path / "res")


GOOD_LINE_1 = '{"id": "q1", "metrics": {"mrr": 0.5}}\n'
PER_QUERY = {
    "invalid-json": (
        GOOD_LINE_1 + '{"id": "q2", "metrics": {"mrr": 1.0}\n',
        "per_query.jsonl:2: invalid JSON",
    ),
    "third-line": (GOOD_LINE_1 + '{"id": "q2", "metrics": {"mrr": 1.0}}\n{oops}\n', "per_query.jsonl:3"),
    "not-an-object": (GOOD_LINE_1 + "[1, 2]\n", "per_query.jsonl:2: expected an object, got list"),
    "no-id": (GOOD_LINE_1 + '{"metrics": {"mrr": 1.0}}\n', "per_query.jsonl:2: id: expected a query id"),
    "numeric-id": (GOOD_LINE_1 + '{"id": 2, "metrics": {"mrr": 1.0}}\n', "per_query.jsonl:2: id"),
    "repeated-id": (GOOD_LINE_1 + GOOD_LINE_1, "per_query.jsonl:2: id: query 'q1' again (first at"),
    "unknown-id": (
        GOOD_LINE_1 + '{"id": "q9", "metrics": {}}\n',
        "per_query.jsonl:2: id: query 'q9' is not in metrics.json",
    ),
    "metrics-list": (
        GOOD_LINE_1 + '{"id": "q2", "metrics": [1.0]}\n',
        "per_query.jsonl:2: metrics: expected an object",
    ),
    "value-text": (
        GOOD_LINE_1 + '{"id": "q2", "metrics": {"mrr": "1.0"}}\n',
        "per_query.jsonl:2: metrics.mrr",
    ),
    "value-nan": (GOOD_LINE_1 + '{"id": "q2", "metrics": {"mrr": NaN}}\n', "per_query.jsonl:2: metrics.mrr"),
    "value-bool": (
        GOOD_LINE_1 + '{"id": "q2", "metrics": {"mrr": true}}\n',
        "per_query.jsonl:2: metrics.mrr",
    ),
    "truncated": (GOOD_LINE_1, "per_query.jsonl: no line for query 'q2'"),
    "empty": ("", "per_query.jsonl: file is empty"),
}


@pytest.mark.parametrize("case", list(PER_QUERY), ids=list(PER_QUERY))
def test_a_malformed_per_query_jsonl_is_an_error_not_a_report(refused: Any, res: Path, case: str) -> None:
    text, fragment = PER_QUERY[case]
    (res / "per_query.jsonl").write_text(text, encoding="utf-8")
    refused(["report", "res"], f"res/{fragment}")


def test_a_per_query_jsonl_in_utf16_names_the_file(refused: Any, res: Path) -> None:
    (res / "per_query.jsonl").write_bytes((res / "per_query.jsonl").read_text().encode("utf-16"))
    refused(["report", "res"], "res/per_query.jsonl: the file is UTF-16 text")


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("metrics.json", '{"aggregate": {"mrr": NaN}}', f"metrics.json:1: aggregate.mrr: NaN {W}"),
        ("metrics.json", "", "metrics.json: file is empty"),
        ("metrics.json", "null", "metrics.json: expected a JSON object, got NoneType"),
        ("config.json", "{", "config.json:1: invalid JSON"),
        ("config.json", '"a text"', "config.json: expected a JSON object, got str"),
    ],
)
def test_a_malformed_metrics_or_config_json_is_an_error(
    refused: Any, res: Path, name: str, text: str, fragment: str
) -> None:
    path = res / name
    if text.startswith('{"aggregate"'):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["aggregate"]["mrr"] = "@X@"
        text = json.dumps(data).replace('"@X@"', "NaN")
    path.write_text(text, encoding="utf-8")
    refused(["report", "res"], fragment)


AGENTIC = {
    "trace-not-object": ({"traces": ["t1"]}, "traces[0]: expected an object"),
    "value-text": (
        {"traces": [{"trace_id": "t", "status": "scored", "at_n": {"CG": "high"}}]},
        "traces[0].at_n.CG: expected a number or null",
    ),
    "aggregate-text": ({"aggregate_at_n": "x"}, "aggregate.averages_at_n.CG: expected a number or null"),
    "no-traces": ({"traces": None}, "agentic result without 'aggregate' and 'traces'"),
}


@pytest.mark.parametrize("case", list(AGENTIC), ids=list(AGENTIC))
def test_a_malformed_agentic_result_is_an_error(refused: Any, tmp_path: Path, case: str) -> None:
    change, fragment = AGENTIC[case]
    doc: dict[str, Any] = {
        "kind": "agentic",
        "aggregate": {"averages_at_n": {"CG": 3.0}, "n_at_n": {"CG": 1}},
        "traces": [{"trace_id": "t", "status": "scored", "at_n": {"CG": 3.0}}],
    }
    if "aggregate_at_n" in change:
        doc["aggregate"]["averages_at_n"]["CG"] = change["aggregate_at_n"]
    else:
        doc.update(change)
    (tmp_path / "a.json").write_text(json.dumps(doc), encoding="utf-8")
    refused(["report", "a.json"], "a.json: ", fragment)


def _foreign(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE photos (id INTEGER, path TEXT)")
    conn.close()


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (_foreign, "another program's SQLite database (tables: photos), not a ragmeter run history"),
        (lambda p: p.write_text("runs,when\n", encoding="utf-8"), "not a SQLite database"),
        (lambda p: p.mkdir(), "is a directory, expected a run history file"),
        (lambda p: None, "no history database here yet"),  # a typo must not silently drop the trend
    ],
    ids=["other-program", "text", "folder", "missing"],
)
def test_report_history_must_be_a_ragmeter_history(
    refused: Any, res: Path, tmp_path: Path, make: Any, fragment: str
) -> None:
    make(tmp_path / "h.db")
    refused(["report", "res", "--history", "h.db"], "h.db: ", fragment)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["report", "nowhere"], "nowhere: results folder not found"),
        (["report", "res", "--out", "afile/r.html"], "afile is a file, not a folder"),
        (["report", "empty"], "empty: no metrics.json here"),
    ],
)
def test_bad_report_paths_are_refused(
    refused: Any, res: Path, tmp_path: Path, args: list[str], fragment: str
) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    refused(args, fragment)


def test_a_report_of_good_results_is_written(accepted: Any, res: Path) -> None:
    accepted(["report", "res"])
    page = (res / "report.html").read_text(encoding="utf-8")
    assert 'data-metric="mrr"' in page and "0.7500" in page


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("config.json", {"suite": "a text"}),
        ("config.json", {"suite": {"resolved_paths": 3}}),
        ("config.json", {"suite": {"resolved_paths": {"dataset": ["a"]}}}),
        ("metrics.json", {"provenance": {"inputs": {"dataset": "tests.yaml", "outputs": 7}}}),
        ("metrics.json", {"provenance": {"inputs": "x", "judge": {"log": "judge_log.jsonl"}}}),
    ],
    ids=["suite-text", "paths-number", "dataset-list", "inputs-text", "judge-log-text"],
)
def test_odd_shapes_in_the_informational_parts_still_give_a_report(
    accepted: Any, res: Path, name: str, change: dict[str, Any]
) -> None:
    """config.json and the provenance only point the drill-down at files: an odd shape there is no crash."""
    path = res / name
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.update(change)
    path.write_text(json.dumps(data), encoding="utf-8")
    accepted(["report", "res"])
    assert 'data-metric="mrr"' in (res / "report.html").read_text(encoding="utf-8")
