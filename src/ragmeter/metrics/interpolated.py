"""Interpolated precision at recall levels, precision at multiples of R, and the 11-point average.

trec_eval's ``iprec_at_recall``, ``Rprec_mult`` and ``11pt_avg``, with its arithmetic: a
recall level ``p`` becomes the rank of the ``lround(p * R)``-th relevant item (trec_eval
10.0; 9.x added 0.9 and truncated), and a multiple ``m`` of R becomes the cutoff
``(long)(m * R + 0.9)``. Interpolated precision at a relevant item is the best precision
at that rank or any later one.

Relevant {a, b}; ranking [a, x, b] (R = 2):

>>> from ragmeter.metrics.relevance import RelevanceTable, Ranked
>>> r = Ranked(RelevanceTable.from_lists(["q"], [[1, 0, 1]], [[1, 1]]))
>>> iprec_at_recall(r, None, 0.5).item(), round(iprec_at_recall(r, None, 1.0).item(), 4)
(1.0, 0.6667)
>>> rprec_mult(r, None, 1.0).item()      # precision at (long)(1.0 * 2 + 0.9) = 2
0.5
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragmeter.metrics.relevance import FloatArray, Int64Array, Ranked

C_NAN = float(np.copysign(np.nan, -1.0))
"""``0.0 / 0.0`` in C on x86-64: a NaN with its sign bit set (printed ``-nan``)."""


def lround(x: FloatArray) -> Int64Array:
    """C's ``lround``: to the nearest whole number, halves away from zero.

    >>> lround(np.array([0.5, 1.5, 2.4999999999999996, -0.5])).tolist()
    [1, 2, 2, -1]
    """
    whole = np.trunc(x)
    frac = x - whole
    out: Int64Array = (whole + np.where(frac >= 0.5, 1.0, np.where(frac <= -0.5, -1.0, 0.0))).astype(np.int64)
    return out


def best_precision_from(r: Ranked, k: Int64Array | None = None) -> FloatArray:
    """Per relevant item (:attr:`Ranked.rel_at`): the best precision at its rank or any later one.

    Only relevant ranks need looking at (precision falls between them). Items beyond ``k``
    are left out (their value is 0).
    """
    q, pos, count = r.rel_query, r.rel_pos, r.rel_count
    precision = count / (pos + 1.0)
    if k is not None:
        precision = np.where(pos < k[q], precision, 0.0)
    width = int(count.max(initial=0))
    grid = np.zeros((r.n_queries, width), dtype=np.float64)
    grid[q, count - 1] = precision
    best = np.maximum.accumulate(grid[:, ::-1], axis=1)[:, ::-1]
    out: FloatArray = best[q, count - 1]
    return out


def _at_count(r: Ranked, per_item: FloatArray, wanted: Int64Array) -> FloatArray:
    """Per query: ``per_item`` at the ``wanted``-th relevant item returned (0 where there is none)."""
    q, count = r.rel_query, r.rel_count
    width = int(count.max(initial=0))
    grid = np.zeros((r.n_queries, width + 1), dtype=np.float64)
    grid[q, count] = per_item
    inside = (wanted >= 1) & (wanted <= width)
    out = np.zeros(r.n_queries, dtype=np.float64)
    rows = np.flatnonzero(inside)
    out[rows] = grid[rows, wanted[rows]]
    return out


def iprec_at_recall(r: Ranked, k: Int64Array | None, recall: float) -> FloatArray:
    """Interpolated precision at a recall level.

    The best precision from the rank of the ``lround(recall * R)``-th relevant item on
    (recall 0: from the first rank).
    """
    return interpolated_at(r, [recall], k)[0]


def interpolated_at(
    r: Ranked, levels: Sequence[float], k: Int64Array | None = None, *, empty: float = 0.0
) -> list[FloatArray]:
    """:func:`iprec_at_recall` at several recall levels, walked as trec_eval walks them.

    An empty ranking gets ``empty`` where trec_eval divides 0 by 0 (:data:`C_NAN` there).

    trec_eval walks the levels from the last to the first, each taking its value when the
    count of relevant items seen (counting down) reaches its cutoff; a level whose cutoff is
    out of that order (possible only in ``11pt_avg``'s own list) takes the best precision of
    all, as trec_eval's walk gives it.
    """
    n = r.n_queries
    found = r.rel_in_top(k)
    best = best_precision_from(r, k)
    overall = _at_count(r, best, np.ones(n, dtype=np.int64))
    overall[r.lengths == 0] = empty
    values = [np.zeros(n, dtype=np.float64) for _ in levels]
    cutoffs = [lround(level * r.n_rel.astype(np.float64)) for level in levels]
    limit = found.copy()  # the count the next level may match: it must not exceed this
    skipping = np.ones(n, dtype=bool)  # still in trec_eval's first skip (cutoffs above num_rel_ret)
    stuck = np.zeros(n, dtype=bool)  # the walk stopped: the rest take the best precision of all
    for j in range(len(levels) - 1, -1, -1):
        cut = cutoffs[j]
        skip = skipping & (cut > found)
        skipping &= skip
        live = ~skip & ~stuck
        match = live & (cut >= 1) & (cut <= limit)
        values[j] = np.where(match, _at_count(r, best, cut), values[j])
        limit = np.where(match, cut, limit)
        stuck |= live & ~match
        values[j] = np.where(stuck, overall, values[j])
    return values


def rprec_mult(r: Ranked, k: Int64Array | None, multiple: float) -> FloatArray:
    """Precision at ``(long)(multiple * R + 0.9)`` (0 for a cutoff of 0): trec_eval's Rprec_mult."""
    cut = (multiple * r.n_rel.astype(np.float64) + 0.9).astype(np.int64)
    if k is not None:
        cut = np.minimum(cut, k)
    found = r.rel_in_top(cut).astype(np.float64)
    return np.divide(found, cut.astype(np.float64), out=np.zeros(r.n_queries), where=cut > 0)


def eleven_point_average(r: Ranked, levels: Sequence[float]) -> FloatArray:
    """Mean of the interpolated precision at ``levels`` (default 0, 0.1, …, 1): trec_eval's 11pt_avg."""
    total = np.zeros(r.n_queries, dtype=np.float64)
    for value in reversed(interpolated_at(r, levels, empty=C_NAN)):
        total += value
    return total / float(len(levels))
