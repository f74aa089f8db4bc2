"""Scores of the fast path: gains per cluster and every series of every trace, from the dedup arrays.

A cluster's gain is the first gain its members carry, in result order (as
:func:`ragmeter.agentic.gains.resolve_gains` takes it without labels or a labeller); the series
of all traces come from :func:`series_table`, the reference kernel
:func:`ragmeter.agentic.metrics.iteration_series` over a table of traces × iterations (the same
operations in the same order, so the same floats). Traces scored here have no labels and no
known good results (those go to the reference).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter.agentic.columnar_keys import RunKeys
from ragmeter.agentic.columnar_read import NativeColumns
from ragmeter.agentic.gains import NO_GAIN
from ragmeter.agentic.metrics import SERIES_NAMES, Value, discount, iterations_for_all_good
from ragmeter.agentic.scoring import MAX_UNSCORED_LISTED, TraceScore, UnscoredResult
from ragmeter.dedup.vector_dedup import MATCH_CODES, CodedOutcome, Ints, first_positions

Floats = npt.NDArray[np.float64]

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
    del with_gain, first_at, other  # a few MB each, per result

    scored = ~np.isnan(cluster_gain)
    good = cluster_gain >= good_threshold
    unscored_per_trace = np.bincount(cluster_trace[~scored], minlength=n_traces).tolist()
    scored_per_trace = np.bincount(cluster_trace[scored], minlength=n_traces).tolist()
    last_good = np.zeros(n_traces, np.int64)
    np.maximum.at(last_good, cluster_trace[good], cluster_iteration[good])
    last_good_list = last_good.tolist()
    kinds = np.bincount(result_trace * 5 + outcome.match, minlength=5 * n_traces).reshape(n_traces, 5)[:, 1:]
    kinds_list = kinds.tolist()
    starts = np.searchsorted(cluster_trace, np.arange(n_traces + 1))
    cluster_starts = starts.tolist()
    some = np.flatnonzero(starts[:-1] < starts[1:])
    first_unscored = np.zeros(n_traces, bool)  # the trace's first cluster has no gain
    first_unscored[some] = ~scored[starts[some]]
    first_unscored_list = first_unscored.tolist()

    row_of_trace = np.full(n_traces, -1, np.int64)
    row_of_trace[traces] = np.arange(len(traces))
    row_of_cluster = row_of_trace[cluster_trace]
    mine = np.flatnonzero(row_of_cluster >= 0)
    table = series_table(
        [cols.iteration_sizes[t] for t in traces],
        row_of_cluster[mine],
        cluster_iteration[mine],
        cluster_gain[mine],
        good_threshold=good_threshold,
    )

    out: dict[int, TraceScore] = {}
    for t, series in zip(traces, table, strict=True):
        start, end = cluster_starts[t], cluster_starts[t + 1]
        n_unscored = unscored_per_trace[t]
        value: int | None
        why: str | None
        if n_unscored:
            value, why = None, "unscored gains"
        else:
            value, why = iterations_for_all_good([last_good_list[t]] if last_good_list[t] else [])
        unscored: list[UnscoredResult] = []
        if n_unscored:
            listed = start + np.flatnonzero(~scored[start:end])[:MAX_UNSCORED_LISTED]
            unscored = [
                UnscoredResult.model_construct(
                    key=keys.name(int(roots[c])), iteration=int(cluster_iteration[c]), reason=NO_GAIN
                )
                for c in listed.tolist()
            ]
        counts = {"trace": scored_per_trace[t], "none": n_unscored}
        order = ("none", "trace") if first_unscored_list[t] else ("trace", "none")
        sources = {k: counts[k] for k in order if counts[k]}
        out[t] = _score(
            cols, t, series, (value, why), kinds_list[t], unscored, n_unscored, sources, copies_other[t]
        )
    return out


_NEED_ALL_SCORED = ("CG", "RG", "DCG", "DRG", "RAG", "DRAG", "SRE", "GR_cum")
_NEED_ITERATION_SCORED = ("AvgGain", "GR")


def series_table(
    sizes: Sequence[Sequence[int]],
    row: Ints,
    iteration: npt.NDArray[np.integer[Any]],
    gain: Floats,
    *,
    good_threshold: float,
) -> list[dict[str, list[Value]]]:
    """:func:`~ragmeter.agentic.metrics.iteration_series` of many traces at once, value for value.

    ``sizes[k]``: the results per iteration of trace ``k``; per new unique result, ``row`` is
    its trace (an index into ``sizes``), ``iteration`` its iteration (from 1) and ``gain`` its
    gain (NaN = unscored). Traces of equal length N form one table of N columns (no padding,
    however long one trace is); sums run in the kernel's order (``numpy.cumsum`` along a row
    adds one after the other). The good gains of one iteration, which the kernel adds with
    :func:`math.fsum`, are exact in any order when they are multiples of 2**-20 (gains are at
    most 4), and are otherwise added by :func:`math.fsum`.

    >>> table = series_table([[3, 2], [2]], np.array([0, 0, 0, 0, 1]), np.array([1, 1, 1, 2, 1]),
    ...                      np.array([3.0, 1.0, 2.0, 4.0, np.nan]), good_threshold=2.0)
    >>> table[0]["CG"], table[0]["SRR"], table[1]["CG"], table[1]["UR"]
    ([5.0, 9.0], [0.0, 0.2], [None], [1])
    """
    m = len(sizes)
    lengths = np.fromiter(map(len, sizes), np.int64, m)
    starts = np.cumsum(lengths) - lengths
    n_cells = int(lengths.sum())
    cell = starts[row] + iteration - 1  # (trace, iteration) cells, trace after trace
    good = gain >= good_threshold  # NaN is not

    def count(where: npt.NDArray[np.bool_] | slice) -> Ints:
        return np.bincount(cell[where], minlength=n_cells)

    cells = {
        "R": np.fromiter(itertools.chain.from_iterable(sizes), np.int64, n_cells),
        "UR": count(slice(None)),
        "GR": count(good),
        "unscored": count(np.isnan(gain)),
        "G": _exact_sums(cell[good], gain[good], n_cells),
    }
    table: list[dict[str, list[Value]]] = [{} for _ in range(m)]
    for n in np.unique(lengths).tolist():
        rows = np.flatnonzero(lengths == n)
        at = starts[rows][:, None] + np.arange(n)
        _fill(table, rows.tolist(), {name: values[at] for name, values in cells.items()}, good_threshold)
    return table


def _fill(
    table: list[dict[str, list[Value]]],
    rows: list[int],
    cells: dict[str, npt.NDArray[Any]],
    good_threshold: float,
) -> None:
    """The series of traces of one length (``cells``: traces × iterations), into ``table[row]`` for each row."""
    results, unique, good_count, g = cells["R"], cells["UR"], cells["GR"], cells["G"]
    depth = results.shape[1]
    w = np.array([discount(i) for i in range(1, depth + 1)])
    i = np.arange(1, depth + 1, dtype=np.float64)
    r_cum, gr_cum, dups = np.cumsum(results, axis=1), np.cumsum(good_count, axis=1), results - unique
    dup_cum = np.cumsum(dups, axis=1)
    avg = np.where(results > 0, g / np.maximum(results, 1), 0.0)
    cg, dcg = np.cumsum(g, axis=1), np.cumsum(w * g, axis=1)
    some_cum = np.maximum(r_cum, 1)
    columns: dict[str, Callable[[], npt.NDArray[Any]]] = {  # each made when its turn comes
        "CG": lambda: cg,
        "RG": lambda: cg / i,
        "DCG": lambda: dcg,
        "DRG": lambda: dcg / i,
        "AvgGain": lambda: avg,
        "RAG": lambda: np.cumsum(avg, axis=1) / i,
        "DRAG": lambda: np.cumsum(w * avg, axis=1) / i,
        "SRE": lambda: np.where(r_cum > 0, gr_cum / some_cum, 0.0),
        "SRR": lambda: np.where(r_cum > 0, dup_cum / some_cum, 0.0),
        "R": lambda: results,
        "UR": lambda: unique,
        "GR": lambda: good_count,
        "Dup": lambda: dups,
        "R_cum": lambda: r_cum,
        "UR_cum": lambda: np.cumsum(unique, axis=1),
        "GR_cum": lambda: gr_cum,
        "Dup_cum": lambda: dup_cum,
    }
    for name in SERIES_NAMES:  # one series at a time: few objects alive at once
        for r, values in zip(rows, columns[name]().tolist(), strict=True):
            table[r][name] = values
    iteration_scored = cells["unscored"] == 0
    all_scored = np.logical_and.accumulate(iteration_scored, axis=1)
    for k in np.flatnonzero(~iteration_scored.all(axis=1)).tolist():
        series = table[rows[k]]
        for j in range(depth):
            for names, ok in ((_NEED_ITERATION_SCORED, iteration_scored), (_NEED_ALL_SCORED, all_scored)):
                if not ok[k, j]:
                    for name in names:
                        series[name][j] = None


def _exact_sums(cell: Ints, values: Floats, n: int) -> Floats:
    """Per cell (``0 <= cell < n``), the sum of its values rounded once, as :func:`math.fsum` gives it."""
    sums: Floats = np.bincount(cell, weights=values, minlength=n).astype(
        np.float64, copy=False
    )  # int when empty
    scaled = values * 2.0**20
    inexact = np.unique(cell[scaled != np.floor(scaled)])
    if len(inexact):
        where = np.flatnonzero(np.isin(cell, inexact))
        where = where[np.argsort(cell[where], kind="stable")]
        cells, firsts = np.unique(cell[where], return_index=True)
        for c, part in zip(cells.tolist(), np.split(values[where], firsts[1:]), strict=True):
            sums[c] = math.fsum(part.tolist())
    return sums


def _score(
    cols: NativeColumns,
    t: int,
    series: dict[str, list[Value]],
    all_good: tuple[int | None, str | None],
    kinds: list[int],
    unscored: list[UnscoredResult],
    n_unscored: int,
    sources: dict[str, int],
    copies_with_other_gain: int,
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
        copies_with_other_gain=copies_with_other_gain,
        unmatched_labels=0,
        dropped_iterations=cols.dropped_iterations[t],
        earlier_turns=cols.earlier_turns[t],
        details=None,
    )
