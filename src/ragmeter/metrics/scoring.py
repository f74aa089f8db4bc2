"""Score resolved metrics over a :class:`ScoringInput`: k resolution, scorability, aggregation.

k precedence for a metric without an explicit ``@k``: the sample's
``metadata.k``, else the caller's k, else the config's
``metrics.retrieval.default_k``, else 5. A metric named with ``@k`` uses that k.

>>> import numpy as np
>>> from ragmeter.metrics.relevance import RelevanceTable
>>> from ragmeter.metrics.inputs import ScoringInput
>>> from ragmeter.metrics.registry import resolve_metric
>>> inp = ScoringInput.from_table(RelevanceTable.from_lists(["a", "b"], [[0, 1], [0]], [[1], []]))
>>> scored = score_metrics([resolve_metric("mrr")], inp, default_k=5)
>>> s = scored[0]
>>> s.name, s.values.tolist(), s.scored.tolist(), s.mean
('mrr', [0.5, 0.0], [True, False], 0.5)
>>> s.skip_reasons, s.aggregate_over(np.array([False, True]))
({'no relevant item in the ground truth': 1}, None)
>>> ndcg = score_metrics([resolve_metric("nDCG")], inp, default_k=5, k_source="the default")[0]
>>> ndcg.name, ndcg.requested, ndcg.k_source
('ndcg@5', 'nDCG', 'the default')
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ragmeter.metrics.inputs import ScoringInput
from ragmeter.metrics.names import DEFAULT_K, MetricName
from ragmeter.metrics.registry import Aggregate, PerSample, ResolvedMetric, WithParam
from ragmeter.metrics.relevance import BoolArray, FloatArray, Int64Array, Ranked

GEOMETRIC_FLOOR = 0.00001
"""trec_eval's MIN_GEO_MEAN: each value is at least this before a geometric mean."""
SAMPLE_K = "sample metadata.k"


@dataclass(frozen=True)
class ScoredMetric:
    """Per-query values of one metric, which queries were scored, and the k used."""

    name: str
    requested: str
    """The name as asked for (``recip_rank``, ``nDCG@10``); :attr:`name` is the canonical one."""
    values: FloatArray
    scored: BoolArray
    k: int | str | None
    """The cutoff: a number, ``"per-sample"`` when samples set their own, or ``None``."""
    skip_reason: str
    """Why queries were left out (the most common reason when they differ)."""
    reasons: tuple[str, ...] | None = None
    """Per query, why it was left out (``""`` when scored); ``None``: :attr:`skip_reason` for all."""
    percentile: float | None = None
    """When set, the aggregate is this percentile of the scored values instead of their mean."""
    aggregate: Aggregate = "mean"
    """``mean``, ``sum`` (count measures) or ``geometric`` (gm_map; values floored at 0.00001)."""
    k_source: str | None = None
    """Where the cutoff of a name without ``@k`` came from (``-k / k=``, the config, the default,
    or the samples' ``metadata.k``); ``None`` when the name gave it or there is none."""

    @property
    def n_scored(self) -> int:
        """How many queries have a value."""
        return int(np.count_nonzero(self.scored))

    @property
    def n_skipped(self) -> int:
        """How many queries could not be scored (see :attr:`skip_reason`)."""
        return len(self.scored) - self.n_scored

    @property
    def mean(self) -> float | None:
        """Mean over scored queries (``None`` when none was scored)."""
        if self.n_scored == 0:
            return None
        return float(np.mean(self.values[self.scored]))

    @property
    def value(self) -> float | None:
        """The aggregate: the mean, or the metric's percentile (numpy linear) over scored queries."""
        return self.aggregate_over(np.ones(len(self.scored), dtype=bool))

    def aggregate_over(self, subset: BoolArray) -> float | None:
        """The aggregate over the scored queries in ``subset`` (``None`` when there are none)."""
        chosen = self.values[self.scored & subset]
        if len(chosen) == 0:
            return None
        if self.percentile is not None:
            return float(np.percentile(chosen, self.percentile))
        if self.aggregate == "sum":
            return float(np.add.accumulate(chosen)[-1])
        if self.aggregate == "geometric":
            logs = [math.log(v) for v in np.maximum(chosen, GEOMETRIC_FLOOR).tolist()]
            return math.exp(float(np.add.accumulate(logs)[-1]) / len(logs))
        return float(np.mean(chosen))

    def reason_of(self, q: int) -> str:
        """Why query ``q`` was left out (``""`` when it was scored)."""
        if bool(self.scored[q]):
            return ""
        return self.reasons[q] if self.reasons is not None else self.skip_reason

    @property
    def skip_reasons(self) -> dict[str, int]:
        """How many queries were left out for each reason."""
        counts: dict[str, int] = {}
        for q in np.flatnonzero(~self.scored).tolist():
            reason = self.reason_of(q)
            counts[reason] = counts.get(reason, 0) + 1
        return counts


def _resolve_k(
    spec: MetricName, sample_k: NDArray[np.int64] | None, default_k: int, n: int, k_source: str
) -> tuple[Int64Array | None, str, int | str | None, str | None]:
    """The cutoffs, the resolved name, the k to report and where it came from."""
    if spec.k is None:
        return None, str(spec), None, None
    if spec.k != DEFAULT_K:
        k = int(spec.k)
        return np.full(n, k, dtype=np.int64), str(spec), k, None
    if sample_k is not None and bool(np.any(sample_k > 0)):
        ks = np.where(sample_k > 0, sample_k, default_k).astype(np.int64)
        source = SAMPLE_K if bool(np.all(sample_k > 0)) else f"{SAMPLE_K}, else {k_source}"
        if bool(np.all(ks == ks[0])):
            return ks, str(dataclasses.replace(spec, k=int(ks[0]))), int(ks[0]), source
        return ks, str(spec), "per-sample", source
    return (
        np.full(n, default_k, dtype=np.int64),
        str(dataclasses.replace(spec, k=default_k)),
        default_k,
        k_source,
    )


def _at_level(inp: ScoringInput, level: int | None) -> ScoringInput:
    """``inp`` seen at a metric's own relevance level (``P(rel=2)@5``)."""
    if level is None:
        return inp
    items = Ranked(inp.items.table, float(level)) if inp.items is not None else None
    return dataclasses.replace(inp, ranked=Ranked(inp.ranked.table, float(level)), items=items)


def score_metrics(
    metrics: Sequence[ResolvedMetric],
    inp: ScoringInput,
    *,
    default_k: int,
    sample_k: NDArray[np.int64] | None = None,
    trec_compat: bool = False,
    k_source: str = "the default",
) -> list[ScoredMetric]:
    """Compute every metric for every query.

    ``default_k`` is the caller's k (already resolved against config and the
    fallback), ``k_source`` says where it came from; ``sample_k`` holds each
    query's ``metadata.k`` or 0. With ``trec_compat`` queries without relevant
    items are scored (as trec_eval does) instead of skipped.
    """
    n = len(inp.query_ids)
    has_relevant = inp.ranked.n_rel > 0
    has_answer = (
        np.array([bool(a) for a in inp.answers], dtype=bool)
        if inp.answers is not None
        else np.zeros(n, dtype=bool)
    )
    out: list[ScoredMetric] = []
    for metric in metrics:
        k, name, k_info, source = _resolve_k(metric.spec, sample_k, default_k, n, k_source)
        requested = metric.requested or metric.name
        definition = metric.definition
        if isinstance(definition.kernel, PerSample):
            scores = definition.kernel.fn(inp, k, metric.spec)
            counts: dict[str, int] = {}
            for reason in scores.reasons:
                if reason:
                    counts[reason] = counts.get(reason, 0) + 1
            out.append(
                ScoredMetric(
                    name,
                    requested,
                    scores.values,
                    scores.scored,
                    k_info,
                    max(counts, key=lambda r: counts[r]) if counts else "",
                    tuple(scores.reasons),
                    definition.percentile,
                    k_source=source,
                )
            )
            continue
        if definition.needs == "answer":
            scorable, reason = has_answer, "no expected answer"
        elif trec_compat:
            scorable, reason = np.ones(n, dtype=bool), ""
        else:
            scorable, reason = has_relevant, "no relevant item in the ground truth"
        seen = _at_level(inp, metric.spec.rel)
        if metric.spec.rel is not None and not trec_compat and definition.needs == "relevant":
            scorable = seen.ranked.n_rel > 0
        if isinstance(definition.kernel, WithParam):
            values = definition.kernel.fn(seen.ranked, k, float(metric.spec.param or 0.0))
        else:
            values = definition.kernel(seen, k)
        out.append(
            ScoredMetric(
                name,
                requested,
                values,
                scorable,
                k_info,
                reason,
                aggregate=definition.aggregate,
                k_source=source,
            )
        )
    return out
