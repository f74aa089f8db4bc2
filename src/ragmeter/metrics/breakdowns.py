"""Breakdowns: every metric's aggregate and count within each tag, category, difficulty, vault, answerable.

The shape is ``dimension → value → metric → {"mean": aggregate, "n": scored}``.
``mean`` is the metric's own aggregate over the group (the mean; for
``latency_pNN`` the percentile). A sample with several tags counts in each.
Groups where a metric scored nothing leave that metric out. ``answerable``
appears when the dataset sets it on some sample.

>>> from ragmeter.schema.samples import Sample
>>> samples = [Sample.model_validate({"id": "a", "category": "factual", "tags": ["work", "code"]}),
...            Sample.model_validate({"id": "b", "category": "multi_hop", "tags": ["work"]})]
>>> sample_dimensions(samples[0])
{'tags': ['work', 'code'], 'category': 'factual'}
>>> groups(samples)["tag"]["work"].tolist()
[True, True]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ragmeter.metrics.relevance import BoolArray
from ragmeter.metrics.scoring import ScoredMetric
from ragmeter.schema.samples import Sample

DIMENSIONS = ("tag", "category", "difficulty", "vault", "answerable")
REPORTED_DIMENSIONS = (*DIMENSIONS, "doc_type")
"""Every breakdown a result can hold: the sample dimensions, and hit by document type."""

Cell = dict[str, float | int | None]
Breakdowns = dict[str, dict[str, dict[str, Cell]]]


def _values(sample: Sample, dimension: str) -> list[str]:
    if dimension == "tag":
        return list(dict.fromkeys(sample.tags))
    if dimension == "answerable":
        return ["true" if sample.answerable else "false"]
    value = getattr(sample, dimension)
    return [] if value is None else [str(value)]


def sample_dimensions(sample: Sample, *, answerable: bool | None = None) -> dict[str, Any]:
    """The dimension values a sample sets, as written to its ``per_query.jsonl`` line.

    ``answerable`` is included when the sample sets it, or always when
    ``answerable=True`` (the run breaks down by it); ``answerable=False`` leaves it out.
    """
    out: dict[str, Any] = {}
    if sample.tags:
        out["tags"] = list(sample.tags)
    for name in ("category", "difficulty", "vault"):
        value = getattr(sample, name)
        if value is not None:
            out[name] = value
    if answerable or (answerable is None and "answerable" in sample.model_fields_set):
        out["answerable"] = sample.answerable
    return out


def groups(samples: Sequence[Sample]) -> dict[str, dict[str, BoolArray]]:
    """For each dimension present in the data, each value's mask over the samples (first-seen order)."""
    n = len(samples)
    out: dict[str, dict[str, BoolArray]] = {}
    for dimension in DIMENSIONS:
        if dimension == "answerable" and not any("answerable" in s.model_fields_set for s in samples):
            continue
        masks: dict[str, BoolArray] = {}
        for q, sample in enumerate(samples):
            for value in _values(sample, dimension):
                masks.setdefault(value, np.zeros(n, dtype=bool))[q] = True
        if masks:
            out[dimension] = masks
    return out


def breakdowns(scored: Sequence[ScoredMetric], samples: Sequence[Sample]) -> Breakdowns:
    """Every metric's aggregate and scored count within every group of every dimension."""
    out: Breakdowns = {}
    for dimension, masks in groups(samples).items():
        by_value: dict[str, dict[str, Cell]] = {}
        for value, mask in masks.items():
            cells: dict[str, Cell] = {}
            for metric in scored:
                n = int(np.count_nonzero(metric.scored & mask))
                if n:
                    cells[metric.name] = {"mean": metric.aggregate_over(mask), "n": n}
            by_value[value] = cells
        out[dimension] = by_value
    return out
