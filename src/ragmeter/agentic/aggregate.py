"""Averages over traces: at each iteration i, at each trace's last iteration N, and redundancy totals.

The average at iteration i is over the scored traces that reached i (``N >= i``)
and have a value there; ``n`` says how many that was. A trace that stopped earlier
is not extended with invented iterations. Traces whose results were not captured,
or that never searched, are counted and left out. Unscored values are counted and
left out — never averaged in as 0.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from pydantic import BaseModel, Field

from ragmeter.agentic.metrics import SERIES_NAMES, Value
from ragmeter.agentic.scoring import TraceScore
from ragmeter.dedup.two_phase import MATCH_KINDS


class Redundancy(BaseModel):
    """Duplicates by the key that matched them, pooled over scored traces."""

    results: int
    duplicates: int
    by_key: dict[str, int]
    share_by_key: dict[str, float | None] = Field(description="duplicates matched by each key / all results")
    srr: float | None = Field(description="pooled SRR: duplicates / results")


class Counts(BaseModel):
    """How many traces were scored, and why the others were not."""

    traces: int
    scored: int
    results_not_captured: int
    no_search: int
    traces_with_unscored_results: int
    unscored_results: int
    iterations_for_all_good_undefined: int
    iterations_for_all_good_unscored: int
    labels_not_matching_a_result: int
    copies_with_other_gain: int


class Aggregates(BaseModel):
    """Averages by iteration and at N, with the counts behind each."""

    max_iterations: int
    traces_by_iteration: list[int]
    averages_by_iteration: dict[str, list[float | None]]
    n_by_iteration: dict[str, list[int]]
    averages_at_n: dict[str, float | None]
    n_at_n: dict[str, int]
    redundancy: Redundancy
    counts: Counts


def _mean(values: Sequence[float]) -> float | None:
    """The mean, the sum rounded once (``fsum``: the order of the values does not change it)."""
    return math.fsum(values) / len(values) if values else None


def _add_columns(lists: list[list[float]], rows: list[list[Value]]) -> None:
    """Add each row's values (``None`` left out) to ``lists[i]`` for their iteration i: a column at once when the rows are one length."""
    if len(set(map(len, rows))) == 1:
        for i, column in enumerate(zip(*rows, strict=True)):
            lists[i] += [v for v in column if v is not None]
        return
    for row in rows:  # a series of another length than the first (not made by the scorer)
        for i, value in enumerate(row):
            if value is not None:
                lists[i].append(value)


def aggregate_scores(scores: Sequence[TraceScore], *, names: Sequence[str] = SERIES_NAMES) -> Aggregates:
    """Average the per-trace series and final values (see the module docstring).

    >>> from ragmeter.agentic.scoring import TraceScore
    >>> a = TraceScore(trace_id="a", where="-", status="scored", n_iterations=2,
    ...                series={"CG": [1.0, 3.0]}, at_n={"CG": 3.0})
    >>> b = TraceScore(trace_id="b", where="-", status="scored", n_iterations=1, series={"CG": [2.0]}, at_n={"CG": 2.0})
    >>> avg = aggregate_scores([a, b], names=("CG",))
    >>> avg.averages_by_iteration["CG"], avg.n_by_iteration["CG"], avg.averages_at_n["CG"]
    ([1.5, 3.0], [2, 1], 2.5)
    """
    scored = [s for s in scores if s.status == "scored"]
    depth = max((s.n_iterations for s in scored), default=0)
    by_iteration: dict[str, list[list[float]]] = {name: [[] for _ in range(depth)] for name in names}
    at_n: dict[str, list[float]] = {}
    by_length: dict[int, list[dict[str, list[Value]]]] = {}  # series of one length: zipped into columns
    for s in scored:
        by_length.setdefault(len(next(iter(s.series.values()), ())), []).append(s.series)
    finals = [s.at_n for s in scored]
    for name in names:
        lists = by_iteration[name]
        for group in by_length.values():
            _add_columns(lists, list(map(operator.methodcaller("get", name, ()), group)))
        at_n[name] = [v for v in map(operator.methodcaller("get", name), finals) if v is not None]
    at_n["IterationsForAllGoodResults"] = [
        s.iterations_for_all_good for s in scored if s.iterations_for_all_good is not None
    ]

    by_key = dict.fromkeys(map(str, MATCH_KINDS), 0)
    results = 0
    for s in scored:
        results += int(s.at_n.get("R_cum") or 0)
        for kind, n in s.duplicates_by_key.items():
            by_key[kind] = by_key.get(kind, 0) + n
    duplicates = sum(by_key.values())
    redundancy = Redundancy(
        results=results,
        duplicates=duplicates,
        by_key=by_key,
        share_by_key={k: (n / results if results else None) for k, n in by_key.items()},
        srr=duplicates / results if results else None,
    )
    counts = Counts(
        traces=len(scores),
        scored=len(scored),
        results_not_captured=sum(s.status == "results_not_captured" for s in scores),
        no_search=sum(s.status == "no_search" for s in scores),
        traces_with_unscored_results=sum(s.n_unscored > 0 for s in scored),
        unscored_results=sum(s.n_unscored for s in scored),
        iterations_for_all_good_undefined=sum(
            s.iterations_for_all_good_reason == "no good results" for s in scored
        ),
        iterations_for_all_good_unscored=sum(
            s.iterations_for_all_good_reason == "unscored gains" for s in scored
        ),
        labels_not_matching_a_result=sum(s.unmatched_labels for s in scores),
        copies_with_other_gain=sum(s.copies_with_other_gain for s in scored),
    )
    return Aggregates(
        max_iterations=depth,
        traces_by_iteration=[sum(s.n_iterations > i for s in scored) for i in range(depth)],
        averages_by_iteration={name: [_mean(v) for v in lists] for name, lists in by_iteration.items()},
        n_by_iteration={name: [len(v) for v in lists] for name, lists in by_iteration.items()},
        averages_at_n={name: _mean(v) for name, v in at_n.items()},
        n_at_n={name: len(v) for name, v in at_n.items()},
        redundancy=redundancy,
        counts=counts,
    )
