"""Scores of the fast path: gains per cluster and every series of every trace, from the dedup arrays.

A cluster's gain is the first gain its members carry, in result order (as
:func:`ragmeter.agentic.gains.resolve_gains` takes it without labels or a labeller); the series
of each trace come from the reference kernel :func:`ragmeter.agentic.metrics.iteration_series`,
fed with the gains of each iteration's new clusters. Traces scored here have no labels and no
known good results (those go to the reference).
"""

from __future__ import annotations

import numpy as np

from ragmeter.agentic.columnar_keys import RunKeys
from ragmeter.agentic.columnar_read import NativeColumns
from ragmeter.agentic.gains import NO_GAIN
from ragmeter.agentic.metrics import SERIES_NAMES, Value, iteration_series, iterations_for_all_good
from ragmeter.agentic.scoring import MAX_UNSCORED_LISTED, TraceScore, UnscoredResult
from ragmeter.dedup.vector_dedup import MATCH_CODES, CodedOutcome, first_positions

_KIND_NAMES = [MATCH_CODES[code] for code in sorted(MATCH_CODES)]


def fast_scores(
    cols: NativeColumns,
    keys: RunKeys,
    outcome: CodedOutcome,
    traces: list[int],
    *,
    good_threshold: float,
) -> dict[int, TraceScore]:
    """The score of each trace in ``traces`` (indices into ``cols``), keyed by that index."""
    cluster = outcome.cluster
    n_clusters = int(cluster.max()) + 1 if len(cluster) else 0
    roots = np.flatnonzero(outcome.match == 0)
    result_trace = keys.coded.trace
    cluster_trace = result_trace[roots]
    cluster_iteration = np.frombuffer(cols.iteration, np.int32)[roots]

    gain = np.frombuffer(cols.gain, np.float64)
    with_gain = np.flatnonzero(~np.isnan(gain))
    cluster_gain = np.full(n_clusters, np.nan)
    first_at = with_gain[first_positions(cluster[with_gain])]
    cluster_gain[cluster[first_at]] = gain[first_at]
    other = with_gain[gain[with_gain] != cluster_gain[cluster[with_gain]]]
    n_traces = len(cols.trace_ids)
    copies_other = np.bincount(result_trace[other], minlength=n_traces).tolist()

    scored = ~np.isnan(cluster_gain)
    good = cluster_gain >= good_threshold
    unscored_per_trace = np.bincount(cluster_trace[~scored], minlength=n_traces).tolist()
    scored_per_trace = np.bincount(cluster_trace[scored], minlength=n_traces).tolist()
    last_good = np.zeros(n_traces, np.int64)
    np.maximum.at(last_good, cluster_trace[good], cluster_iteration[good])
    last_good_list = last_good.tolist()
    kinds = np.bincount(result_trace * 5 + outcome.match, minlength=5 * n_traces).reshape(n_traces, 5)[:, 1:]
    kinds_list = kinds.tolist()
    cluster_starts = np.searchsorted(cluster_trace, np.arange(n_traces + 1)).tolist()
    gains_list: list[float | None] = [None if g != g else g for g in cluster_gain.tolist()]
    iteration_list = cluster_iteration.tolist()
    roots_list = roots.tolist()

    out: dict[int, TraceScore] = {}
    for t in traces:
        start, end = cluster_starts[t], cluster_starts[t + 1]
        sizes = cols.iteration_sizes[t]
        new_gains: list[list[float | None]] = [[] for _ in sizes]
        for c in range(start, end):
            new_gains[iteration_list[c] - 1].append(gains_list[c])
        series = iteration_series(sizes, new_gains, good_threshold=good_threshold)
        n_unscored = unscored_per_trace[t]
        value: int | None
        why: str | None
        if n_unscored:
            value, why = None, "unscored gains"
        else:
            value, why = iterations_for_all_good([last_good_list[t]] if last_good_list[t] else [])
        unscored: list[UnscoredResult] = []
        if n_unscored:
            unscored = [
                UnscoredResult.model_construct(
                    key=keys.name(roots_list[c]), iteration=iteration_list[c], reason=NO_GAIN
                )
                for c in range(start, end)
                if gains_list[c] is None
            ][:MAX_UNSCORED_LISTED]
        counts = {"trace": scored_per_trace[t], "none": n_unscored}
        order = ("none", "trace") if start < end and gains_list[start] is None else ("trace", "none")
        sources = {k: counts[k] for k in order if counts[k]}
        out[t] = _score(cols, t, series, (value, why), kinds_list[t], unscored, n_unscored, sources)
        out[t].copies_with_other_gain = copies_other[t]
    return out


def _score(
    cols: NativeColumns,
    t: int,
    series: dict[str, list[Value]],
    all_good: tuple[int | None, str | None],
    kinds: list[int],
    unscored: list[UnscoredResult],
    n_unscored: int,
    sources: dict[str, int],
) -> TraceScore:
    return TraceScore.model_construct(
        trace_id=cols.trace_ids[t],
        where=cols.wheres[t],
        status="scored",
        reason=None,
        n_iterations=len(cols.iteration_sizes[t]),
        series=series,
        at_n={name: series[name][-1] for name in SERIES_NAMES},
        iterations_for_all_good=all_good[0],
        iterations_for_all_good_reason=all_good[1],
        good_results_known=False,
        duplicates_by_key=dict(zip(_KIND_NAMES, kinds, strict=True)),
        n_unscored=n_unscored,
        unscored=unscored,
        gain_sources=sources,
        copies_with_other_gain=0,
        unmatched_labels=0,
        dropped_iterations=cols.dropped_iterations[t],
        earlier_turns=cols.earlier_turns[t],
        details=None,
    )
