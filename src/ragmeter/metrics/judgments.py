"""Kernels that read which ranked items were judged at all: bpref, infAP, Judged@k, unjudged@k.

Where the other kernels treat an unjudged item as non-relevant, these tell judged
non-relevant items (:attr:`~ragmeter.metrics.relevance.Ranked.judged` = 1 below the
relevance level) from items absent from the ground truth (0) and from items listed with a
negative value (-1: trec_eval's "in the pool, not judged"). Formulas and the order of the
floating-point operations are trec_eval 10.0's (``m_bpref.c``, ``m_infap.c``,
``m_unjudged.c``), so values agree to the last bit.

Relevant {a, c} and judged non-relevant {b, d}; the ranking is [x, b, a, c], x unjudged:

>>> from ragmeter.metrics.relevance import RelevanceTable, Ranked
>>> t = RelevanceTable.from_lists(["q"], [[0, 0, 1, 1]], [[1, 0, 1, 0]], [[False, True, True, True]])
>>> r = Ranked(t)
>>> bpref(r, None).item()          # a and c each follow one of the two non-relevant: (0.5 + 0.5) / 2
0.5
>>> judged(r, np.array([2])).item(), unjudged(r, np.array([2])).item()
(0.5, 0.5)
"""

from __future__ import annotations

import numpy as np

from ragmeter.metrics.relevance import JUDGED, NOT_JUDGED, POOLED_UNJUDGED, FloatArray, Int64Array, Ranked

INFAP_EPSILON = 0.00001
"""trec_eval's INFAP_EPSILON."""


def _counts_before(r: Ranked, flags: np.ndarray, members: Int64Array) -> Int64Array:
    """For each flat index in ``members`` (ascending): how many flagged items precede it in its query."""
    flagged = np.flatnonzero(flags)
    before = np.searchsorted(flagged, members, side="left")
    first = np.searchsorted(flagged, r.table.offsets[:-1], side="left")
    out: Int64Array = before - first[_query_of(r, members)]
    return out


def _query_of(r: Ranked, flat: Int64Array) -> Int64Array:
    out: Int64Array = np.searchsorted(r.table.offsets, flat, side="right") - 1
    return out


def _over_relevant(r: Ranked, terms: FloatArray, k: Int64Array | None) -> FloatArray:
    """Per query: the sum (in rank order) of one term per relevant item returned within k, over R."""
    q = r.rel_query
    if k is not None:
        within = r.rel_pos < k[q]
        q, terms = q[within], terms[within]
    total = np.bincount(q, weights=terms, minlength=r.n_queries).astype(np.float64)
    den = r.n_rel.astype(np.float64)
    return np.divide(total, den, out=total.copy(), where=den > 0)


def bpref(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Binary preference: for each relevant item, the fraction of judged non-relevant items it beats.

    ``Σ_r (1 - min(N_above(r), R) / min(N, R)) / R`` over the relevant items returned (within
    k), N_above counting the judged non-relevant items ranked above; unjudged items are skipped.
    """
    nonrel = (r.judged == JUDGED) & ~r.rel
    q = r.rel_query
    above = _counts_before(r, nonrel, r.rel_at)
    n_rel = r.n_rel[q].astype(np.float64)
    n_nonrel = r.n_nonrel[q].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.minimum(above, n_rel) / np.minimum(n_nonrel, n_rel)
    return _over_relevant(r, np.where(above > 0, 1.0 - share, 1.0), k)


def infap(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Inferred AP (Yilmaz & Aslam): AP estimated from a sampled pool, as trec_eval computes it.

    Items absent from the judgments are skipped; items listed with a negative value count
    as pooled but unjudged.
    """
    judged, pos, at = r.judged, r.rel_pos, r.rel_at
    nonrel = _counts_before(r, (judged == JUDGED) & ~r.rel, at).astype(np.float64)
    pooled = _counts_before(r, judged == POOLED_UNJUDGED, at).astype(np.float64)
    rel_before = (r.rel_count - 1).astype(np.float64)
    fj = pos.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        later = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel_before + nonrel + pooled) / fj) * (
            (rel_before + INFAP_EPSILON) / (rel_before + nonrel + 2 * INFAP_EPSILON)
        )
    return _over_relevant(r, np.where(pos == 0, 1.0, later), k)


def _in_top(r: Ranked, flags: np.ndarray, k: Int64Array | None, den: Int64Array) -> FloatArray:
    """Per query: flagged items within the top k, divided by ``den``."""
    flat = np.flatnonzero(flags)
    q = _query_of(r, flat)
    if k is not None:
        q = q[(flat - r.table.offsets[q]) < k[q]]
    count = np.bincount(q, minlength=r.n_queries).astype(np.float64)
    return np.divide(count, den.astype(np.float64), out=np.zeros_like(count), where=den > 0)


def judged(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Share of the top k with a judgment, whatever its value (ir_measures' Judged@k).

    As ir_measures divides, a list shorter than k is divided by its own length.
    """
    den = r.lengths if k is None else np.minimum(k, r.lengths)
    return _in_top(r, r.judged != NOT_JUDGED, k, den)


def unjudged(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Items in the top k without a usable judgment (absent, or pooled but unjudged), over k: unj."""
    within = r.lengths if k is None else np.minimum(r.lengths, k)
    den = (r.lengths if k is None else k).astype(np.float64)
    # the judged items are few: count them, not the rest
    judged_share = _in_top(r, r.judged == JUDGED, k, np.ones(r.n_queries, dtype=np.int64))
    return np.divide(within - judged_share, den, out=np.zeros(r.n_queries), where=den > 0)


def num_nonrel_judged_ret(r: Ranked, k: Int64Array | None) -> FloatArray:
    """Judged non-relevant items returned (within k): trec_eval's num_nonrel_judged_ret."""
    flat = np.flatnonzero((r.judged == JUDGED) & ~r.rel)
    q = _query_of(r, flat)
    if k is not None:
        q = q[(flat - r.table.offsets[q]) < k[q]]
    return np.bincount(q, minlength=r.n_queries).astype(np.float64)
