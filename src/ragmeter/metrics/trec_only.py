"""trec_eval 10.0's measures that only ``ragmeter trec_eval`` prints: one kernel each.

relative_P, utility, binG, G, ndcg / dcg / ideal_dcg with gain parameters, ndcg_rel, Rndcg,
set_relative_P, set_map, rbp and rbp_resid. Each follows its ``m_*.c`` file, down to the
order of floating-point operations, over all queries at once; running sums within a query
are taken in rank order (:func:`row_cumsum`), as trec_eval's loops take them.

>>> from ragmeter.metrics.relevance import RelevanceTable, Ranked
>>> r = Ranked(RelevanceTable.from_lists(["q"], [[0, 1, 1]], [[1, 1, 1]], [[True, True, True]]))
>>> relative_p(r, 2).item(), set_map(r).item()     # 1 of min(2, R=3); (2 * 2) / (3 * 3)
(0.5, 0.4444444444444444)
>>> utility(r, (1.0, -1.0, 0.0, 0.0), 0).item()   # 2 relevant retrieved - 1 other
1.0
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter.metrics.relevance import FloatArray, Int64Array, Ranked, log2_ranks
from ragmeter.metrics.trec_gains import TrecGains, levels_of

_ROWS: weakref.WeakKeyDictionary[Ranked, tuple[Int64Array, Int64Array]] = weakref.WeakKeyDictionary()


def _rows(r: Ranked) -> tuple[Int64Array, Int64Array]:
    """Query index and 0-based rank of every ranked item (computed once per ranking)."""
    cached = _ROWS.get(r)
    if cached is None:
        lengths = r.lengths
        q = np.repeat(np.arange(r.n_queries, dtype=np.int64), lengths)
        pos = np.arange(len(r.table.gains), dtype=np.int64) - np.repeat(r.table.offsets[:-1], lengths)
        cached = _ROWS[r] = (q, pos)
    return cached


@dataclass(frozen=True)
class _Hits:
    """The ranked items whose gain is not 0 (the only ones a DCG sum adds), in rank order."""

    flat: Int64Array
    q: Int64Array
    pos: Int64Array
    gain: FloatArray
    offsets: Int64Array
    """CSR offsets of the hits per query."""

    @classmethod
    def of(cls, r: Ranked, gains: TrecGains) -> _Hits:
        if gains.pairs:
            dense = gains.ranked
            flat = np.flatnonzero(dense != 0)
            gain = dense[flat]
        else:  # default gains: a judged level above 0 is its own gain
            flat = r.gain_at
            gain = r.table.gains[flat]
        q = np.searchsorted(r.table.offsets, flat, side="right") - 1
        offsets = np.zeros(r.n_queries + 1, dtype=np.int64)
        np.cumsum(np.bincount(q, minlength=r.n_queries), out=offsets[1:])
        return cls(flat, q, flat - r.table.offsets[q], gain, offsets)

    def last(self, values: FloatArray) -> FloatArray:
        """Per query: ``values`` at its last hit (0 without hits)."""
        return _take(values, self.offsets[1:] - 1, np.diff(self.offsets) > 0)


def row_cumsum(values: FloatArray, offsets: Int64Array) -> FloatArray:
    """Running sums within each CSR row, added left to right (the same bits as a C loop).

    >>> row_cumsum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 2, 4])).tolist()
    [1.0, 3.0, 3.0, 7.0]
    """
    lengths = np.diff(offsets)
    n, width = len(lengths), int(lengths.max(initial=0))
    if n == 0 or width == 0:
        return np.zeros(len(values), dtype=np.float64)
    if bool(np.all(lengths == width)):  # rows of one length (a full-depth run): no copy into a grid
        out_rows: FloatArray = np.cumsum(values.reshape(n, width), axis=1).reshape(-1)
        return out_rows
    pos = np.arange(len(values), dtype=np.int64) - np.repeat(offsets[:-1], lengths)
    q = np.repeat(np.arange(n, dtype=np.int64), lengths)
    grid = np.zeros((n, width), dtype=np.float64)
    grid[q, pos] = values
    np.cumsum(grid, axis=1, out=grid)
    out: FloatArray = grid[q, pos]
    return out


def _take(values: FloatArray, at: Int64Array, ok: np.ndarray) -> FloatArray:
    """``values[at]`` where ``ok``, else 0 (``at`` may point anywhere where not ``ok``)."""
    if len(values) == 0:
        return np.zeros(len(at), dtype=np.float64)
    return np.where(ok, values[np.clip(at, 0, len(values) - 1)], 0.0)


def _per_query(r: Ranked, q: Int64Array, weights: FloatArray) -> FloatArray:
    return np.bincount(q, weights=weights, minlength=r.n_queries).astype(np.float64)


def relative_p(r: Ranked, cutoff: int) -> FloatArray:
    """Relevant in the top k over min(k, R) (0 when R = 0): relative_P_k."""
    n_rel = r.n_rel
    found = r.rel_in_top(np.full(r.n_queries, cutoff, dtype=np.int64)).astype(np.float64)
    den = np.minimum(n_rel, cutoff).astype(np.float64)
    return np.divide(found, den, out=np.zeros(r.n_queries), where=n_rel > 0)


def set_relative_p(r: Ranked) -> FloatArray:
    """Relevant returned over min(returned, R): set_relative_P."""
    found = r.rel_in_top(None).astype(np.float64)
    den = np.minimum(r.lengths, r.n_rel).astype(np.float64)
    return np.divide(found, den, out=np.zeros(r.n_queries), where=den > 0)


def set_map(r: Ranked) -> FloatArray:
    """``(relevant returned)^2 / (returned * R)``: set_map."""
    found = r.rel_in_top(None).astype(np.float64)
    den = r.lengths.astype(np.float64) * r.n_rel.astype(np.float64)
    return np.divide(found * found, den, out=np.zeros(r.n_queries), where=den > 0)


def utility(r: Ranked, coefficients: Sequence[float], n_docs: int) -> FloatArray:
    """``a·rel_ret + b·(ret - rel_ret) + c·(R - rel_ret) + d·(N + rel_ret - ret - R)``: utility.

    ``N`` is the number of documents in the collection (trec_eval's ``-N``).
    """
    a, b, c, d = coefficients
    found = r.rel_in_top(None)
    ret, n_rel = r.lengths, r.n_rel
    return (
        a * found.astype(np.float64)
        + b * (ret - found).astype(np.float64)
        + c * (n_rel - found).astype(np.float64)
        + d * (n_docs + found - ret - n_rel).astype(np.float64)
    )


def bin_g(r: Ranked) -> FloatArray:
    """Σ over relevant returned of ``1 / log2(2 + non-relevant above)``, over R: binG."""
    q, pos, count = r.rel_query, r.rel_pos, r.rel_count
    terms = 1.0 / log2_ranks(int(r.lengths.max(initial=0)) + 1)[pos - count + 1]
    total = _per_query(r, q, terms)
    den = r.n_rel.astype(np.float64)
    return np.divide(total, den, out=np.zeros(r.n_queries), where=np.bincount(q, minlength=r.n_queries) > 0)


def _dcg_parts(r: Ranked, gains: TrecGains) -> tuple[_Hits, FloatArray, FloatArray, FloatArray]:
    """The hits and their gain / log2(rank + 1), the same per ideal position, and the ideal DCG.

    The ideal DCG is summed per query in rank order.
    """
    hits = _Hits.of(r, gains)
    width = max(int(hits.pos.max(initial=0)) + 1, int(np.diff(gains.ideal_offsets).max(initial=0)))
    log2 = log2_ranks(width)
    iq, ipos = gains.ideal_positions()
    ideal = gains.ideal / log2[ipos]
    return hits, hits.gain / log2[hits.pos], ideal, _per_query(r, iq, ideal)


def ndcg_gains(r: Ranked, pairs: Sequence[tuple[str, float]], what: str = "ndcg") -> FloatArray:
    """Ndcg (or dcg, ideal_dcg) over the whole ranking with trec_eval's gain parameters."""
    hits, ranked, _, idcg = _dcg_parts(r, TrecGains(r, pairs))
    dcg = _per_query(r, hits.q, ranked)
    if what == "dcg":
        return dcg
    if what == "ideal_dcg":
        return idcg
    return np.divide(dcg, idcg, out=np.zeros(r.n_queries), where=idcg > 0)


def ndcg_rel(r: Ranked, pairs: Sequence[tuple[str, float]]) -> FloatArray:
    """NDCG averaged over the ranks of the relevant items (gain > 0): ndcg_rel."""
    gains = TrecGains(r, pairs)
    hits, ranked, ideal, idcg = _dcg_parts(r, gains)
    dcg_at = row_cumsum(ranked, hits.offsets)
    ideal_at = row_cumsum(ideal, gains.ideal_offsets)
    n_ideal = np.diff(gains.ideal_offsets)
    q = hits.q
    # the ideal DCG at rank i stops growing once the ideal gains run out
    capped = np.minimum(hits.pos, n_ideal[q] - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        idcg_at = _take(ideal_at, gains.ideal_offsets[q] + capped, capped >= 0)
        positive = hits.gain > 0
        total = _per_query(r, q[positive], dcg_at[positive] / idcg_at[positive])
        n_positive = np.bincount(q[positive], minlength=r.n_queries)
        total = total + ((n_ideal - n_positive).astype(np.float64) * hits.last(dcg_at)) / idcg
        return np.where(total > 0.0, total / n_ideal.astype(np.float64), 0.0)


def r_ndcg(r: Ranked, pairs: Sequence[tuple[str, float]]) -> FloatArray:
    """NDCG averaged over the ranks where the ideal gain changes: Rndcg."""
    gains = TrecGains(r, pairs)
    hits, ranked, ideal, _ = _dcg_parts(r, gains)
    dcg_at = row_cumsum(ranked, hits.offsets)
    ideal_at = row_cumsum(ideal, gains.ideal_offsets)
    offsets = gains.ideal_offsets
    n_ideal = np.diff(offsets)
    iq, ipos = gains.ideal_positions()
    # boundaries b in 1..n_ideal: the ideal gain at b differs from the one at b - 1 (at
    # b = n_ideal it runs out); each adds nDCG over the ranks before b
    following = np.append(gains.ideal[1:], 0.0)
    changes = (ipos + 1 == n_ideal[iq]) | (following != gains.ideal)
    bq, before = iq[changes], ipos[changes]  # the rank before each boundary
    n_ret = r.lengths
    # the DCG through rank min(before, n_ret - 1): the running sum at the last hit up to there
    through = r.table.offsets[bq] + np.minimum(before, n_ret[bq] - 1)
    at = np.searchsorted(hits.flat, through, side="right") - 1
    dcg_before = _take(dcg_at, at, (n_ret[bq] > 0) & (at >= hits.offsets[bq]))
    idcg_before = ideal_at[offsets[bq] + before]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = dcg_before / idcg_before
        total = _per_query(r, bq, terms)
        count = np.bincount(bq, minlength=r.n_queries).astype(np.int64)
        # ranks left after the ideal ran out (not the very last one): one more term at the end
        tail = (n_ideal + 1 < n_ret) & (n_ideal > 0)
        full = _take(ideal_at, offsets[1:] - 1, n_ideal > 0)
        total = np.where(tail, total + hits.last(dcg_at) / full, total)
        count = count + tail
        value = total / count.astype(np.float64)
    return np.where(r.n_rel > 0, value, 0.0)


def g_measure(r: Ranked, pairs: Sequence[tuple[str, float]]) -> FloatArray:
    """trec_eval's G: gain over log2 of the cost so far, normalised by the ideal gain sum.

    The cost of rank i is the ideal gain there (at least 1); past the ideal ranking, 1.
    """
    gains = TrecGains(r, pairs)
    hits = _Hits.of(r, gains)
    offsets = gains.ideal_offsets
    n_ideal = np.diff(offsets)
    ideal_cost = row_cumsum(np.maximum(gains.ideal, 1.0), offsets)
    ideal_total = _take(ideal_cost, offsets[1:] - 1, n_ideal > 0)
    if not bool(np.all(ideal_total == np.trunc(ideal_total))):
        return _g_dense(r, gains)  # adding 1.0 rank by rank past the ideal is exact only from a whole number
    q, pos = hits.q, hits.pos
    inside = pos < n_ideal[q]
    sum_cost = np.where(
        inside,
        _take(ideal_cost, offsets[q] + pos, inside),
        ideal_total[q] + (pos - n_ideal[q] + 1).astype(np.float64),
    )
    sum_results = row_cumsum(hits.gain, hits.offsets)
    return _g_value(r, gains, q, hits.gain, (2.0 + sum_cost) - sum_results)


def _g_dense(r: Ranked, gains: TrecGains) -> FloatArray:
    """G with the running cost summed rank by rank (for ideal gains that are not whole numbers)."""
    q, pos = _rows(r)
    n_ideal = np.diff(gains.ideal_offsets)
    ideal_here = np.zeros(len(pos), dtype=np.float64)
    inside = pos < n_ideal[q]
    ideal_here[inside] = gains.ideal[gains.ideal_offsets[q[inside]] + pos[inside]]
    sum_results = row_cumsum(gains.ranked, r.table.offsets)
    sum_cost = row_cumsum(np.maximum(ideal_here, 1.0), r.table.offsets)
    nonzero = gains.ranked != 0
    cost = (2.0 + sum_cost[nonzero]) - sum_results[nonzero]
    return _g_value(r, gains, q[nonzero], gains.ranked[nonzero], cost)


def _g_value(r: Ranked, gains: TrecGains, q: Int64Array, gain: FloatArray, cost: FloatArray) -> FloatArray:
    terms = gain / np.fromiter(map(math.log2, cost.tolist()), np.float64, len(cost))
    results_g = _per_query(r, q, terms)
    iq, _ = gains.ideal_positions()
    sum_ideal = _per_query(r, iq, gains.ideal)
    return np.divide(results_g, sum_ideal, out=np.zeros(r.n_queries), where=sum_ideal > 0.0)


def _powers(p: float, n: int) -> FloatArray:
    """``1, p, p*p, …`` (n + 1 values), each the one before times p, as trec_eval multiplies."""
    out = np.empty(n + 1, dtype=np.float64)
    out[0] = 1.0
    if n:
        out[1:] = np.multiply.accumulate(np.full(n, p))
    return out


def rbp_p(pairs: Sequence[tuple[str, float]], default: float = 0.9) -> float:
    """The persistence ``p`` among the parameters (the last ``p=`` wins, as in trec_eval)."""
    p = default
    for name, value in pairs:
        if name == "p":
            p = value
    return p


def rbp(r: Ranked, pairs: Sequence[tuple[str, float]]) -> FloatArray:
    """Rank-biased precision ``(1 - p) Σ g_i p^(i-1)``, gains scaled into [0, 1] when outside it."""
    p = rbp_p(pairs)
    gains = TrecGains(r, pairs)
    low, high = gains.bounds()
    powers = _powers(p, int(r.lengths.max(initial=0)))
    if not gains.pairs:  # levels 0..n-1 as gains: scaling keeps a gain of 0 at 0, so only hits count
        hits = _Hits.of(r, gains)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = high[hits.q] > 1
            gain = np.where(scale, (hits.gain - low[hits.q]) / (high[hits.q] - low[hits.q]), hits.gain)
        return (1.0 - p) * _per_query(r, hits.q, gain * powers[hits.pos])
    q, pos = _rows(r)
    ranked = gains.ranked
    scale = (low < 0) | (high > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(scale[q], (ranked - low[q]) / (high[q] - low[q]), ranked)
    # trec_eval scales its gain table, and looks a level's gain up there: a level without a
    # table entry (absent, or unjudged) keeps gain 0
    scaled = np.where(_in_table(r, gains), scaled, 0.0)
    nonzero = scaled != 0
    total = _per_query(r, q[nonzero], scaled[nonzero] * powers[pos[nonzero]])
    return (1.0 - p) * total


def _in_table(r: Ranked, gains: TrecGains) -> np.ndarray:
    """Whether each ranked item's level has an entry in trec_eval's gain table."""
    levels = levels_of(r)
    named = (
        np.isin(levels, [level for level, _ in gains.pairs]) if gains.pairs else np.zeros(len(levels), bool)
    )
    return named | (levels >= 0)


def rbp_resid(r: Ranked, pairs: Sequence[tuple[str, float]]) -> FloatArray:
    """The RBP residual: what unjudged items could add, ``p^n + (1 - p) Σ_unjudged p^(i-1)``."""
    p = rbp_p(pairs)
    q, pos = _rows(r)
    powers = _powers(p, int(r.lengths.max(initial=0)))
    unjudged = levels_of(r) < 0
    total = _per_query(r, q[unjudged], powers[pos[unjudged]])
    any_unjudged = np.bincount(q[unjudged], minlength=r.n_queries) > 0
    return np.where(any_unjudged, powers[r.lengths] + (1 - p) * total, 0.0)
