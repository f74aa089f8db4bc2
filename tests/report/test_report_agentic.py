"""`ragmeter agentic --out` results feed `report` (per-iteration curves) and `compare` like any results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agentic"


@pytest.fixture
def agentic_json(tmp_path: Path, cli: Any) -> Path:
    out = tmp_path / "agentic.json"
    args = ["agentic", "-t", str(EXAMPLES / "traces.jsonl"), "-l", str(EXAMPLES / "labels.jsonl")]
    code, _, err = cli([*args, "--out", str(out)])
    assert code == 0, err
    return out


def test_report_of_an_agentic_result_plots_the_curves(agentic_json: Path, tmp_path: Path, cli: Any) -> None:
    data = json.loads(agentic_json.read_text(encoding="utf-8"))
    code, _, err = cli(["report", str(agentic_json), "--out", str(tmp_path / "r.html")])
    assert code == 0, err
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "<polyline" in html  # the per-iteration curves
    for trace in data["traces"]:
        assert trace["trace_id"] in html  # every trace in the drill-down, scored or not
    # the summary shows the averages at i = N, as the terminal does
    cg_at_n = data["aggregate"]["averages_at_n"]["CG"]
    assert f"{cg_at_n:.4f}" in html


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
    compared = json.loads(out)
    assert compared["candidate"] == "cand"
    cg = next(row for row in compared["metrics"] if row["metric"] == "CG")
    scored = [t["trace_id"] for t in data["traces"] if t["status"] == "scored"]
    assert (cg["n_pairs"], cg["delta"], cg["n_improved"]) == (len(scored), pytest.approx(1.0), len(scored))


def test_a_file_that_is_neither_is_a_clear_error(tmp_path: Path, cli: Any) -> None:
    bad = tmp_path / "x.json"
    bad.write_text(json.dumps({"kind": "agentic", "aggregate": {}}), encoding="utf-8")
    code, _, err = cli(["report", str(bad)])
    assert (code, err.strip()) == (2, f"Error: {bad}: agentic result without 'aggregate' and 'traces'")
