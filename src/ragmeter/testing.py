"""Helpers for users' own test suites.

>>> from ragmeter.results import EvalResult
>>> def run(v):
...     return EvalResult(aggregate={"mrr": v}, per_query={"q": {"mrr": v}}, n_queries=1,
...                       n_scored={"mrr": 1}, n_skipped={"mrr": 0})
>>> assert_no_regression(run(0.5), run(0.49), rules=["mrr<-0.05"])
>>> assert_no_regression(run(0.5), run(0.3), rules=["mrr<-0.05"])
Traceback (most recent call last):
...
AssertionError: regression gate failed:
  FAIL: mrr changed by -0.2000 [mrr<-0.05]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragmeter.results import EvalResult

ResultsLike = EvalResult | str | Path


def _load(value: ResultsLike) -> tuple[EvalResult, str]:
    if isinstance(value, EvalResult):
        return value, "run"
    from ragmeter.report.results_dir import load_results

    loaded = load_results(value)
    return loaded.result, loaded.label


def assert_no_regression(
    baseline: ResultsLike,
    candidate: ResultsLike,
    *,
    rules: Sequence[str],
    alpha: float | None = None,
    n_resamples: int = 2_000,
    seed: int = 0,
) -> None:
    """Fail (``AssertionError``) when any gate rule fails; rules as for ``ragmeter gate --fail-on``."""
    from ragmeter.report.compare import compare_results
    from ragmeter.report.gate import check_rules, parse_rule

    base, base_label = _load(baseline)
    cand, cand_label = _load(candidate)
    comparison = compare_results(
        base, cand, baseline_label=base_label, candidate_label=cand_label, n_resamples=n_resamples, seed=seed
    )
    outcomes = check_rules(comparison, [parse_rule(r) for r in rules], alpha=alpha)
    failed = [o.reason for o in outcomes if o.failed]
    if failed:
        raise AssertionError("regression gate failed:\n  " + "\n  ".join(failed))
