"""Results are keyed by canonical names; ``provenance.metrics[*].requested`` keeps the spelling as typed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.metrics.registry import METRICS, resolve_metric

RAG = Path(__file__).resolve().parents[2] / "examples" / "rag"
NO_LLM = {"fuzzy_match"}
"""Judge metrics that need no judge endpoint (the others are covered in tests/judge_eval)."""


def _spellings() -> list[list[str]]:
    """Rounds of spellings: round i holds the i-th spelling of every family that has one."""
    families = [m for m in METRICS if m.needs != "judge" or m.family in NO_LLM]
    per_family = []
    for m in families:
        if m.param is not None and m.param.default is None:  # named with its parameter
            at = [f"{alias}@0.5" for alias in m.aliases] if m.param.at else []
            per_family.append([f"{m.family}_0.50", f"{m.family.upper()}_0.50", f"{m.family}.0.5", *at])
            continue
        spellings = [m.family, *m.aliases, m.family.upper()]
        if m.qualified:
            spellings += [f"{s}.retrieval" for s in spellings]
        if m.cutoff != "none":
            spellings += [f"{m.family}@3", f"{m.family.upper()}@3"]
        per_family.append(spellings)
    return [[s[i] for s in per_family if i < len(s)] for i in range(max(map(len, per_family)))]


@pytest.mark.parametrize("names", _spellings(), ids=lambda names: names[0])
def test_requested_keeps_every_spelling_as_typed(names: list[str]) -> None:
    result = ragmeter.evaluate(
        RAG / "tests.yaml", RAG / "run.jsonl", metrics=names, config=RAG / "ragmeter.yaml", judge=False
    )
    requested = {info["requested"]: name for name, info in result.provenance["metrics"].items()}
    assert sorted(requested) == sorted(names)
    for spelling, name in requested.items():
        canonical = resolve_metric(spelling).name
        assert name == canonical or canonical.endswith("@k"), (spelling, name)


@pytest.mark.parametrize(
    ("spelling", "name"),
    [
        ("nDCG@10", "ndcg@10"),
        ("P_5", "precision@5"),
        ("P.5", "precision@5"),
        ("recip_rank", "mrr"),
        ("RR", "mrr"),
        ("retrieval-hit-at-k", "hit@5"),
        ("success_1", "hit@1"),
        ("Rprec", "r-precision"),
        ("modified_precision", "modified_precision"),
    ],
)
def test_trec_and_ecosystem_spellings_are_kept(spelling: str, name: str) -> None:
    result = ragmeter.evaluate(
        [{"id": "q", "expected_output": ["a", "b"]}], {"q": ["x", "a", "y"]}, metrics=[spelling]
    )
    assert result.provenance["metrics"][name]["requested"] == spelling


def test_the_first_of_two_spellings_of_one_metric_is_kept() -> None:
    result = ragmeter.evaluate([{"id": "q", "expected_output": ["a"]}], {"q": ["a"]}, metrics=["RR", "mrr"])
    assert list(result.aggregate) == ["mrr"]
    assert result.provenance["metrics"]["mrr"]["requested"] == "RR"


def test_modified_precision_is_reported_under_its_name_and_listed(cli: Any) -> None:
    # 2 of 4 relevant items anywhere in the returned list
    result = ragmeter.evaluate(
        [{"id": "q", "expected_output": ["a", "b", "c", "d"]}],
        {"q": ["x1", "x2", "x3", "x4", "x5", "a", "x6", "c"]},
        metrics=["modified_precision", "recall@5"],
    )
    assert result.aggregate == {"modified_precision": 0.5, "recall@5": 0.0}
    code, out, _ = cli(["metrics", "--json"])
    assert code == 0
    assert "modified_precision" in [m["name"] for m in json.loads(out)]
    code, out, _ = cli(["metrics"])
    assert code == 0 and "modified_precision" in out
