"""Putting an evaluation's result together: per-query values, aggregates, counts and provenance.

>>> base_provenance(None, k=10)["settings"]
{'k': 10}
"""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter import __version__
from ragmeter.metrics.scoring import ScoredMetric

if TYPE_CHECKING:
    from ragmeter.results import EvalResult

AGGREGATES = {"sum": "sum", "geometric": "geometric mean (each value at least 0.00001)"}
"""How the provenance names an aggregate that is not the mean."""


def result_fields(
    query_ids: list[str],
    scored: list[ScoredMetric],
    *,
    warnings: list[str],
    provenance: dict[str, Any],
    n_missing_output: int = 0,
) -> dict[str, Any]:
    """The fields of the result of scored metrics over ``query_ids`` (:func:`assemble_result` without the model)."""
    per_query: dict[str, dict[str, float | None]] = {qid: {} for qid in query_ids}
    for metric in scored:
        values = metric.values.tolist()
        mask = metric.scored.tolist()
        for qid, value, ok in zip(query_ids, values, mask, strict=True):
            per_query[qid][metric.name] = value if ok else None
    provenance = {
        **provenance,
        "metrics": {
            m.name: {
                "requested": m.requested,
                "k": m.k,
                **({"k_source": m.k_source} if m.k_source else {}),
                **({"aggregate": f"p{m.percentile:g}"} if m.percentile is not None else {}),
                **({"aggregate": AGGREGATES[m.aggregate]} if m.aggregate != "mean" else {}),
                **({"skip_reason": m.skip_reason} if m.n_skipped else {}),
                **({"skip_reasons": m.skip_reasons} if len(m.skip_reasons) > 1 else {}),
            }
            for m in scored
        },
    }
    return {
        "aggregate": {m.name: m.value for m in scored},
        "per_query": per_query,
        "n_queries": len(query_ids),
        "n_scored": {m.name: m.n_scored for m in scored},
        "n_skipped": {m.name: m.n_skipped for m in scored},
        "n_missing_output": n_missing_output,
        "warnings": warnings,
        "provenance": provenance,
    }


def assemble_result(
    query_ids: list[str],
    scored: list[ScoredMetric],
    *,
    warnings: list[str],
    provenance: dict[str, Any],
    n_missing_output: int = 0,
) -> EvalResult:
    """The result of scored metrics over ``query_ids``: aggregates, per-query values, counts, provenance."""
    from ragmeter.results import EvalResult  # pydantic: the quick start needs only the fields

    fields = result_fields(
        query_ids, scored, warnings=warnings, provenance=provenance, n_missing_output=n_missing_output
    )
    return EvalResult(**fields)


def base_provenance(cfg_path: Path | None, **settings: Any) -> dict[str, Any]:
    """What every result records: versions, the time, the config file and the ``settings`` used."""
    return {
        "ragmeter_version": __version__,
        "python": platform.python_version(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "config_file": str(cfg_path) if cfg_path else None,
        "settings": settings,
    }
