"""Helpers for users' own test suites: absolute thresholds and regression gates.

:func:`assert_metric` checks an aggregate against a threshold and, when it fails, says
the value, how many queries were scored and skipped, the confidence interval of the
mean, and the worst queries for that metric. With the pytest plugin loaded (it is,
wherever ragmeter is installed), each check also lands in the test's summary line.

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
  warning: with 1 question a drop of 0.05 in mrr cannot be told from noise (1 query is too few for any test to reach α = 0.05) [mrr<-0.05]
"""

from __future__ import annotations

import math
import operator
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.report import DEFAULT_RESAMPLES
from ragmeter.results import EvalResult

ResultsLike = EvalResult | str | Path

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
}
QUESTION_CHARS = 70


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
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> None:
    """Fail (``AssertionError``) when any gate rule fails; rules as for ``ragmeter gate --fail-on``.

    The statistics are those of ``ragmeter gate`` (the same resamples). A rule whose threshold the
    test set cannot detect adds a warning to the failure message and, under pytest, to the
    ``ragmeter`` summary line of the test.
    """
    from ragmeter.report.compare import compare_results
    from ragmeter.report.gate import check_rules, parse_rule

    base, base_label = _load(baseline)
    cand, cand_label = _load(candidate)
    comparison = compare_results(
        base, cand, baseline_label=base_label, candidate_label=cand_label, n_resamples=n_resamples, seed=seed
    )
    outcomes = check_rules(comparison, [parse_rule(r) for r in rules], alpha=alpha)
    warnings = [f"warning: {o.warning}" for o in outcomes if o.warning]
    for warning in warnings:
        _record_line(warning)
    failed = [o.reason for o in outcomes if o.failed]
    if failed:
        raise AssertionError("regression gate failed:\n  " + "\n  ".join([*failed, *warnings]))


@dataclass(frozen=True)
class MetricCheck:
    """The outcome of one :func:`assert_metric`: the numbers behind the verdict."""

    metric: str
    op: str
    threshold: float
    value: float | None
    n_queries: int
    n_scored: int
    n_skipped: int
    ci: tuple[float, float] | None
    confidence: float
    passed: bool
    worst: list[tuple[str, float, str]] = field(default_factory=list)
    skip_reason: str | None = None

    def summary(self) -> str:
        """One line: ``ndcg@10 = 0.7123 >= 0.6 (48 scored, 2 skipped; 95% CI [0.6512, 0.7701])``."""
        value = "no value" if self.value is None else f"{self.value:.4f}"
        verdict = "" if self.passed else "NOT "
        ci = f"; {self.confidence:.0%} CI [{self.ci[0]:.4f}, {self.ci[1]:.4f}]" if self.ci is not None else ""
        return (
            f"{self.metric} = {value} {verdict}{self.op} {self.threshold:g} "
            f"({self.n_scored} scored, {self.n_skipped} skipped{ci})"
        )

    def report(self) -> str:
        """The failure message: the summary, why queries were skipped, and the worst queries."""
        lines = [self.summary()]
        if self.n_skipped and self.skip_reason:
            lines.append(f"  skipped: {self.skip_reason}")
        if self.worst:
            lines.append(f"  worst queries by {self.metric}:")
            width = max(len(qid) for qid, _, _ in self.worst)
            for qid, value, about in self.worst:
                lines.append(f"    {qid:<{width}}  {value:>8.4f}  {about}".rstrip())
        return "\n".join(lines)


def _metric_key(result: EvalResult, metric: str) -> str:
    if metric in result.aggregate:
        return metric
    from ragmeter.metrics.registry import resolve_metric

    canonical = resolve_metric(metric).name
    if canonical in result.aggregate:
        return canonical
    requested = result.provenance.get("metrics", {})
    found = [
        k for k, v in requested.items() if isinstance(v, dict) and v.get("requested") in (metric, canonical)
    ]
    if len(found) == 1:
        return str(found[0])
    raise AssertionError(
        f"{metric} is not in this result (it has: {', '.join(result.aggregate) or 'nothing'})"
    )


def _about(result: EvalResult, qid: str) -> str:
    """A short description of a query: its question and what it ranked first."""
    details = result.query_details.get(qid, {})
    question = details.get("input")
    if isinstance(question, dict):
        question = question.get("question") or question.get("query")
    parts = []
    if isinstance(question, str):
        text = " ".join(question.split())
        parts.append(repr(text if len(text) <= QUESTION_CHARS else text[: QUESTION_CHARS - 1] + "…"))
    retrieved = details.get("retrieved") or []
    if retrieved:
        top = retrieved[0]
        label = top.get("id") or top.get("rel_path") or "?"
        if top.get("heading_path"):
            heading = top["heading_path"]
            label = f"{label} > {' > '.join(heading) if isinstance(heading, list) else heading}"
        parts.append(f"top: {label}")
    elif "retrieved" in details:
        parts.append("retrieved nothing")
    error = (details.get("output") or {}).get("error")
    if error:
        parts.append(f"error: {error}")
    return "  ".join(parts)


def assert_metric(
    result: EvalResult,
    metric: str,
    op: str,
    threshold: float,
    *,
    worst: int = 5,
    confidence: float = 0.95,
) -> MetricCheck:
    """Fail (``AssertionError``) unless ``result``'s aggregate ``metric`` satisfies ``op threshold``.

    ``op`` is ``>=``, ``>``, ``<=``, ``<`` or ``==``. The failure message states the
    value, the scored and skipped counts, the bootstrap confidence interval of the mean
    (for mean metrics) and the ``worst`` queries. A metric with no value (nothing
    scored) fails. Returns the :class:`MetricCheck` when it passes.

    >>> r = EvalResult(aggregate={"mrr": 0.5}, per_query={"a": {"mrr": 1.0}, "b": {"mrr": 0.0}},
    ...                n_queries=2, n_scored={"mrr": 2}, n_skipped={"mrr": 0})
    >>> assert_metric(r, "mrr", ">=", 0.4).summary()
    'mrr = 0.5000 >= 0.4 (2 scored, 0 skipped; 95% CI [0.0000, 1.0000])'
    >>> assert_metric(r, "mrr", ">=", 0.6)
    Traceback (most recent call last):
    ...
    AssertionError: mrr = 0.5000 NOT >= 0.6 (2 scored, 0 skipped; 95% CI [0.0000, 1.0000])
      worst queries by mrr:
        b    0.0000
        a    1.0000
    """
    if op not in COMPARISONS:
        raise ValueError(f"op must be one of {', '.join(COMPARISONS)}, got {op!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    from ragmeter.metrics.registry import resolve_metric

    key = _metric_key(result, metric)
    value = result.aggregate.get(key)
    per_query = {qid: values.get(key) for qid, values in result.per_query.items()}
    scored = [v for v in per_query.values() if v is not None]
    ci = None
    if len(scored) > 1 and value is not None and math.isclose(sum(scored) / len(scored), value, abs_tol=1e-9):
        from ragmeter.report.stats import bootstrap_ci

        ci = bootstrap_ci(scored, confidence=confidence, n_resamples=DEFAULT_RESAMPLES, seed=0)
    higher = resolve_metric(key.split(".")[0]).definition.higher_is_better
    ordered = sorted(
        ((qid, v) for qid, v in per_query.items() if v is not None),
        key=lambda item: item[1] if higher else -item[1],
    )
    provenance = result.provenance.get("metrics", {}).get(key, {})
    check = MetricCheck(
        metric=key,
        op=op,
        threshold=float(threshold),
        value=value,
        n_queries=result.n_queries,
        n_scored=result.n_scored.get(key, len(scored)),
        n_skipped=result.n_skipped.get(key, result.n_queries - len(scored)),
        ci=ci,
        confidence=confidence,
        passed=value is not None and math.isfinite(value) and COMPARISONS[op](value, threshold),
        worst=[(qid, v, _about(result, qid)) for qid, v in ordered[:worst]],
        skip_reason=provenance.get("skip_reason") if isinstance(provenance, dict) else None,
    )
    _record(check)
    if not check.passed:
        raise AssertionError(check.report())
    return check


def _record(check: MetricCheck) -> None:
    """Hand the check to the pytest plugin, when it is loaded, for the test's summary line."""
    _record_line(check.summary())


def _record_line(line: str) -> None:
    plugin: Any = sys.modules.get("ragmeter.pytest_plugin")
    if plugin is not None:
        plugin.record(line)
