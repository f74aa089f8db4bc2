"""Ranking metrics over anchors: recall_any (hit), recall_all, MRR, precision, recall; skips and misses."""

from __future__ import annotations

from typing import Any

import pytest

from ragmeter import evaluate


def chunk(rel_path: str, heading: str | None = None, text: str = "t") -> dict[str, Any]:
    return {"rel_path": rel_path, "heading_path": heading, "text": text}


ALPHA = {"rel_path": "work/alpha.md", "heading_path": "Alpha > Budget"}
FORECAST = {"rel_path": "work/q3.pdf", "heading_path": "Q3 > Forecast"}
MULTI_HOP = {
    "id": "mh",
    "category": "multi_hop",
    "gold_supports": [ALPHA, FORECAST],
    "required_support_groups": [[ALPHA], [FORECAST]],
}


def test_multi_hop_one_of_two_groups_found() -> None:
    outputs = {"mh": {"retrieved": [chunk("work/alpha.md", "Alpha > Budget > Q3"), chunk("work/beta.md")]}}
    result = evaluate([MULTI_HOP], outputs, metrics=["recall_any@5", "recall_all@5", "recall@5"])
    assert result.aggregate == {"hit@5": 1.0, "recall_all@5": 0.0, "recall@5": 0.5}


def test_multi_hop_both_groups_found_respects_k() -> None:
    retrieved = [chunk("work/alpha.md", "Alpha > Budget")] + [chunk(f"x{i}.md") for i in range(4)]
    retrieved.append(chunk("work/q3.pdf", "Q3 > Forecast"))  # rank 6
    result = evaluate([MULTI_HOP], {"mh": {"retrieved": retrieved}}, metrics=["recall_all@5", "recall_all@6"])
    assert result.aggregate == {"recall_all@5": 0.0, "recall_all@6": 1.0}


def test_a_group_is_satisfied_by_any_of_its_anchors() -> None:
    sample = {
        "id": "g",
        "required_support_groups": [
            [{"rel_path": "a.md"}, {"rel_path": "a-copy.md"}],
            [{"rel_path": "b.md", "heading_path": "B"}],
        ],
    }
    outputs = {"g": {"retrieved": [chunk("a-copy.md", "Z"), chunk("b.md", "B > 1")]}}
    result = evaluate([sample], outputs, metrics=["recall_all@2", "hit@2", "recall@2"])
    # without gold_supports, the supports are the anchors of the groups (3 of them, 2 found)
    assert result.aggregate == {"recall_all@2": 1.0, "hit@2": 1.0, "recall@2": pytest.approx(2 / 3)}


def test_recall_all_is_reported_only_over_samples_with_groups() -> None:
    samples = [MULTI_HOP, {"id": "plain", "gold_supports": [ALPHA]}]
    outputs = {"mh": [], "plain": {"retrieved": [chunk("work/alpha.md", "Alpha > Budget")]}}
    result = evaluate(samples, outputs, metrics=["recall_all@5", "hit@5"])
    assert result.aggregate == {"recall_all@5": 0.0, "hit@5": 0.5}
    assert result.n_scored["recall_all@5"] == 1 and result.n_skipped["recall_all@5"] == 1
    assert result.per_query["plain"]["recall_all@5"] is None
    assert result.provenance["metrics"]["recall_all@5"]["skip_reason"] == "no required_support_groups"


def test_precision_counts_every_matching_chunk_recall_counts_supports() -> None:
    sample = {"id": "q", "gold_supports": [{"rel_path": "a.md", "heading_path": "A"}, {"rel_path": "b.md"}]}
    retrieved = [chunk("a.md", "A > 1"), chunk("a.md", "A > 2"), chunk("c.md"), chunk("a.md", "A")]
    result = evaluate(
        [sample], {"q": {"retrieved": retrieved}}, metrics=["precision@4", "recall@4", "ndcg@4", "mrr"]
    )
    assert result.aggregate["precision@4"] == 0.75  # three chunks match a gold support
    assert result.aggregate["recall@4"] == 0.5  # one of the two supports was found
    assert result.aggregate["mrr"] == 1.0
    # nDCG over supports: one found at rank 1, ideal has two supports -> 1 / (1 + 1/log2(3))
    assert result.aggregate["ndcg@4"] == pytest.approx(1 / (1 + 1 / 1.584962500721156))


def test_precision_divides_by_k_even_when_fewer_were_returned() -> None:
    sample = {"id": "q", "gold_supports": [{"rel_path": "a.md"}]}
    result = evaluate([sample], {"q": {"retrieved": [chunk("a.md")]}}, metrics=["precision@5"])
    assert result.aggregate["precision@5"] == 0.2


def test_unanswerable_samples_are_skipped_by_ranking_metrics() -> None:
    samples = [
        {"id": "a", "gold_supports": [{"rel_path": "a.md"}]},
        {"id": "u", "answerable": False},
        {"id": "u2", "answerable": False, "gold_supports": [{"rel_path": "x.md"}]},
    ]
    outputs = {
        "a": {"retrieved": [chunk("b.md"), chunk("a.md")]},
        "u": [],
        "u2": {"retrieved": [chunk("x.md")]},
    }
    result = evaluate(samples, outputs, metrics=["mrr", "hit@5"])
    assert result.aggregate == {"mrr": 0.5, "hit@5": 1.0}
    assert result.n_skipped == {"mrr": 2, "hit@5": 2}


def test_missing_output_scores_zero_and_is_counted() -> None:
    samples = [MULTI_HOP, {"id": "b", "gold_supports": [ALPHA]}]
    outputs = {"b": {"retrieved": [chunk("work/alpha.md", "Alpha > Budget")]}}
    result = evaluate(samples, outputs, metrics=["hit@5", "recall_all@5", "error_rate"])
    assert result.per_query["mh"] == {"hit@5": 0.0, "recall_all@5": 0.0, "error_rate": 1.0}
    assert result.n_missing_output == 1
    assert "'mh'" in result.warnings[0]


def test_id_and_anchor_samples_mix() -> None:
    samples = [
        {"id": "ids", "expected_output": ["d1", "d2"]},
        {"id": "anchors", "gold_supports": [{"rel_path": "a.md"}]},
    ]
    outputs = {"ids": ["d2", "x"], "anchors": {"retrieved": [chunk("x.md"), chunk("a.md")]}}
    result = evaluate(samples, outputs, metrics=["mrr", "recall@2"])
    assert result.per_query["ids"] == {"mrr": 1.0, "recall@2": 0.5}
    assert result.per_query["anchors"] == {"mrr": 0.5, "recall@2": 1.0}


def test_per_sample_k_applies_to_recall_all() -> None:
    sample = dict(MULTI_HOP, metadata={"k": 1})
    retrieved = [chunk("work/alpha.md", "Alpha > Budget"), chunk("work/q3.pdf", "Q3 > Forecast")]
    result = evaluate([sample], {"mh": {"retrieved": retrieved}}, metrics=["recall_all"], k=5)
    assert result.aggregate == {"recall_all@1": 0.0}


def test_default_metrics_for_an_anchor_dataset() -> None:
    result = evaluate([MULTI_HOP], {"mh": {"retrieved": [chunk("work/alpha.md", "Alpha > Budget")]}})
    assert list(result.aggregate) == ["hit@5", "recall_all@5", "mrr", "precision@5", "error_rate"]


def test_id_datasets_keep_the_foundation_defaults() -> None:
    result = evaluate([{"id": "q", "expected_output": ["a"]}], {"q": ["a"]})
    assert list(result.aggregate) == ["hit@5", "recall@5", "mrr", "ndcg@5"]
    assert result.breakdowns == {} and result.operational == {} and result.index_coverage is None
