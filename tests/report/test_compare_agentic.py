"""``compare`` of two agentic result files shows every value the JSON holds, IterationsForAllGoodResults too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agentic"


def _agentic(tmp_path: Path, cli: Any, name: str, labels: str) -> Path:
    labels_file = tmp_path / f"{name}-labels.jsonl"
    labels_file.write_text(labels, encoding="utf-8")
    out = tmp_path / f"{name}.json"
    code, _, err = cli(
        ["agentic", "-t", str(EXAMPLES / "traces.jsonl"), "-l", str(labels_file), "--out", str(out), "--json"]
    )
    assert code == 0, err
    return out


def test_compare_shows_iterations_for_all_good_results(tmp_path: Path, cli: Any) -> None:
    labels = (EXAMPLES / "labels.jsonl").read_text(encoding="utf-8")
    base = _agentic(tmp_path, cli, "base", labels)
    cand = _agentic(tmp_path, cli, "cand", labels)
    held = {
        t["trace_id"]: t["iterations_for_all_good"]
        for t in json.loads(base.read_text())["traces"]
        if t["status"] == "scored"
    }
    assert any(v is not None for v in held.values())
    mean = sum(v for v in held.values() if v is not None) / sum(v is not None for v in held.values())

    code, out, err = cli(["compare", str(base), str(cand), "--json"])
    assert code == 0, err
    (pair,) = json.loads(out)["comparisons"]
    row = next(m for m in pair["metrics"] if m["metric"] == "IterationsForAllGoodResults")
    assert row["baseline_mean"] == row["candidate_mean"] == mean
    assert row["n_pairs"] == sum(v is not None for v in held.values())

    code, out, err = cli(["compare", str(base), str(cand)])
    assert code == 0, err
    line = next(line for line in out.splitlines() if line.strip().startswith("IterationsForAllGoodResults"))
    assert "—" not in line and f"{mean:.4f}" in line


def test_help_names_every_kind_of_results_accepted(cli: Any) -> None:
    for command in ("report", "compare", "gate"):
        code, out, _ = cli([command, "--help"])
        assert code == 0
        text = " ".join(out.split())
        assert "results folder" in text and "metrics.json" in text and "agentic result JSON" in text, command


def test_report_takes_an_agentic_result_file(tmp_path: Path, cli: Any) -> None:
    labels = (EXAMPLES / "labels.jsonl").read_text(encoding="utf-8")
    result = _agentic(tmp_path, cli, "run", labels)
    code, out, err = cli(["report", str(result)])
    assert code == 0, err
    assert (tmp_path / "report.html").is_file() and "report.html" in out
