"""What a comparison pairs, names and reports: shared queries, directions, top changes, corrections."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.errors import InputError
from ragmeter.report.compare import (
    aggregate_percentile,
    canonical_metric_name,
    compare_results,
    higher_is_better,
)
from ragmeter.report.stats import (
    benjamini_hochberg,
    bootstrap_ci,
    holm,
    paired_percentile_ci,
    paired_percentile_pvalue,
    permutation_pvalue,
)
from ragmeter.results import EvalResult


def run(
    per_query: dict[str, dict[str, float | None]], aggregate: dict[str, float | None] | None = None
) -> EvalResult:
    return EvalResult(
        aggregate=aggregate or {}, per_query=per_query, n_queries=len(per_query), n_scored={}, n_skipped={}
    )


@pytest.mark.parametrize(
    ("metric", "higher"),
    [
        ("mrr", True),
        ("recall_any@5", True),
        ("error_rate", False),
        ("latency_p95.retrieval", False),
        ("my_error_rate", False),  # not in the registry: the name decides
        ("judge_latency", False),
        ("Judge_LATENCY_ms", False),  # the name heuristic ignores case
        ("dollar_cost", False),
        ("output_tokens", False),
        ("topic_miss", False),
        ("custom_hit_rate", True),
        ("custom_score", True),
    ],
)
def test_direction_of_a_metric(metric: str, higher: bool) -> None:
    assert higher_is_better(metric) is higher


def test_names_and_percentiles_come_from_the_registry() -> None:
    assert canonical_metric_name("recall_any@5") == "hit@5"
    assert canonical_metric_name("P_10") == "precision@10"
    assert canonical_metric_name("my_metric") == "my_metric"
    assert aggregate_percentile("latency_p95.retrieval") == 95.0
    assert aggregate_percentile("latency_p50") == 50.0
    assert aggregate_percentile("mrr") is None
    assert aggregate_percentile("my_metric") is None


BASE = {"a": {"mrr": 0.5, "x": 1.0}, "b": {"mrr": 1.0}, "c": {"mrr": 0.2}, "d": {"mrr": 0.0}}
CAND = {"d": {"mrr": 0.5}, "c": {"mrr": 0.2}, "a": {"mrr": 0.25}, "e": {"mrr": 1.0}}


def test_only_queries_in_both_runs_are_paired() -> None:
    c = compare_results(run(BASE), run(CAND), baseline_label="old", candidate_label="new", n_resamples=200)
    assert (c.n_shared_queries, c.only_baseline, c.only_candidate) == (3, 1, 1)
    [m] = c.metrics
    assert m.n_pairs == 3
    assert m.baseline_mean == pytest.approx((0.5 + 0.2 + 0.0) / 3, abs=1e-15)
    assert m.candidate_mean == pytest.approx((0.25 + 0.2 + 0.5) / 3, abs=1e-15)
    assert m.delta == pytest.approx((-0.25 + 0.0 + 0.5) / 3, abs=1e-15)
    assert m.statistic == "mean"
    assert c.notes == [
        "the runs' query sets differ: compared on the 3 shared queries (1 only in old, 1 only in new)",
        "only in old, not compared: x",
    ]
    assert (c.baseline, c.candidate) == ("old", "new")


def test_improved_and_regressed_queries_follow_the_metric_direction() -> None:
    base = {q: {"mrr": 0.5, "error_rate": 0.5} for q in "abcdef"}
    cand = {
        "a": {"mrr": 0.6, "error_rate": 0.6},
        "b": {"mrr": 0.9, "error_rate": 0.9},
        "c": {"mrr": 0.1, "error_rate": 0.1},
        "d": {"mrr": 0.5, "error_rate": 0.5},
        "e": {"mrr": 0.7, "error_rate": 0.7},
        "f": {"mrr": 0.4, "error_rate": 0.4},
    }
    c = compare_results(run(base), run(cand), top=2, n_resamples=200)
    mrr, errors = c.get("mrr"), c.get("error_rate")
    assert mrr is not None and errors is not None
    assert [q.id for q in mrr.improved] == ["b", "e"]  # largest change first, cut at top=2
    assert [q.id for q in mrr.regressed] == ["c", "f"]
    assert (mrr.n_improved, mrr.n_regressed) == (3, 2)  # d did not change
    assert [q.id for q in errors.improved] == ["c", "f"]  # an error rate that drops improved
    assert [q.id for q in errors.regressed] == ["b", "e"]
    assert (errors.n_improved, errors.n_regressed) == (2, 3)
    change = mrr.improved[0]
    assert (change.baseline, change.candidate, change.delta) == (0.5, 0.9, pytest.approx(0.4, abs=1e-15))


def test_statistics_of_a_mean_metric_are_those_of_the_paired_differences() -> None:
    # 30 queries: the permutation test samples, so its seed and size matter.
    rng = np.random.default_rng(4)
    base_values, cand_values = rng.random(30), rng.random(30)
    base = {f"q{i}": {"mrr": float(v)} for i, v in enumerate(base_values)}
    cand = {f"q{i}": {"mrr": float(v)} for i, v in enumerate(cand_values)}
    [m] = compare_results(run(base), run(cand), n_resamples=300, seed=9, confidence=0.8).metrics
    diffs = cand_values - base_values
    assert m.p_value == permutation_pvalue(diffs, n_permutations=300, seed=9)
    assert (m.ci_low, m.ci_high) == bootstrap_ci(diffs, confidence=0.8, n_resamples=300, seed=9)
    assert m.ci_low < m.delta < m.ci_high  # type: ignore[operator]


def test_statistics_of_a_percentile_metric_are_the_paired_percentile_tests() -> None:
    rng = np.random.default_rng(6)
    base_values, cand_values = rng.exponential(1.0, 25), rng.exponential(1.3, 25)
    base = {f"q{i}": {"latency_p95": float(v)} for i, v in enumerate(base_values)}
    cand = {f"q{i}": {"latency_p95": float(v)} for i, v in enumerate(cand_values)}
    [m] = compare_results(run(base), run(cand), n_resamples=200, seed=3, confidence=0.9).metrics
    assert m.p_value == paired_percentile_pvalue(base_values, cand_values, 95, n_permutations=200, seed=3)
    assert (m.ci_low, m.ci_high) == paired_percentile_ci(
        base_values, cand_values, 95, confidence=0.9, n_resamples=200, seed=3
    )


def test_a_percentile_metric_is_compared_by_its_percentile() -> None:
    base = {f"q{i}": {"latency_p95": float(i)} for i in range(20)}
    cand = {f"q{i}": {"latency_p95": float(i) * 2} for i in range(20)}
    [m] = compare_results(run(base), run(cand), n_resamples=200).metrics
    assert m.statistic == "p95"
    assert m.baseline_mean == pytest.approx(18.05, abs=1e-12)
    assert m.candidate_mean == pytest.approx(36.1, abs=1e-12)
    assert m.delta == pytest.approx(18.05, abs=1e-12)


def test_a_metric_without_pairs_has_no_values() -> None:
    base = {"a": {"mrr": None, "hit@5": 1.0}, "b": {"mrr": 0.5, "hit@5": 0.0}}
    cand = {"a": {"mrr": 0.5, "hit@5": 1.0}, "b": {"mrr": None, "hit@5": 1.0}}
    m = next(m for m in compare_results(run(base), run(cand)).metrics if m.metric == "mrr")
    assert m.n_pairs == 0
    assert (m.delta, m.p_value, m.p_adjusted, m.baseline_mean, m.ci_low) == (None, None, None, None, None)
    base = {"a": {"latency_p95": None, "hit@5": 1.0}}
    cand = {"a": {"latency_p95": 1.0, "hit@5": 1.0}}
    p95 = next(m for m in compare_results(run(base), run(cand)).metrics if m.metric == "latency_p95")
    assert p95.n_pairs == 0 and p95.statistic == "p95"


def test_runs_with_no_paired_value_at_all_are_an_error() -> None:
    base = {"a": {"mrr": None}, "b": {"mrr": 0.5}}
    cand = {"a": {"mrr": 0.5}, "b": {"mrr": None}}
    with pytest.raises(InputError, match="no query has a value for mrr in both"):
        compare_results(run(base), run(cand))


def test_metrics_are_compared_in_the_baseline_order_or_as_asked() -> None:
    base = run({"a": {"ndcg@10": 0.5, "mrr": 0.5, "hit@5": 1.0}}, {"precision@10": 0.1})
    cand = run({"a": {"hit@5": 0.0, "mrr": 0.4, "ndcg@10": 0.5}}, {"precision@10": 0.2})
    # Aggregate names first (a totals-only metric is listed, without pairs), then per-query names.
    assert [m.metric for m in compare_results(base, cand, n_resamples=100).metrics] == [
        "precision@10",
        "ndcg@10",
        "mrr",
        "hit@5",
    ]
    asked = compare_results(base, cand, metrics=["recall_any@5", "mrr", "hit@5"], n_resamples=100)
    assert [m.metric for m in asked.metrics] == ["hit@5", "mrr"]
    assert asked.baseline_aggregate == {"precision@10": 0.1}
    assert asked.candidate_aggregate == {"precision@10": 0.2}


def test_a_requested_metric_only_one_run_has_is_noted() -> None:
    base = run({"a": {"mrr": 0.5, "x": 1.0}})
    cand = run({"a": {"mrr": 0.4, "y": 1.0}})
    c = compare_results(base, cand, metrics=["x", "mrr"], baseline_label="b", candidate_label="c")
    assert c.notes == ["only in b, not compared: x"]
    assert [(m.metric, m.n_pairs) for m in c.metrics] == [("x", 0), ("mrr", 1)]
    c = compare_results(base, cand, baseline_label="b", candidate_label="c")
    assert c.notes == ["only in b, not compared: x", "only in c, not compared: y"]


def test_a_requested_metric_is_found_as_the_runs_spell_it() -> None:
    # Results written under an alias (not the canonical name) are still found by that name.
    base = run({"a": {"recall_any@5": 1.0}})
    assert [m.metric for m in compare_results(base, base, metrics=["recall_any@5"]).metrics] == [
        "recall_any@5"
    ]


def test_an_unknown_requested_metric_names_what_the_runs_have() -> None:
    from ragmeter.errors import ConfigError

    base = run({"a": {"mrr": 0.5}}, {"error_rate": 0.0})
    with pytest.raises(ConfigError) as error:
        compare_results(base, run({"a": {"hit@5": 1.0}}), metrics=["bogus"])
    assert str(error.value) == "--metric 'bogus': no such metric in either run (have: error_rate, mrr, hit@5)"


@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_p_values_are_adjusted_over_the_tested_metrics(correction: str) -> None:
    rng = np.random.default_rng(1)
    names = ["m1", "m2", "m3"]
    base = {f"q{i}": {n: float(rng.random()) for n in names} for i in range(8)}
    cand = {
        q: {n: v + (0.3 if n == "m1" else 0.01 * (i - 4)) for n, v in row.items()}
        for i, (q, row) in enumerate(base.items())
    }
    base["z"] = {"m4": 0.5}  # m4 has no pair: no p-value, left out of the family
    cand["z"] = {"m4": None}
    c = compare_results(run(base), run(cand), correction=correction, n_resamples=500)
    raw = [m.p_value for m in c.metrics if m.p_value is not None]
    adjust = {"holm": holm, "bh": benjamini_hochberg, "none": lambda p: p}[correction]
    assert [m.p_adjusted for m in c.metrics if m.p_value is not None] == adjust(raw)
    assert c.get("m4") is not None and c.get("m4").p_adjusted is None  # type: ignore[union-attr]
    assert c.correction == correction and c.confidence == 0.95


def test_an_unknown_correction_is_an_error() -> None:
    with pytest.raises(ValueError) as error:
        compare_results(run(BASE), run(CAND), correction="bonferroni")
    assert str(error.value) == "correction must be 'holm', 'bh' or 'none', got 'bonferroni'"


def test_defaults_label_the_runs_keep_five_changes_and_sample_10_000_times_with_seed_0() -> None:
    rng = np.random.default_rng(8)
    base_values, cand_values = rng.random(20), rng.random(20)
    base = {f"q{i}": {"mrr": float(v), "x": 1.0, "y": 1.0} for i, v in enumerate(base_values)}
    cand = {f"q{i}": {"mrr": float(v)} for i, v in enumerate(cand_values)}
    base["extra"] = {"mrr": 0.5}
    c = compare_results(run(base), run(cand))
    assert c.notes == [
        "the runs' query sets differ: compared on the 20 shared queries (1 only in baseline, 0 only in candidate)",
        "only in baseline, not compared: x, y",
    ]
    [m] = c.metrics
    diffs = cand_values - base_values
    assert m.p_value == permutation_pvalue(diffs, n_permutations=10_000, seed=0)
    assert (m.ci_low, m.ci_high) == bootstrap_ci(diffs, n_resamples=10_000, seed=0)
    assert len(m.improved) == min(5, m.n_improved) and len(m.regressed) == min(5, m.n_regressed)
    assert m.n_improved > 5 or m.n_regressed > 5
