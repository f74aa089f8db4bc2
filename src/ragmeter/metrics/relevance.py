"""Gains per rank for every query: the one input every ranking kernel reads.

Matching (ids, anchors, TREC judgments) turns ground truth into a
:class:`RelevanceTable`: for each query, the gain of the item at each rank
(0 for non-relevant or unjudged items), plus the query's positive ground-truth
gains sorted descending (for ideal DCG and the number of relevant items). The
arrays are flat and concatenated over queries (CSR layout), so every kernel is a
handful of vectorised numpy operations over all queries at once.

Judgment-based measures (bpref, infAP, Judged@k) also need to know which ranked
items were judged at all: :attr:`RelevanceTable.judged` says so per item, and
:attr:`RelevanceTable.judged_zero` counts each query's items judged 0
(non-relevant). Tables built without them treat an item as judged when its gain
is not 0, as binary ground truth implies.

Most ranked items of a deep run are neither relevant nor gainful, so
:class:`Ranked` also keeps the few that are (query, rank, gain) and the ranking
kernels work on those alone: the cost follows the judged hits, not the depth.

>>> t = RelevanceTable.from_lists(["q"], [[0.0, 1.0, 0.0, 1.0]], [[1.0, 1.0]])
>>> r = Ranked(t)
>>> r.n_rel.tolist(), r.lengths.tolist()
([2], [4])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

Int64Array = NDArray[np.int64]
FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]
JudgedArray = NDArray[np.int8]

JUDGED, NOT_JUDGED, POOLED_UNJUDGED = 1, 0, -1
"""Values of :attr:`RelevanceTable.judged`."""


def judged_status(gains: FloatArray, listed: BoolArray) -> JudgedArray:
    """Per item: :data:`JUDGED`, :data:`NOT_JUDGED` or :data:`POOLED_UNJUDGED` (listed, gain < 0).

    >>> judged_status(np.array([2.0, 0.0, -1.0, 0.0]), np.array([True, True, True, False])).tolist()
    [1, 1, -1, 0]
    """
    out = listed.astype(np.int8)
    out[listed & (gains < 0)] = POOLED_UNJUDGED
    return out


def _offsets(lengths: Sequence[int] | NDArray[np.int64]) -> Int64Array:
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64), out=out[1:])
    return out


@dataclass(frozen=True)
class RelevanceTable:
    """Ranked gains and ideal gains for Q queries in CSR layout."""

    query_ids: list[str]
    offsets: Int64Array
    gains: FloatArray
    ideal_offsets: Int64Array
    ideal_gains: FloatArray
    judged: JudgedArray | None = None
    """Per ranked item: :data:`JUDGED` (a ground-truth value >= 0), :data:`NOT_JUDGED` (absent
    from the ground truth) or :data:`POOLED_UNJUDGED` (listed with a negative value: trec_eval's
    "in the pool, not judged"). ``None``: judged when the gain is not 0."""
    judged_zero: Int64Array | None = None
    """Per query: ground-truth items judged 0 (non-relevant). ``None``: none."""

    @classmethod
    def from_lists(
        cls,
        query_ids: Sequence[str],
        ranked_gains: Sequence[Sequence[float]],
        truth_gains: Sequence[Sequence[float]],
        ranked_judged: Sequence[Sequence[bool]] | None = None,
    ) -> RelevanceTable:
        """Build a table from per-query lists (ranked gains; all ground-truth gains, any order).

        ``ranked_judged`` says which ranked items are in the ground truth (default: those
        with a gain other than 0); a listed item with a negative gain counts as in the pool
        but not judged, as in trec_eval.

        >>> t = RelevanceTable.from_lists(["q"], [[0.0, 1.0, 0.0]], [[1.0, 0.0]], [[True, True, False]])
        >>> t.judged.tolist(), t.judged_zero.tolist()
        ([1, 1, 0], [1])
        """
        ideal = [sorted((g for g in gains if g > 0), reverse=True) for gains in truth_gains]
        gains = np.fromiter((g for row in ranked_gains for g in row), dtype=np.float64)
        judged = None
        if ranked_judged is not None:
            listed = np.fromiter(
                (bool(j) for row in ranked_judged for j in row), dtype=bool, count=len(gains)
            )
            judged = judged_status(gains, listed)
        return cls(
            query_ids=list(query_ids),
            offsets=_offsets([len(g) for g in ranked_gains]),
            gains=gains,
            ideal_offsets=_offsets([len(g) for g in ideal]),
            ideal_gains=np.fromiter((g for row in ideal for g in row), dtype=np.float64),
            judged=judged,
            judged_zero=np.array([sum(1 for g in row if g == 0) for row in truth_gains], dtype=np.int64),
        )

    def __len__(self) -> int:
        return len(self.query_ids)


class Ranked:
    """A table seen at one relevance level, with derived arrays computed once and shared.

    ``relevance_level=None`` means relevant iff gain > 0; a number ``L`` means
    relevant iff gain >= L (trec_eval's ``-l``). Gains themselves (for nDCG) are
    the raw values, negatives counted as 0.
    """

    def __init__(self, table: RelevanceTable, relevance_level: float | None = None) -> None:
        self.table = table
        self.level = relevance_level

    def _is_relevant(self, gains: FloatArray) -> BoolArray:
        return gains >= self.level if self.level is not None else gains > 0

    @cached_property
    def judged(self) -> JudgedArray:
        """Per ranked item: judged (1), not in the ground truth (0), pooled but unjudged (-1)."""
        if self.table.judged is not None:
            return self.table.judged
        gains = self.table.gains
        return judged_status(gains, gains != 0)

    @cached_property
    def judged_zero(self) -> Int64Array:
        """Per query: ground-truth items judged 0."""
        if self.table.judged_zero is not None:
            return self.table.judged_zero
        return np.zeros(self.n_queries, dtype=np.int64)

    @property
    def n_queries(self) -> int:
        """Number of queries Q."""
        return len(self.table.query_ids)

    @cached_property
    def lengths(self) -> Int64Array:
        """Number of ranked items per query."""
        return np.diff(self.table.offsets)

    @cached_property
    def rel(self) -> BoolArray:
        """Whether each ranked item is relevant (at a level <= 0, only judged items are)."""
        relevant = self._is_relevant(self.table.gains)
        if self.level is not None and self.level <= 0:
            relevant &= self.judged == JUDGED
        return relevant

    @cached_property
    def n_rel(self) -> Int64Array:
        """Number of relevant ground-truth items per query."""
        lengths = np.diff(self.table.ideal_offsets)
        qidx = np.repeat(np.arange(self.n_queries, dtype=np.int64), lengths)
        relevant = self._is_relevant(self.table.ideal_gains).astype(np.float64)
        n_rel = np.bincount(qidx, weights=relevant, minlength=self.n_queries).astype(np.int64)
        if self.level is not None and self.level <= 0:
            n_rel += self.judged_zero
        return n_rel

    @cached_property
    def n_nonrel(self) -> Int64Array:
        """Number of ground-truth items judged non-relevant (value >= 0, below the level) per query."""
        lengths = np.diff(self.table.ideal_offsets)
        n_judged = lengths + self.judged_zero
        return n_judged - self.n_rel

    @cached_property
    def rel_at(self) -> Int64Array:
        """Flat index of every relevant ranked item (ascending: grouped by query, in rank order)."""
        return np.flatnonzero(self.rel)

    @cached_property
    def rel_query(self) -> Int64Array:
        """Query index of each item of :attr:`rel_at`."""
        return self._query_of(self.rel_at)

    @cached_property
    def rel_pos(self) -> Int64Array:
        """0-based rank of each item of :attr:`rel_at`."""
        out: Int64Array = self.rel_at - self.table.offsets[self.rel_query]
        return out

    @cached_property
    def rel_count(self) -> Int64Array:
        """For each item of :attr:`rel_at`: relevant items up to and including it (its cumrel)."""
        first = np.searchsorted(self.rel_query, self.rel_query, side="left")
        out: Int64Array = np.arange(1, len(first) + 1, dtype=np.int64) - first
        return out

    @cached_property
    def gain_at(self) -> Int64Array:
        """Flat index of every ranked item with a positive gain."""
        return np.flatnonzero(self.table.gains > 0)

    @cached_property
    def gain_query(self) -> Int64Array:
        """Query index of each item of :attr:`gain_at`."""
        return self._query_of(self.gain_at)

    @cached_property
    def gain_pos(self) -> Int64Array:
        """0-based rank of each item of :attr:`gain_at`."""
        out: Int64Array = self.gain_at - self.table.offsets[self.gain_query]
        return out

    def _query_of(self, flat: Int64Array) -> Int64Array:
        out: Int64Array = np.searchsorted(self.table.offsets, flat, side="right") - 1
        return out

    @cached_property
    def first_rel_pos(self) -> Int64Array:
        """0-based rank of the first relevant item per query (-1 when none)."""
        out = np.full(self.n_queries, -1, dtype=np.int64)
        q = self.rel_query
        if len(q):
            first = np.ones(len(q), dtype=bool)
            first[1:] = q[1:] != q[:-1]
            out[q[first]] = self.rel_pos[first]
        return out

    def rel_in_top(self, k: Int64Array | None) -> Int64Array:
        """Number of relevant items within the top ``k`` (per query; ``None`` = whole list)."""
        q = self.rel_query
        if k is not None:
            q = q[self.rel_pos < k[q]]
        return np.bincount(q, minlength=self.n_queries).astype(np.int64)


_LOG2: list[FloatArray] = [np.zeros(0, dtype=np.float64)]


def log2_ranks(n: int) -> FloatArray:
    """``log2(rank + 1)`` for ranks 1..n, from the C library's ``log2`` (as trec_eval computes it).

    Gains are divided by it (as trec_eval does), not multiplied by its inverse, so that sums
    agree with trec_eval to the last bit.

    >>> log2_ranks(3).tolist()
    [1.0, 1.584962500721156, 2.0]
    """
    table = _LOG2[0]
    if len(table) < n:
        grown = np.fromiter(
            (math.log2(rank + 1) for rank in range(1, max(n, 2 * len(table)) + 1)), np.float64
        )
        _LOG2[0] = table = grown
    return table[:n]
