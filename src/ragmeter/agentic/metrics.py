"""Retrieved Good Gain metrics over the search iterations of one trace (pure functions).

Inputs per iteration i = 1..N: ``|R^i|`` (all results, duplicates included) and the
gains of the *new* unique results ``UR^i`` (``None`` = unscored). A result is good
when its gain is at least ``good_threshold`` (2). ``G_i`` sums the gains of good new
results, ``w(i) = 1/log2(i+1)``.

A value that depends on an unscored gain is ``None`` (unscored), never a guess:
``AvgGain_i`` is unscored when a new result of iteration i is, and the cumulative
gain metrics from the first such iteration on. Counts that do not need gains
(``R``, ``UR``, ``Dup``, ``SRR``) are always defined.

>>> s = iteration_series([3, 2], [[3.0, 1.0, 2.0], [4.0]])
>>> s["CG"], [round(v, 4) for v in s["DCG"]], s["SRR"]
([5.0, 9.0], [5.0, 7.5237], [0.0, 0.2])
>>> iteration_series([2], [[None, 3.0]])["CG"]
[None]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

GOOD_THRESHOLD = 2.0
"""A result is good when its gain is at least this (the spec's ``gain(c) >= 2``)."""

ITERATIONS_CAP = 100
"""IterationsForAllGoodResults never exceeds this (and is this when not all were found)."""

Value = float | int | None


@dataclass(frozen=True)
class SeriesSpec:
    """One per-iteration series: its name in JSON, its notation in the spec, and what it means."""

    name: str
    notation: str
    description: str
    needs_gains: bool
    higher_is_better: bool | None
    kind: Literal["metric", "count"]


SERIES: tuple[SeriesSpec, ...] = (
    SeriesSpec("CG", "CG@i", "cumulative good gain: sum of G_k for k <= i", True, True, "metric"),
    SeriesSpec("RG", "RG@i", "rate of good gain: CG@i / i", True, True, "metric"),
    SeriesSpec("DCG", "DCG@i", "discounted cumulative good gain: sum of w(k) G_k", True, True, "metric"),
    SeriesSpec("DRG", "DRG@i", "discounted rate of good gain: DCG@i / i", True, True, "metric"),
    SeriesSpec(
        "AvgGain",
        "AvgGain_i",
        "good gain per result at iteration i: G_i / |R^i| (0 if |R^i| = 0)",
        True,
        True,
        "metric",
    ),
    SeriesSpec("RAG", "RAG@i", "rate of average gain: mean of AvgGain_k for k <= i", True, True, "metric"),
    SeriesSpec(
        "DRAG", "DRAG@i", "discounted rate of average gain: sum of w(k) AvgGain_k / i", True, True, "metric"
    ),
    SeriesSpec("SRE", "SRE@i", "search result efficiency: GR@i / R@i (0 if R@i = 0)", True, True, "metric"),
    SeriesSpec(
        "SRR", "SRR@i", "search result redundancy: DupR@i / R@i (0 if R@i = 0)", False, False, "metric"
    ),
    SeriesSpec("R", "|R^i|", "results at iteration i, duplicates included", False, None, "count"),
    SeriesSpec("UR", "|UR^i|", "unique new results at iteration i", False, None, "count"),
    SeriesSpec("GR", "|GR^i|", "good unique new results at iteration i", True, None, "count"),
    SeriesSpec(
        "Dup", "|Dup^i|", "duplicates at iteration i (within it or seen before)", False, None, "count"
    ),
    SeriesSpec("R_cum", "R@i", "results through iteration i, duplicates included", False, None, "count"),
    SeriesSpec("UR_cum", "UR@i", "unique results through iteration i", False, None, "count"),
    SeriesSpec("GR_cum", "GR@i", "good unique results through iteration i", True, None, "count"),
    SeriesSpec("Dup_cum", "DupR@i", "duplicates through iteration i", False, None, "count"),
)
"""Every per-iteration series, in report order. The value at list index i-1 is the value @i."""

SERIES_NAMES: tuple[str, ...] = tuple(s.name for s in SERIES)


def discount(i: int) -> float:
    """w(i) = 1 / log2(i + 1).

    >>> discount(1), discount(3)
    (1.0, 0.5)
    """
    return 1.0 / math.log2(i + 1)


def iteration_series(
    results_per_iteration: Sequence[int],
    new_gains_per_iteration: Sequence[Sequence[float | None]],
    *,
    good_threshold: float = GOOD_THRESHOLD,
) -> dict[str, list[Value]]:
    """Every series of :data:`SERIES` for one trace (lists of length N).

    ``new_gains_per_iteration[i-1]`` holds one gain per unique new result of
    iteration i (so ``|UR^i|`` is its length and ``|Dup^i| = |R^i| - |UR^i|``).

    >>> s = iteration_series([0, 2], [[], [2.0, 2.0]])
    >>> s["AvgGain"], s["SRE"], s["RAG"]
    ([0.0, 2.0], [0.0, 1.0], [0.0, 1.0])
    """
    if len(results_per_iteration) != len(new_gains_per_iteration):
        raise ValueError("one list of new gains per iteration is needed")
    out: dict[str, list[Value]] = {name: [] for name in SERIES_NAMES}
    cg = dcg = avg_sum = davg_sum = 0.0
    r_cum = ur_cum = gr_cum = dup_cum = 0
    scored = True
    for i, (r, gains) in enumerate(zip(results_per_iteration, new_gains_per_iteration, strict=True), start=1):
        ur = len(gains)
        if ur > r:
            raise ValueError(f"iteration {i}: {ur} new results but only {r} results")
        dup = r - ur
        r_cum, ur_cum, dup_cum = r_cum + r, ur_cum + ur, dup_cum + dup
        iteration_scored = all(g is not None for g in gains)
        scored = scored and iteration_scored
        good = [g for g in gains if g is not None and g >= good_threshold]
        g_i = math.fsum(good)
        gr_cum += len(good)
        cg += g_i
        dcg += discount(i) * g_i
        avg = g_i / r if r > 0 else 0.0
        avg_sum += avg
        davg_sum += discount(i) * avg
        values: dict[str, Value] = {
            "R": r,
            "UR": ur,
            "Dup": dup,
            "R_cum": r_cum,
            "UR_cum": ur_cum,
            "Dup_cum": dup_cum,
            "SRR": dup_cum / r_cum if r_cum > 0 else 0.0,
            "AvgGain": avg if iteration_scored else None,
            "GR": len(good) if iteration_scored else None,
        }
        if scored:
            values |= {
                "CG": cg,
                "RG": cg / i,
                "DCG": dcg,
                "DRG": dcg / i,
                "RAG": avg_sum / i,
                "DRAG": davg_sum / i,
                "SRE": gr_cum / r_cum if r_cum > 0 else 0.0,
                "GR_cum": gr_cum,
            }
        for name in SERIES_NAMES:
            out[name].append(values.get(name))
    return out


def iterations_for_all_good(
    first_iterations: Sequence[int | None], *, cap: int = ITERATIONS_CAP
) -> tuple[int | None, str | None]:
    """IterationsForAllGoodResults from the iteration at which each good result was first retrieved.

    ``None`` in ``first_iterations`` means that good result was never retrieved (then the
    value is ``cap``). With no good results at all the value is undefined: ``(None, reason)``.

    >>> iterations_for_all_good([1, 3]), iterations_for_all_good([2, None]), iterations_for_all_good([])
    ((3, None), (100, None), (None, 'no good results'))
    """
    if not first_iterations:
        return None, "no good results"
    if any(i is None for i in first_iterations):
        return cap, None
    return min(max(i for i in first_iterations if i is not None), cap), None
