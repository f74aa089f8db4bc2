"""Gain levels as trec_eval sets them up for ndcg, G, Rndcg, ndcg_rel and rbp (``gain_init.c``).

Each relevance level ``L`` has the gain ``L`` unless a ``L=gain`` parameter says otherwise
(``-m ndcg.1=3,2=9``). A ranked item's gain is its level's; items absent from the judgments
(level -1) and pooled but unjudged ones (-2) have gain 0 unless a parameter names that
level. The ideal ranking walks the levels from the highest gain down (sorted as trec_eval's
``qsort`` sorts them, comparing the whole part of gain differences), repeating each level
as often as the query has judgments at it, and stops at the first level whose gain is not
positive.

>>> from ragmeter.metrics.relevance import RelevanceTable, Ranked
>>> t = RelevanceTable.from_lists(["q"], [[2.0, 0.0, 1.0]], [[2.0, 1.0, 0.0]], [[True, False, True]])
>>> g = TrecGains(Ranked(t), [("1", 3.0), ("2", 9.0)])
>>> g.ranked.tolist(), g.ideal.tolist()
([9.0, 0.0, 3.0], [9.0, 3.0])
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TypeVar

import numpy as np

from ragmeter.metrics.relevance import JUDGED, NOT_JUDGED, FloatArray, Int64Array, Ranked

NONPOOL, UNJUDGED = -1, -2
"""trec_eval's level codes for items absent from the qrels and pooled but unjudged."""

T = TypeVar("T")


_LEVELS: weakref.WeakKeyDictionary[Ranked, Int64Array] = weakref.WeakKeyDictionary()


def levels_of(r: Ranked) -> Int64Array:
    """Per ranked item, trec_eval's level code: the judgment, or -1 (absent), -2 (pooled, unjudged).

    Computed once per :class:`Ranked` (several measures read it).
    """
    cached = _LEVELS.get(r)
    if cached is None:
        judged = r.judged
        cached = np.where(
            judged == JUDGED, r.table.gains, np.where(judged == NOT_JUDGED, NONPOOL, UNJUDGED)
        ).astype(np.int64)
        _LEVELS[r] = cached
    return cached


def glibc_msort(items: list[T], cmp: Callable[[T, T], int]) -> list[T]:
    """Glibc's ``qsort`` (a top-down merge sort) with a comparison that may not be a total order.

    trec_eval compares gains with ``(int)(g1 - g2)``, so gains less than 1 apart compare
    equal and the result depends on the sort's exact steps; this takes the same steps.

    >>> glibc_msort([3, 1, 2], lambda a, b: a - b)
    [1, 2, 3]
    """
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    left, right = glibc_msort(items[:half], cmp), glibc_msort(items[half:], cmp)
    out: list[T] = []
    i = j = 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def valid_level(name: str) -> bool:
    """trec_eval's ``valid_int``: an optional sign and digits only."""
    digits = name[1:] if name[:1] in ("+", "-") else name
    return digits.isascii() and digits.isdigit()


class TrecGains:
    """Ranked and ideal gains of every query for a list of ``level=gain`` parameters."""

    def __init__(self, r: Ranked, pairs: Sequence[tuple[str, float]] = ()) -> None:
        self.r = r
        self.pairs = [(int(name), value) for name, value in pairs if valid_level(name)]

    @cached_property
    def level_counts(self) -> Int64Array:
        """Per query and level ``0..max``: judgments at that level (``rel_levels``)."""
        r = self.r
        ideal = r.table.ideal_gains.astype(np.int64)
        lengths = np.diff(r.table.ideal_offsets)
        q = np.repeat(np.arange(r.n_queries, dtype=np.int64), lengths)
        top = int(ideal.max(initial=0))
        counts = np.zeros((r.n_queries, top + 1), dtype=np.int64)
        np.add.at(counts, (q, ideal), 1)
        counts[:, 0] += r.judged_zero
        return counts

    @cached_property
    def n_levels(self) -> Int64Array:
        """Per query: trec_eval's ``num_rel_levels`` (the highest level with a judgment, plus 1)."""
        counts = self.level_counts
        present = counts > 0
        highest = counts.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1)
        out: Int64Array = np.where(present.any(axis=1), highest + 1, 0)
        return out

    def gain_of(self, level: int) -> float:
        """The gain of a level: its first parameter, else the level itself (0 below level 0)."""
        for name, value in self.pairs:
            if name == level:
                return value
        return float(level) if level >= 0 else 0.0

    @cached_property
    def ranked(self) -> FloatArray:
        """The gain of every ranked item."""
        levels = levels_of(self.r)
        if not self.pairs:
            return np.where(levels > 0, levels, 0).astype(np.float64)
        low, high = int(levels.min(initial=0)), int(levels.max(initial=0))
        table = np.array([self.gain_of(level) for level in range(low, high + 1)], dtype=np.float64)
        out: FloatArray = table[levels - low]
        return out

    @cached_property
    def _ideal_csr(self) -> tuple[Int64Array, FloatArray]:
        r = self.r
        if not self.pairs:
            return r.table.ideal_offsets, r.table.ideal_gains
        counts, n_levels = self.level_counts, self.n_levels
        walks = {n: self._walk(n) for n in {int(n) for n in n_levels.tolist()}}
        width = max((len(walk) for walk in walks.values()), default=0)
        take = np.zeros((r.n_queries, width), dtype=np.int64)
        gains = np.zeros((r.n_queries, width), dtype=np.float64)
        for n, walk in walks.items():
            rows = np.flatnonzero(n_levels == n)
            # trec_eval starts only if the top entry's gain is positive, and stops at the
            # first level with judgments whose gain is not
            stopped = np.full(len(rows), bool(walk) and walk[0][1] <= 0)
            for column, (level, gain, counted) in enumerate(walk):
                count = counts[rows, level] if counted else np.zeros(len(rows), dtype=np.int64)
                count = np.where(stopped, 0, count)
                stopped |= (count > 0) & (gain <= 0)
                take[rows, column] = np.where(gain > 0, count, 0)
                gains[rows, column] = gain
        offsets = np.zeros(r.n_queries + 1, dtype=np.int64)
        np.cumsum(take.sum(axis=1), out=offsets[1:])
        return offsets, np.repeat(gains.ravel(), take.ravel())

    def _walk(self, n_levels: int) -> list[tuple[int, float, bool]]:
        """The gain table of a query with ``n_levels`` levels, highest gain first.

        Entries are (level, gain, whether the entry holds the level's judgments: a level's
        first entry, with 0 <= level < n).
        """
        named = {level for level, _ in self.pairs}
        entries = list(self.pairs) + [
            (level, float(level)) for level in range(n_levels) if level not in named
        ]
        first: dict[int, int] = {}
        for index, (level, _) in enumerate(entries):
            first.setdefault(level, index)
        tagged = [
            (level, gain, first[level] == index and 0 <= level < n_levels)
            for index, (level, gain) in enumerate(entries)
        ]
        return glibc_msort(tagged, lambda a, b: int(a[1] - b[1]))[::-1]

    @property
    def ideal_offsets(self) -> Int64Array:
        """CSR offsets of :attr:`ideal`."""
        return self._ideal_csr[0]

    @property
    def ideal(self) -> FloatArray:
        """The ideal ranking's positive gains, query by query."""
        return self._ideal_csr[1]

    def ideal_positions(self) -> tuple[Int64Array, Int64Array]:
        """Query index and 0-based rank of every :attr:`ideal` gain."""
        offsets = self.ideal_offsets
        lengths = np.diff(offsets)
        q = np.repeat(np.arange(self.r.n_queries, dtype=np.int64), lengths)
        pos = np.arange(len(self.ideal), dtype=np.int64) - np.repeat(offsets[:-1], lengths)
        return q, pos

    def bounds(self) -> tuple[FloatArray, FloatArray]:
        """Per query: the smallest and largest gain of trec_eval's gain table (for rbp)."""
        n_levels = self.n_levels
        named = [value for _, value in self.pairs]
        names = {level for level, _ in self.pairs}
        low = np.full(self.r.n_queries, np.inf)
        high = np.full(self.r.n_queries, -np.inf)
        for value in named:
            low = np.minimum(low, value)
            high = np.maximum(high, value)
        unnamed = [level for level in range(int(n_levels.max(initial=0))) if level not in names]
        for level in unnamed:
            has = n_levels > level
            low = np.where(has, np.minimum(low, float(level)), low)
            high = np.where(has, np.maximum(high, float(level)), high)
        return low, high
