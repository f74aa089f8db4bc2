"""Compare two runs query by query: mean difference, bootstrap CI, permutation p-value, corrections, power.

Only queries scored in both runs are paired. Runs whose query sets differ are
compared on the intersection, and the comparison says how many queries were
left out on each side.

A metric whose aggregate is a percentile (``latency_p95``: the registry's
``percentile``) is compared by that percentile, not by the mean: the baseline and
candidate values are the percentiles over the paired queries, the delta is their
difference, the interval a paired bootstrap of it and the p-value a paired
randomisation test of it (``statistic`` says which: ``"mean"`` or ``"p95"``).

With fewer non-zero differences than any test could call significant at ``alpha``
(2 / 2^n > alpha: five at 0.05), a metric gets no p-value: :attr:`MetricComparison.untestable`
says so instead. Each mean metric also says what the comparison could detect
(:attr:`MetricComparison.power`, :mod:`ragmeter.report.power`) and its effect size d_z.

>>> from ragmeter.results import EvalResult
>>> def run(values):
...     return EvalResult(aggregate={}, per_query={q: {"mrr": v} for q, v in values.items()},
...                       n_queries=len(values), n_scored={}, n_skipped={})
>>> c = compare_results(run({"a": 0.5, "b": 1.0}), run({"a": 1.0, "b": 1.0, "c": 0.0}))
>>> c.metrics[0].delta, c.metrics[0].n_pairs, c.only_candidate
(0.25, 2, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from pydantic import BaseModel, Field

from ragmeter.report import DEFAULT_RESAMPLES
from ragmeter.report.power import ALPHA, POWER, Power, paired_power
from ragmeter.report.stats import (
    benjamini_hochberg,
    bootstrap_ci,
    effect_size,
    holm,
    paired_percentile_ci,
    paired_percentile_pvalue,
    permutation_pvalue,
    too_few_to_test,
)
from ragmeter.results import EvalResult

LOWER_IS_BETTER_HINTS = ("rate", "latency", "cost", "tokens", "miss")


def higher_is_better(metric: str) -> bool:
    """Direction of a metric: the registry's word when it knows the name, else a name heuristic."""
    from ragmeter.errors import MetricNameError
    from ragmeter.metrics.registry import resolve_metric

    try:
        return resolve_metric(metric).definition.higher_is_better
    except (MetricNameError, KeyError):
        lowered = metric.lower()
        return not any(hint in lowered for hint in LOWER_IS_BETTER_HINTS) or "hit_rate" in lowered


def canonical_metric_name(name: str) -> str:
    """The canonical spelling of a metric name (``recall_any@5`` → ``hit@5``); unknown names unchanged."""
    from ragmeter.errors import MetricNameError
    from ragmeter.metrics.registry import resolve_metric

    try:
        return resolve_metric(name).name
    except (MetricNameError, KeyError):
        return name


def aggregate_percentile(metric: str) -> float | None:
    """The percentile a metric's aggregate is (95.0 for ``latency_p95.retrieval``), or ``None`` for a mean."""
    from ragmeter.errors import MetricNameError
    from ragmeter.metrics.registry import resolve_metric

    try:
        return resolve_metric(metric).definition.percentile
    except (MetricNameError, KeyError):
        return None


def _statistic_name(percentile: float | None) -> str:
    if percentile is None:
        return "mean"
    return f"p{percentile:g}"


class QueryChange(BaseModel):
    """One query's values in both runs."""

    id: str
    baseline: float
    candidate: float
    delta: float


class MetricComparison(BaseModel):
    """The paired comparison of one metric."""

    metric: str
    higher_is_better: bool
    n_pairs: int
    statistic: str = "mean"
    """What ``baseline_mean``, ``candidate_mean`` and ``delta`` are: ``mean``, or a percentile
    (``p95``) for metrics whose aggregate is one."""
    baseline_mean: float | None
    candidate_mean: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None = None
    significant: bool | None = None
    """``p_adjusted < alpha``; ``None`` when the metric was not tested (:attr:`untestable`)."""
    untestable: str | None = None
    """Why there is no p-value: too few non-zero differences for any test to reach ``alpha``."""
    effect_size: float | None = None
    """d_z = mean difference / sd of the differences (``None`` for percentiles, or no spread)."""
    power: Power | None = None
    """What this comparison can detect (``None`` for percentiles)."""
    improved: list[QueryChange] = Field(default_factory=list)
    regressed: list[QueryChange] = Field(default_factory=list)
    n_improved: int = 0
    n_regressed: int = 0
    n_unchanged: int = 0


class Comparison(BaseModel):
    """Every metric both runs share, compared on the queries they share."""

    baseline: str
    candidate: str
    n_shared_queries: int
    only_baseline: int
    only_candidate: int
    correction: str
    confidence: float
    metrics: list[MetricComparison]
    alpha: float = ALPHA
    power: float = POWER
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = 0
    notes: list[str] = Field(default_factory=list)
    baseline_aggregate: dict[str, float | None] = Field(default_factory=dict)
    candidate_aggregate: dict[str, float | None] = Field(default_factory=dict)
    totals_only: list[str] = Field(default_factory=list)
    """Metrics that exist only as totals (an error rate, a cost total): in an aggregate, but in no
    per-query row of either run, so only their totals can be compared."""

    def get(self, metric: str) -> MetricComparison | None:
        """The comparison of ``metric`` (exact canonical name), if both runs have it."""
        return next((m for m in self.metrics if m.metric == metric), None)


def _compare_metric(
    metric: str,
    pairs: list[tuple[str, float, float]],
    *,
    top: int,
    confidence: float,
    n_resamples: int,
    seed: int,
    alpha: float = ALPHA,
    power: float = POWER,
) -> MetricComparison:
    hib = higher_is_better(metric)
    percentile = aggregate_percentile(metric)
    statistic = _statistic_name(percentile)
    if not pairs:
        return MetricComparison(
            metric=metric,
            higher_is_better=hib,
            n_pairs=0,
            statistic=statistic,
            baseline_mean=None,
            candidate_mean=None,
            delta=None,
            ci_low=None,
            ci_high=None,
            p_value=None,
        )
    base = np.array([p[1] for p in pairs])
    cand = np.array([p[2] for p in pairs])
    diffs = cand - base
    changes = [QueryChange(id=q, baseline=b, candidate=c, delta=c - b) for q, b, c in pairs if c != b]
    untestable = None
    if too_few_to_test(len(changes), alpha=alpha):
        untestable = (
            f"too few non-zero differences ({len(changes)} of {len(pairs)} queries changed) "
            f"to call anything significant at α = {alpha:g}"
        )
    p_value: float | None = None
    power_info: Power | None = None
    effect: float | None = None
    if percentile is None:
        base_value, cand_value, delta = float(base.mean()), float(cand.mean()), float(diffs.mean())
        low, high = bootstrap_ci(diffs, confidence=confidence, n_resamples=n_resamples, seed=seed)
        if untestable is None:
            p_value = permutation_pvalue(diffs, n_permutations=n_resamples, seed=seed)
        power_info = paired_power(base, cand, alpha=alpha, power=power)
        effect = effect_size(diffs)
    else:
        base_value = float(np.percentile(base, percentile))
        cand_value = float(np.percentile(cand, percentile))
        delta = cand_value - base_value
        low, high = paired_percentile_ci(
            base, cand, percentile, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
        if untestable is None:
            p_value = paired_percentile_pvalue(base, cand, percentile, n_permutations=n_resamples, seed=seed)
    better = sorted((ch for ch in changes if (ch.delta > 0) == hib), key=lambda ch: -abs(ch.delta))
    worse = sorted((ch for ch in changes if (ch.delta > 0) != hib), key=lambda ch: -abs(ch.delta))
    return MetricComparison(
        metric=metric,
        higher_is_better=hib,
        n_pairs=len(pairs),
        statistic=statistic,
        baseline_mean=base_value,
        candidate_mean=cand_value,
        delta=delta,
        ci_low=low,
        ci_high=high,
        p_value=p_value,
        untestable=untestable,
        effect_size=effect,
        power=power_info,
        improved=better[:top],
        regressed=worse[:top],
        n_improved=len(better),
        n_regressed=len(worse),
        n_unchanged=len(pairs) - len(changes),
    )


CORRECTIONS = ("holm", "bh", "none")


class Tested(Protocol):
    """Anything with a p-value to correct: a metric of a comparison, a breakdown cell."""

    p_value: float | None
    p_adjusted: float | None
    significant: bool | None


def apply_correction(metrics: Sequence[Tested], correction: str, *, alpha: float) -> int:
    """Adjust the p-values of every tested item together (one family) and mark the significant ones.

    Returns the family size (the items that have a p-value).
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be 'holm', 'bh' or 'none', got {correction!r}")
    tested = [m for m in metrics if m.p_value is not None]
    pvals = [m.p_value for m in tested if m.p_value is not None]
    adjusted = (
        holm(pvals) if correction == "holm" else benjamini_hochberg(pvals) if correction == "bh" else pvals
    )
    for m, adj in zip(tested, adjusted, strict=True):
        m.p_adjusted = adj
        m.significant = adj < alpha
    return len(tested)


def compare_results(
    baseline: EvalResult,
    candidate: EvalResult,
    *,
    metrics: Sequence[str] | None = None,
    baseline_label: str = "baseline",
    candidate_label: str = "candidate",
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    correction: str = "holm",
    top: int = 5,
    seed: int = 0,
    alpha: float = ALPHA,
    power: float = POWER,
) -> Comparison:
    """Pair the per-query values of both runs and compare every shared metric.

    The p-values of all metrics form one family for ``correction``; a metric is
    ``significant`` when its adjusted p-value is below ``alpha``. ``power`` is the power
    at which each metric's minimum detectable effect is given.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    if not 0 < power < 1:
        raise ValueError(f"power must be between 0 and 1 (exclusive), got {power}")
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be 'holm', 'bh' or 'none', got {correction!r}")
    shared = [q for q in baseline.per_query if q in candidate.per_query]
    only_b = len(baseline.per_query) - len(shared)
    only_c = len(candidate.per_query) - len(shared)
    base_names, cand_names = _all_names(baseline), _all_names(candidate)
    base_set, cand_set = set(base_names), set(cand_names)
    if metrics:
        names = _requested_names(metrics, list(dict.fromkeys([*base_names, *cand_names])))
    else:
        names = [n for n in base_names if n in cand_set]
    _check_something_to_compare(shared, names, baseline, candidate, baseline_label, candidate_label)
    notes: list[str] = []
    if only_b or only_c:
        notes.append(
            f"the runs' query sets differ: compared on the {len(shared)} shared queries "
            f"({only_b} only in {baseline_label}, {only_c} only in {candidate_label})"
        )
    for label, ours, theirs in (
        (baseline_label, base_names, cand_set),
        (candidate_label, cand_names, base_set),
    ):
        alone = [n for n in ours if n not in theirs and (not metrics or n in names)]
        if alone:
            notes.append(f"only in {label}, not compared: {', '.join(alone)}")
    compared: list[MetricComparison] = []
    for name in names:
        pairs: list[tuple[str, float, float]] = []
        for q in shared:
            b = baseline.per_query[q].get(name)
            c = candidate.per_query[q].get(name)
            if b is not None and c is not None:
                pairs.append((q, float(b), float(c)))
        compared.append(
            _compare_metric(
                name,
                pairs,
                top=top,
                confidence=confidence,
                n_resamples=n_resamples,
                seed=seed,
                alpha=alpha,
                power=power,
            )
        )
    if not any(m.n_pairs for m in compared):
        from ragmeter.errors import InputError

        raise InputError(
            f"no query has a value for {', '.join(names)} in both {baseline_label} and {candidate_label}: "
            "nothing to compare"
        )
    apply_correction(compared, correction, alpha=alpha)
    return Comparison(
        baseline=baseline_label,
        candidate=candidate_label,
        n_shared_queries=len(shared),
        only_baseline=only_b,
        only_candidate=only_c,
        correction=correction,
        confidence=confidence,
        metrics=compared,
        notes=notes,
        baseline_aggregate=dict(baseline.aggregate),
        candidate_aggregate=dict(candidate.aggregate),
        totals_only=_totals_only(baseline, candidate),
        alpha=alpha,
        power=power,
        n_resamples=n_resamples,
        seed=seed,
    )


def _totals_only(baseline: EvalResult, candidate: EvalResult) -> list[str]:
    per_query: set[str] = set()
    for result in (baseline, candidate):
        for values in result.per_query.values():
            per_query.update(values)
    return [n for n in dict.fromkeys([*baseline.aggregate, *candidate.aggregate]) if n not in per_query]


def _check_something_to_compare(
    shared: list[str],
    names: list[str],
    baseline: EvalResult,
    candidate: EvalResult,
    baseline_label: str,
    candidate_label: str,
) -> None:
    """No shared query, or no shared metric, is an error: a comparison of nothing shows nothing."""
    from ragmeter.errors import InputError

    if not shared:
        raise InputError(
            f"{baseline_label} ({len(baseline.per_query)} queries) and {candidate_label} "
            f"({len(candidate.per_query)} queries) share no query: nothing to compare"
        )
    if not names:
        raise InputError(
            f"{baseline_label} ({', '.join(_all_names(baseline)) or 'no metric'}) and {candidate_label} "
            f"({', '.join(_all_names(candidate)) or 'no metric'}) share no metric: nothing to compare"
        )


def _all_names(result: EvalResult) -> list[str]:
    seen: dict[str, None] = dict.fromkeys(result.aggregate)
    for values in result.per_query.values():
        seen.update(dict.fromkeys(values))
    return list(seen)


def _requested_names(requested: Sequence[str], available: list[str]) -> list[str]:
    """The names asked for, as the runs spell them (aliases resolved); a name neither run has is an error."""
    from ragmeter.errors import ConfigError

    names: list[str] = []
    for name in requested:
        canonical = name if name in available else canonical_metric_name(name)
        if canonical not in available:
            raise ConfigError(
                f"--metric {name!r}: no such metric in either run (have: {', '.join(available)})"
            )
        if canonical not in names:
            names.append(canonical)
    return names
