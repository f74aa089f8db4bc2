"""Scoring one trace: dedup outcome + cluster gains → per-iteration series and final values."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ragmeter.agentic.clusters import Clusters
from ragmeter.agentic.gains import TraceGains
from ragmeter.agentic.metrics import (
    GOOD_THRESHOLD,
    SERIES_NAMES,
    Value,
    iteration_series,
    iterations_for_all_good,
)
from ragmeter.agentic.prepare import PreparedTrace, TraceStatus
from ragmeter.dedup.keys import KeyMaker
from ragmeter.dedup.two_phase import MATCH_KINDS

MAX_UNSCORED_LISTED = 20
"""How many unscored results a trace lists by key (all are counted)."""


class UnscoredResult(BaseModel):
    """A unique result without a gain: its key, first iteration and the reason."""

    key: str
    iteration: int
    reason: str


class ResultDetail(BaseModel):
    """How one result was deduplicated (``--details``)."""

    iteration: int
    path: str
    cluster: str
    duplicate_of: str | None = Field(description="the cluster key when this result is a duplicate")
    matched_by: str | None
    gain: float | None


class TraceScore(BaseModel):
    """Every metric of one trace at each search iteration, and at i = N."""

    trace_id: str
    where: str
    status: TraceStatus
    reason: str | None = None
    n_iterations: int = 0
    series: dict[str, list[Value]] = Field(default_factory=dict)
    at_n: dict[str, Value] = Field(default_factory=dict)
    iterations_for_all_good: int | None = None
    iterations_for_all_good_reason: str | None = None
    good_results_known: bool = False
    duplicates_by_key: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(map(str, MATCH_KINDS), 0))
    n_unscored: int = 0
    unscored: list[UnscoredResult] = Field(default_factory=list)
    gain_sources: dict[str, int] = Field(default_factory=dict)
    copies_with_other_gain: int = 0
    unmatched_labels: int = 0
    dropped_iterations: int = 0
    earlier_turns: int = 0
    details: list[ResultDetail] | None = None


def unscorable(prepared: PreparedTrace) -> TraceScore:
    """The score of a trace whose results were not captured or that never searched."""
    return TraceScore(
        trace_id=prepared.trace_id,
        where=prepared.where,
        status=prepared.status,
        reason=prepared.reason,
        dropped_iterations=prepared.dropped_iterations,
        earlier_turns=prepared.earlier_turns,
    )


def _first_iterations_of_known(
    prepared: PreparedTrace, clusters: Clusters, keys: KeyMaker
) -> list[int | None]:
    found: list[int | None] = []
    for ref in prepared.good_results or ():
        names = []
        if ref.domain_id is not None:
            names.append("domain:" + ref.domain_id)
        if ref.id is not None:
            names.append("id:" + ref.id)
        url = keys.url_key(ref.url) if ref.url is not None else None
        if url is not None:
            names.append("url:" + url)
        hits = [clusters.index[n] for n in names if n in clusters.index]
        found.append(
            min(prepared.results[clusters.outcome.first[c]].iteration for c in hits) if hits else None
        )
    return found


def score_trace(
    prepared: PreparedTrace,
    clusters: Clusters,
    gains: TraceGains,
    *,
    good_threshold: float = GOOD_THRESHOLD,
    keys: KeyMaker | None = None,
    details: bool = False,
) -> TraceScore:
    """Score a trace whose results were captured (``prepared.status == "scored"``).

    >>> from ragmeter.agentic.trace import Trace
    >>> from ragmeter.agentic.prepare import prepare_trace
    >>> from ragmeter.agentic.clusters import cluster_trace
    >>> from ragmeter.agentic.gains import resolve_gains
    >>> from ragmeter.dedup import KeyMaker
    >>> t = Trace.model_validate({"trace_id": "t", "turns": [{"iterations": [
    ...     {"searches": [{"results": [{"id": "a", "gain": 3}, {"id": "b", "gain": 0}]}]},
    ...     {"searches": [{"results": [{"id": "a", "gain": 4}, {"id": "c", "gain": 2}]}]}]}]})
    >>> p = prepare_trace(t, where="-", keys=KeyMaker())
    >>> c = cluster_trace(p)
    >>> s = score_trace(p, c, resolve_gains(p, c))
    >>> s.series["CG"], s.at_n["SRR"], s.iterations_for_all_good
    ([3.0, 5.0], 0.25, 2)
    """
    if prepared.status != "scored":
        return unscorable(prepared)
    outcome = clusters.outcome
    first_iteration = [prepared.results[i].iteration for i in outcome.first]
    new_gains: list[list[float | None]] = [[] for _ in prepared.iteration_sizes]
    for cluster, iteration in enumerate(first_iteration):
        new_gains[iteration - 1].append(gains.gains[cluster].gain)
    series = iteration_series(prepared.iteration_sizes, new_gains, good_threshold=good_threshold)

    unscored_clusters = [c for c, g in enumerate(gains.gains) if g.gain is None]
    unscored = [
        UnscoredResult(
            key=clusters.keys[c], iteration=first_iteration[c], reason=gains.gains[c].reason or "unscored"
        )
        for c in unscored_clusters[:MAX_UNSCORED_LISTED]
    ]
    if prepared.good_results is not None:
        value, why = iterations_for_all_good(
            _first_iterations_of_known(prepared, clusters, keys or KeyMaker())
        )
    elif unscored_clusters:
        value, why = None, "unscored gains"
    else:
        good = [
            first_iteration[c]
            for c, g in enumerate(gains.gains)
            if g.gain is not None and g.gain >= good_threshold
        ]
        value, why = iterations_for_all_good(good)

    sources: dict[str, int] = {}
    for g in gains.gains:
        sources[g.source] = sources.get(g.source, 0) + 1
    detail_rows = None
    if details:
        detail_rows = [
            ResultDetail(
                iteration=r.iteration,
                path=r.path,
                cluster=clusters.keys[outcome.cluster[i]],
                duplicate_of=clusters.keys[outcome.cluster[i]] if outcome.match[i] is not None else None,
                matched_by=None if outcome.match[i] is None else str(outcome.match[i]),
                gain=r.gain,
            )
            for i, r in enumerate(prepared.results)
        ]
    return TraceScore(
        trace_id=prepared.trace_id,
        where=prepared.where,
        status="scored",
        n_iterations=prepared.n_iterations,
        series=series,
        at_n={name: series[name][-1] for name in SERIES_NAMES},
        iterations_for_all_good=value,
        iterations_for_all_good_reason=why,
        good_results_known=prepared.good_results is not None,
        duplicates_by_key=outcome.duplicates_by_kind(),
        n_unscored=len(unscored_clusters),
        unscored=unscored,
        gain_sources=sources,
        copies_with_other_gain=gains.copies_with_other_gain,
        unmatched_labels=len(gains.unmatched_labels),
        dropped_iterations=prepared.dropped_iterations,
        earlier_turns=prepared.earlier_turns,
        details=detail_rows,
    )
