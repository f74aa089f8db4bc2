"""The breakdown cells of a comparison: per pair, dimension, group and quality metric, the paired delta.

A query is in the groups its ``per_query.jsonl`` line (or its ``EvalResult.query_details``)
names: its tags, category, difficulty, vault and whether it is answerable. Each cell is the
mean of the per-query differences of the queries of the group that both runs scored, with the
paired permutation test of ``ragmeter.report.stats``; the cells form one family for the
correction (a family of their own, apart from the main table).

>>> query_groups({"category": "factual", "tags": ["work", "home"], "answerable": False, "input": "q"})
{'tag': ['work', 'home'], 'category': ['factual'], 'answerable': ['false']}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel

from ragmeter.report.compare import Comparison
from ragmeter.report.stats import permutation_pvalue
from ragmeter.report.units import is_operational
from ragmeter.results import EvalResult

DIMENSION_KEYS = {"tags": "tag", "category": "category", "difficulty": "difficulty", "vault": "vault"}
"""``per_query.jsonl`` keys that put a query in breakdown groups (plus ``answerable``)."""
MIN_GROUP = 2
"""Groups with fewer paired queries than this get no cell."""


class BreakdownCell(BaseModel):
    """The paired delta of one metric within one breakdown group, for one pair of runs."""

    baseline: str
    candidate: str
    dimension: str
    group: str
    metric: str
    n: int
    delta: float
    p_value: float | None
    p_adjusted: float | None = None
    significant: bool | None = None


def query_groups(line: Mapping[str, Any]) -> dict[str, list[str]]:
    """The breakdown groups of one query (dimension → groups), from its ``per_query.jsonl`` line."""
    out: dict[str, list[str]] = {}
    for key, dimension in DIMENSION_KEYS.items():
        value = line.get(key)
        if isinstance(value, list):
            groups = [str(v) for v in value]
        elif value is not None and not isinstance(value, dict):
            groups = [str(value)]
        else:
            continue
        if groups:
            out[dimension] = groups
    if isinstance(line.get("answerable"), bool):
        out["answerable"] = ["true" if line["answerable"] else "false"]
    return out


def breakdown_cells(
    comparisons: Sequence[Comparison],
    results: Mapping[str, EvalResult],
    groups_of: Mapping[str, Mapping[str, list[str]]],
    *,
    n_resamples: int,
    seed: int,
) -> list[BreakdownCell]:
    """Every cell of every pair: ``results`` by run name (paired on the same queries), ``groups_of`` by query."""
    groups: dict[str, dict[str, list[str]]] = {}
    first = next(iter(results.values()))
    for qid in first.per_query:
        for dimension, values in groups_of.get(qid, {}).items():
            for value in values:
                groups.setdefault(dimension, {}).setdefault(value, []).append(qid)
    cells: list[BreakdownCell] = []
    for c in comparisons:
        base, cand = results[c.baseline], results[c.candidate]
        for m in c.metrics:
            if m.statistic != "mean" or is_operational(m.metric) or m.n_pairs == 0:
                continue
            for dimension, by_value in groups.items():
                for value, qids in by_value.items():
                    diffs = [
                        cv - bv
                        for q in qids
                        if (bv := base.per_query[q].get(m.metric)) is not None
                        and (cv := cand.per_query[q].get(m.metric)) is not None
                    ]
                    if len(diffs) < MIN_GROUP:
                        continue
                    cells.append(
                        BreakdownCell(
                            baseline=c.baseline,
                            candidate=c.candidate,
                            dimension=dimension,
                            group=value,
                            metric=m.metric,
                            n=len(diffs),
                            delta=float(np.mean(diffs)),
                            p_value=permutation_pvalue(diffs, n_permutations=n_resamples, seed=seed),
                        )
                    )
    return cells
