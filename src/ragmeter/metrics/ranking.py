"""Vectorised ranking kernels: one small pure function per metric.

Each kernel takes a :class:`~ragmeter.metrics.relevance.Ranked` view and a
per-query cutoff array ``k`` (``None`` = no cutoff) and returns one float per
query. Kernels never sort: ranks were fixed at load time. They read only the
relevant (or gainful) items, so a 1,000-deep run costs what its hits cost. Which queries are
*scorable* (have a relevant item) is decided by the registry, not here.

The seed worked example: relevant {doc-3, doc-9}, ranking
[doc-7, doc-3, doc-1, doc-9, doc-2], k = 5.

>>> from ragmeter.metrics.relevance import RelevanceTable, Ranked
>>> r = Ranked(RelevanceTable.from_lists(["q"], [[0, 1, 0, 1, 0]], [[1, 1]]))
>>> k = np.array([5])
>>> hit(r, k).item(), recall(r, k).item(), reciprocal_rank(r, None).item()
(1.0, 1.0, 0.5)
>>> round(ndcg(r, k).item(), 4)
0.6509
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmeter.metrics.relevance import FloatArray, Int64Array, Ranked, log2_ranks


def _safe_div(num: FloatArray, den: FloatArray | Int64Array) -> FloatArray:
    den_f = np.asarray(den, dtype=np.float64)
    return np.divide(num, den_f, out=np.zeros_like(num, dtype=np.float64), where=den_f > 0)


def _sum_within(
    r: Ranked, q: Int64Array, pos: Int64Array, weights: NDArray[np.floating[Any]], k: Int64Array | None
) -> FloatArray:
    """Per-query sum of ``weights`` of the sparse items (query ``q``, rank ``pos``) within the top ``k``."""
    if k is not None:
        within = pos < k[q]
        q, weights = q[within], weights[within]
    return np.bincount(q, weights=weights, minlength=r.n_queries).astype(np.float64)


def hit(r: Ranked, k: Int64Array | None) -> FloatArray:
    """1 if any relevant item is in the top k, else 0."""
    return (r.rel_in_top(k) > 0).astype(np.float64)


def recall(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Relevant items in the top k divided by all relevant items."""
    return _safe_div(r.rel_in_top(k).astype(np.float64), r.n_rel)


def precision(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Relevant items in the top k divided by k (even when fewer than k were returned)."""
    den = r.lengths if k is None else k
    return _safe_div(r.rel_in_top(k).astype(np.float64), den)


def reciprocal_rank(r: Ranked, k: Int64Array | None) -> FloatArray:
    """1 / rank of the first relevant item (0 if none, or none within k)."""
    first = r.first_rel_pos
    found = first >= 0 if k is None else (first >= 0) & (first < k)
    return np.where(found, 1.0 / np.maximum(first + 1.0, 1.0), 0.0)


def average_precision(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Sum of precision at each relevant rank (within k) divided by the number of relevant items."""
    pos = r.rel_pos
    total = _sum_within(r, r.rel_query, pos, r.rel_count / (pos + 1.0), k)
    return _safe_div(total, r.n_rel)


def r_precision(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Precision at rank R, where R is the number of relevant items."""
    return _safe_div(r.rel_in_top(r.n_rel).astype(np.float64), r.n_rel)


def _dcg(r: Ranked, k: Int64Array | None) -> FloatArray:
    pos = r.gain_pos
    log2 = log2_ranks(int(r.lengths.max(initial=0)))
    return _sum_within(r, r.gain_query, pos, r.table.gains[r.gain_at] / log2[pos], k)


def _idcg(r: Ranked, k: Int64Array | None) -> FloatArray:
    table = r.table
    lengths = np.diff(table.ideal_offsets)
    qidx = np.repeat(np.arange(r.n_queries, dtype=np.int64), lengths)
    pos = np.arange(len(table.ideal_gains), dtype=np.int64) - np.repeat(table.ideal_offsets[:-1], lengths)
    log2 = log2_ranks(int(lengths.max(initial=0)))
    weights = table.ideal_gains / log2[pos]
    if k is not None:
        weights = np.where(pos < k[qidx], weights, 0.0)
    return np.bincount(qidx, weights=weights, minlength=r.n_queries).astype(np.float64)


def ndcg(r: Ranked, k: Int64Array | None) -> FloatArray:
    """DCG@k / IDCG@k with linear gains and 1/log2(rank+1); IDCG from all ground truth; 0 if IDCG = 0."""
    return _safe_div(_dcg(r, k), _idcg(r, k))


def ndcg_harmonic(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Binary DCG with discount 1/rank over the whole list, over the ideal sum of 1/i for i = 1..m."""
    pos = r.rel_pos
    dcg = _sum_within(r, r.rel_query, pos, 1.0 / (pos + 1.0), k)
    harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, int(r.n_rel.max(initial=0)) + 1))))
    return _safe_div(dcg, harmonic[r.n_rel])


def ndcg_exp(r: Ranked, k: Int64Array | None) -> FloatArray:
    """nDCG@k with exponential gains ``2^g - 1`` (ranx's ndcg_burges, ir_measures' ``dcg=exp-log2``).

    >>> from ragmeter.metrics.relevance import RelevanceTable
    >>> t = RelevanceTable.from_lists(["q"], [[1.0, 2.0]], [[2.0, 1.0]])
    >>> round(ndcg_exp(Ranked(t), None).item(), 4)   # (1 + 3/log2 3) / (3 + 1/log2 3)
    0.7967
    """
    return ndcg(_exp_gains(r), k)


def _exp_gains(r: Ranked) -> Ranked:
    """``r`` with each gain ``g`` replaced by ``2^g - 1`` (negative gains stay below 0)."""
    table = r.table
    exp_table = dataclasses.replace(
        table, gains=np.exp2(table.gains) - 1.0, ideal_gains=np.exp2(table.ideal_gains) - 1.0
    )
    return Ranked(exp_table, r.level)


def dcg(r: Ranked, k: Int64Array | None) -> FloatArray:
    """DCG@k with linear gains: Σ g_i / log2(i + 1) over the top k (ranx's dcg)."""
    return _dcg(r, k)


def dcg_exp(r: Ranked, k: Int64Array | None) -> FloatArray:
    """DCG@k with gains ``2^g - 1`` (ranx's dcg_burges)."""
    return _dcg(_exp_gains(r), k)


def num_ret(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Items returned (within k): trec_eval's num_ret."""
    lengths = r.lengths if k is None else np.minimum(r.lengths, k)
    return lengths.astype(np.float64)


def num_rel(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Relevant items in the ground truth: trec_eval's num_rel (no cutoff)."""
    return r.n_rel.astype(np.float64)


def num_rel_ret(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Relevant items returned (within k): trec_eval's num_rel_ret, ranx's hits."""
    return r.rel_in_top(k).astype(np.float64)


def set_precision(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Relevant returned / returned, over the whole list (0 for an empty list): trec_eval's set_P."""
    return _safe_div(r.rel_in_top(k).astype(np.float64), num_ret(r, k))


def set_recall(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Relevant returned / relevant, over the whole list: trec_eval's set_recall."""
    return recall(r, k)


def set_f(r: Ranked, k: Int64Array | None, beta: float = 1.0) -> FloatArray:
    """``(beta + 1) P R / (beta P + R)`` over the whole list (0 with nothing relevant returned): set_F.

    trec_eval's parameter ``beta`` weighs precision (``set_F.0.5``); 1 is the harmonic mean.
    """
    found = r.rel_in_top(k).astype(np.float64)
    p = set_precision(r, k)
    rr = _safe_div(found, r.n_rel)
    den = beta * p + rr
    return np.divide((beta + 1.0) * p * rr, den, out=np.zeros_like(p), where=found > 0)


def f1(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Harmonic mean of precision@k and recall@k (ranx's f1; 0 when nothing relevant is in the top k)."""
    p, rr = precision(r, k), recall(r, k)
    return np.divide(2.0 * p * rr, p + rr, out=np.zeros_like(p), where=(p + rr) > 0)
