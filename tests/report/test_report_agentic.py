"""`ragmeter agentic --out` results feed `report` (per-iteration curves) and `compare` like any results."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from report_helpers import page_data

from ragmeter.agentic import SERIES_NAMES
from ragmeter.report.html import render_report
from ragmeter.report.results_dir import load_results


def test_report_of_an_agentic_result_has_one_panel_per_series(
    agentic_json: Path, tmp_path: Path, cli: Any
) -> None:
    data = json.loads(agentic_json.read_text(encoding="utf-8"))
    code, _, err = cli(["report", str(agentic_json), "--out", str(tmp_path / "r.html")])
    assert code == 0, err
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    panels = re.findall(r'<figure class="panel" data-series="([^"]+)">(.*?)</figure>', html, flags=re.S)
    assert [name for name, _ in panels] == list(SERIES_NAMES)  # metrics, then counts, each on its own axis
    for _, svg in panels:
        assert svg.count("<polyline") == 1 and ">iteration i</text>" in svg  # x axis titled
        assert "rotate(-90)" in svg  # and the y axis
    # the summary shows the averages at i = N, as the terminal does
    cg_at_n = data["aggregate"]["averages_at_n"]["CG"]
    assert f"{cg_at_n:.4f}" in html
    traces = page_data(html)["queries"]
    assert [t["id"] for t in traces] == [t["trace_id"] for t in data["traces"]]  # scored or not


def test_iterations_for_all_good_results_is_shown_per_trace(agentic_json: Path) -> None:
    data = json.loads(agentic_json.read_text(encoding="utf-8"))
    loaded = load_results(agentic_json)
    html_data = page_data(render_report(agentic_json))
    names = [m["name"] for m in html_data["metrics"]]
    column = names.index("IterationsForAllGoodResults")
    assert column in html_data["headline"]  # a column of the trace table
    for trace, shown in zip(data["traces"], html_data["queries"], strict=True):
        expected = trace["iterations_for_all_good"]
        assert loaded.result.per_query.get(trace["trace_id"], {}).get("IterationsForAllGoodResults") == (
            None if trace["status"] != "scored" else expected
        )
        assert shown["v"][column] == (expected if trace["status"] == "scored" else None)
        assert shown["ag"]["st"] == trace["status"]
    scored = next(q for q in html_data["queries"] if q["ag"]["st"] == "scored")
    assert scored["q"] and scored["ag"]["s"]["CG"] and scored["ag"]["sq"]  # task, series, searches


def test_compare_two_agentic_results_is_paired_by_trace(agentic_json: Path, tmp_path: Path, cli: Any) -> None:
    data = json.loads(agentic_json.read_text(encoding="utf-8"))
    for trace in data["traces"]:
        if trace["status"] == "scored":
            trace["at_n"]["CG"] += 1.0
    data["aggregate"]["averages_at_n"]["CG"] += 1.0
    cand = tmp_path / "cand.json"
    cand.write_text(json.dumps(data), encoding="utf-8")
    code, out, err = cli(["compare", str(agentic_json), str(cand), "--json"])
    assert code == 0, err
    (compared,) = json.loads(out)["comparisons"]
    assert compared["candidate"] == "cand"
    cg = next(row for row in compared["metrics"] if row["metric"] == "CG")
    scored = [t["trace_id"] for t in data["traces"] if t["status"] == "scored"]
    assert (cg["n_pairs"], cg["delta"], cg["n_improved"]) == (len(scored), pytest.approx(1.0), len(scored))
    code, out, err = cli(
        ["compare", str(agentic_json), str(cand), "-f", "html", "-o", str(tmp_path / "c.html")]
    )
    assert code == 0, err
    page = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert 'data-view="compare"' in page and "Agentic curves" in page  # the baseline's trace report below


def test_a_file_that_is_neither_is_a_clear_error(tmp_path: Path, cli: Any) -> None:
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"kind": "agentic", "aggregate": {}}), encoding="utf-8")
    code, _, err = cli(["report", str(bad)])
    assert (code, err.strip()) == (2, f"Error: {bad}: agentic result without 'aggregate' and 'traces'")
