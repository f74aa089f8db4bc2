"""Judge reliability spot-check: a second judge on a seeded subset; disagreement, kappa, n.

A seeded random subset is re-judged by a second judge; the report says how
often the two disagree, Cohen's kappa, and on how many items.

Disagreement (the RAG document's rule): scores that differ by more than 1
point, or binary labels that differ. Kappa is Cohen's unweighted kappa over
the labels (0-5 or 0-4 scores are treated as categories); it is ``None`` when
it is undefined (both judges used one and the same category throughout).

>>> select_subset([f"q{i}" for i in range(40)], fraction=0.1, min_n=2, n=None, seed=0) == \\
...     select_subset([f"q{i}" for i in reversed(range(40))], fraction=0.1, min_n=2, n=None, seed=0)
True
>>> cohen_kappa([1, 1, 0, 0], [1, 1, 0, 0])
1.0
>>> cohen_kappa([1, 1, 1], [1, 1, 1]) is None
True
>>> disagrees(5.0, 4.0, binary=False), disagrees(5.0, 3.0, binary=False), disagrees(1.0, 0.0, binary=True)
(False, True, True)
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

from ragmeter.judges.results import JudgeOutcome, ReliabilityStats

BINARY_METRICS = frozenset({"abstained", "factual_match"})
"""Metrics whose values are labels (0/1); the others are 0-5 or 0-4 scores."""

RULE = "disagree when scores differ by more than 1 point or binary labels differ"


def subset_size(total: int, *, fraction: float, min_n: int, n: int | None) -> int:
    """How many of ``total`` units to re-judge: ``n`` if given, else ``max(min_n, round(fraction*total))``.

    >>> subset_size(200, fraction=0.1, min_n=10, n=None), subset_size(30, fraction=0.1, min_n=10, n=None)
    (20, 10)
    >>> subset_size(5, fraction=0.1, min_n=10, n=None), subset_size(50, fraction=0.1, min_n=10, n=7)
    (5, 7)
    """
    size = n if n is not None else max(min_n, round(fraction * total))
    return max(0, min(total, size))


def select_subset(
    units: Sequence[str], *, fraction: float, min_n: int, n: int | None, seed: int
) -> list[str]:
    """A seeded random sample of ``units``; depends on the set of units, not their order."""
    pool = sorted(set(units))
    size = subset_size(len(pool), fraction=fraction, min_n=min_n, n=n)
    return sorted(random.Random(seed).sample(pool, size))


def disagrees(a: float, b: float, *, binary: bool) -> bool:
    """The spot-check rule: labels differ (binary) or scores differ by more than 1."""
    return a != b if binary else abs(a - b) > 1


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Cohen's (unweighted) kappa of two raters' labels; ``None`` when undefined.

    >>> round(cohen_kappa([1, 1, 0, 0, 1, 0], [1, 0, 0, 0, 1, 1]), 4)
    0.3333
    """
    if len(a) != len(b):
        raise ValueError("both raters must label the same items")
    total = len(a)
    if total == 0:
        return None
    observed = sum(1 for x, y in zip(a, b, strict=True) if x == y) / total
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[c] * count_b[c] for c in set(count_a) | set(count_b)) / (total * total)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def reliability_stats(
    primary: Sequence[JudgeOutcome],
    secondary: Sequence[JudgeOutcome],
    *,
    second_judge: dict[str, Any],
    seed: int,
) -> dict[str, ReliabilityStats]:
    """Compare the second judge's outcomes with the first judge's on the same units, per metric."""
    first = {(o.metric, o.item_id, o.result_id): o for o in primary}
    by_metric: dict[str, list[tuple[JudgeOutcome | None, JudgeOutcome]]] = {}
    for o in secondary:
        by_metric.setdefault(o.metric, []).append((first.get((o.metric, o.item_id, o.result_id)), o))
    stats = {}
    for metric, pairs in sorted(by_metric.items()):
        binary = metric in BINARY_METRICS
        both = [
            (p.value, s.value)
            for p, s in pairs
            if p is not None and p.value is not None and s.value is not None
        ]
        a = [x for x, _ in both]
        b = [y for _, y in both]
        n_disagree = sum(1 for x, y in both if disagrees(x, y, binary=binary))
        kappa = cohen_kappa(a, b)
        note = None
        if not both:
            note = "no item was scored by both judges"
        elif kappa is None:
            note = "kappa is undefined: both judges gave one and the same label to every item"
        stats[metric] = ReliabilityStats(
            disagreement_rate=n_disagree / len(both) if both else None,
            kappa=None if kappa is None else round(kappa, 6),
            spot_check_n=len(both),
            n_selected=len(pairs),
            n_unscored=len(pairs) - len(both),
            rule=RULE,
            second_judge=second_judge,
            seed=seed,
            note=note,
        )
    return stats
