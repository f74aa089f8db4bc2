"""Failure analysis: each miss lands in the documented bucket, with counts and examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.cli import main
from ragmeter.errors import InputError
from ragmeter.mining.analysis import analyze_failures, terms
from ragmeter.mining.dataset import MinedCandidate, MinedPair, load_mined_dataset

DOCS = {
    "agents.ParallelAgent": "Executes its sub-agents simultaneously.",
    "agents.SequentialAgent": "Runs sub agents one after another, in order: a sequential agent.",
    "agents.LoopAgent": "Repeats its sub-agents until a condition holds.",
    "tools.Calculator": "Adds, subtracts and multiplies numbers.",
    "json.dumps": "Serialize an object to a JSON formatted string with sorted keys optional.",
    "json.JSONEncoder": "Extensible JSON encoder; sort_keys sorts dictionary keys.",
}


def _pair(pair_id: str, query: str, verdicts: dict[str, str]) -> MinedPair:
    return MinedPair(
        pair_id, query, "IDENTIFIED", tuple(MinedCandidate(d, DOCS[d], v) for d, v in verdicts.items())
    )


PAIRS = [
    # gold shares no query term: vocabulary mismatch
    _pair("v:1", "run tasks concurrently", {"agents.ParallelAgent": "YES", "tools.Calculator": "NO"}),
    # a verified-irrelevant doc above the gold one shares the query's terms: distractor overlap
    _pair(
        "d:1",
        "sequential agent for sub agents order",
        {"agents.LoopAgent": "YES", "agents.SequentialAgent": "NO"},
    ),
    # the query has too few specific terms: specificity gap
    _pair("s:1", "json keys", {"json.JSONEncoder": "YES", "json.dumps": "NO", "tools.Calculator": "NO"}),
    # found in the top k: no miss
    _pair("h:1", "multiply numbers", {"tools.Calculator": "YES", "json.dumps": "NO"}),
    # no YES at all: skipped
    _pair("n:1", "anything", {"json.dumps": "NO"}),
    # no output recorded: a no_output miss
    _pair("m:1", "sorted json string", {"json.dumps": "YES"}),
]

RANKINGS = {
    "v:1": ["tools.Calculator"],
    "d:1": ["agents.SequentialAgent", "agents.LoopAgent"],
    "s:1": ["tools.Calculator", "json.dumps", "json.JSONEncoder"],
    "h:1": ["tools.Calculator"],
    "n:1": [],
}


def test_every_bucket() -> None:
    report = analyze_failures(PAIRS, RANKINGS, k=1)
    buckets = {m.pair_id: m.bucket for m in report.misses}
    assert buckets == {
        "v:1": "vocabulary_mismatch",
        "d:1": "distractor_overlap",
        "s:1": "specificity_gap",
        "m:1": "no_output",
    }
    distractor = next(m for m in report.misses if m.bucket == "distractor_overlap")
    assert distractor.culprit == "agents.SequentialAgent" and distractor.rank == 2
    assert set(distractor.shared_terms) >= {"sequential", "agent"}
    assert report.counts() == {
        "vocabulary_mismatch": 1,
        "distractor_overlap": 1,
        "specificity_gap": 1,
        "other": 0,
        "no_output": 1,
    }
    assert (report.scored, report.skipped, report.missing_output, report.hits) == (5, 1, 1, 1)
    summary = report.to_dict(per_bucket=1)
    assert summary["buckets"]["vocabulary_mismatch"]["share"] == 0.25
    assert summary["buckets"]["distractor_overlap"]["examples"][0]["culprit"] == "agents.SequentialAgent"


def test_a_larger_k_turns_misses_into_hits() -> None:
    report = analyze_failures(PAIRS, RANKINGS, k=3)
    assert {m.pair_id for m in report.misses} == {"v:1", "m:1"}


def test_terms() -> None:
    assert terms("ParallelAgent runs sub_agents") == ["parallel", "agent", "run", "sub", "agent"]
    with pytest.raises(ValueError, match="k must be"):
        analyze_failures(PAIRS, RANKINGS, k=0)


def _dataset(path: Path) -> Path:
    pairs = [
        {
            "id": p.id,
            "input": p.query,
            "query": p.query,
            "expected_output": p.relevant,
            "verification": {"status": p.status},
            "candidates": [
                {"fqn": c.id, "text": c.text, "empirical_relevance": c.verdict} for c in p.candidates
            ],
        }
        for p in PAIRS
    ]
    path.write_text(yaml.safe_dump({"pairs": pairs, "samples": pairs}))
    return path


def test_cli_analyze_json_and_bare_id_lists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dataset = _dataset(tmp_path / "d.yaml")
    outputs = tmp_path / "o.jsonl"
    lines: list[dict[str, Any]] = []
    for sid, ranking in RANKINGS.items():
        output: Any = ranking if sid != "d:1" else {"retrieved": [{"id": d} for d in ranking]}
        lines.append({"id": sid, "output": output})
    outputs.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["mine", "analyze", "--dataset", str(dataset), "--outputs", str(outputs), "-k", "1", "--json"])
    assert exit_info.value.code == 0
    summary = json.loads(capsys.readouterr().out)
    assert {name: b["count"] for name, b in summary["buckets"].items()} == {
        "vocabulary_mismatch": 1,
        "distractor_overlap": 1,
        "specificity_gap": 1,
        "other": 0,
        "no_output": 1,
    }
    with pytest.raises(SystemExit) as exit_info:
        main(["mine", "analyze", "--dataset", str(dataset), "--outputs", str(outputs), "-k", "1"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert "distractor_overlap" in text and "agents.SequentialAgent" in text


def test_not_a_mined_dataset(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("samples: [{id: a}]\n")
    with pytest.raises(InputError, match="not a mined dataset") as info:
        load_mined_dataset(path)
    assert info.value.where == str(path)
