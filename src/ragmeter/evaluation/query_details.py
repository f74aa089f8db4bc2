"""The per-query and sectioned views of a dataset evaluation: breakdowns, operational summary, query details.

:func:`query_views` is what ``per_query.jsonl`` shows of each query besides its values: the
input, the output's answer fields and the top ranked items with their match marks.

>>> RETRIEVED_SHOWN, TEXT_SHOWN
(20, 300)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragmeter.matching.ids import repeated_positions
from ragmeter.metrics.breakdowns import breakdowns, sample_dimensions
from ragmeter.metrics.operational import OPERATIONAL_FAMILIES, operational_summary
from ragmeter.metrics.rag import doc_type_coverage
from ragmeter.metrics.records import RagBatch
from ragmeter.metrics.relevance import RelevanceTable
from ragmeter.metrics.scoring import ScoredMetric
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.samples import Sample

RETRIEVED_SHOWN = 20
"""How many ranked items of each query ``per_query.jsonl`` shows (with their match marks)."""
TEXT_SHOWN = 300
OUTPUT_SUMMARY_FIELDS = ("answer", "abstained", "references", "error", "timed_out", "latency")


def rag_sections(
    scored: list[ScoredMetric],
    records: RagBatch,
    sample_k: np.ndarray[Any, np.dtype[np.int64]],
    default_k: int,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, Any]]]:
    """Breakdowns (with doc types), the operational summary, and per-query details."""
    samples = records.samples
    split = breakdowns(scored, samples)
    hit = next((m for m in scored if m.name.startswith("hit@")), None)
    if hit is not None and any(f is not None for f in records.facts):
        k = sample_k if isinstance(hit.k, str) else np.full(len(samples), hit.k, dtype=np.int64)
        k = np.where(k > 0, k, default_k)
        coverage = doc_type_coverage(records, k)
        if coverage:
            split["doc_type"] = {t: {hit.name: {"mean": s / n, "n": n}} for t, (s, n) in coverage.items()}
    operational: dict[str, Any] = {}
    if any(m.name.split(".")[0] in OPERATIONAL_FAMILIES for m in scored):
        cost = next((m for m in scored if m.name == "cost"), None)
        operational = operational_summary(records, cost.values[cost.scored].tolist() if cost else None)
    details: dict[str, dict[str, Any]] = {}
    per_sample = [m for m in scored if m.reasons is not None]
    if not split and not per_sample:
        return split, operational, details
    for q, sample in enumerate(samples):
        line = sample_dimensions(sample, answerable="answerable" in split)
        unscored = {m.name: m.reason_of(q) for m in per_sample if not m.scored[q]}
        if unscored:
            line["unscored"] = unscored
        if line:
            details[sample.id] = line
    return split, operational, details


def query_views(
    samples: Sequence[Sample], outputs: Mapping[str, SystemOutput], table: RelevanceTable
) -> dict[str, dict[str, Any]]:
    """Per query: its input, the output's answer fields, and the top ranked items with their gains."""
    views: dict[str, dict[str, Any]] = {}
    for q, sample in enumerate(samples):
        view: dict[str, Any] = {}
        if sample.input is not None:
            view["input"] = sample.input
        output = outputs.get(sample.id)
        if output is not None:
            dumped = output.model_dump(mode="json", exclude_none=True)
            summary = {key: dumped[key] for key in OUTPUT_SUMMARY_FIELDS if key in dumped}
            if summary:
                view["output"] = summary
            items = output.retrieved
            repeats = repeated_positions(sample.id, items, [])
            gains = table.gains[table.offsets[q] : table.offsets[q + 1]].tolist()
            shown = []
            for rank, item in enumerate(items[:RETRIEVED_SHOWN], start=1):
                entry = item.model_dump(
                    mode="json", exclude_none=True, include={"id", "rel_path", "heading_path"}
                )
                entry["rank"] = rank
                if item.text is not None:
                    entry["text"] = item.text[:TEXT_SHOWN]
                if len(gains) == len(items):
                    entry["gain"] = gains[rank - 1]
                if rank - 1 in repeats:
                    entry["repeat"] = True
                shown.append(entry)
            view["retrieved"] = shown
        if view:
            views[sample.id] = view
    return views
