"""Read a results folder: ``metrics.json`` (an :class:`~ragmeter.results.EvalResult`) and ``config.json``.

The JSON that ``ragmeter agentic --out`` writes is read too: each trace is a query
whose values are its series at i = N, and the per-iteration averages are kept for
the report's curves.

>>> import tempfile
>>> from ragmeter.results import EvalResult
>>> d = EvalResult(aggregate={"mrr": 1.0}, per_query={"q": {"mrr": 1.0}}, n_queries=1,
...                n_scored={"mrr": 1}, n_skipped={"mrr": 0}).write(tempfile.mkdtemp())
>>> load_results(d).result.aggregate
{'mrr': 1.0}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragmeter.errors import InputError
from ragmeter.io.records import describe_validation_error
from ragmeter.results import SCHEMA_VERSION, EvalResult


@dataclass(frozen=True)
class LoadedResults:
    """A results folder as read from disk."""

    path: Path
    result: EvalResult
    config: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    """The metrics JSON as read (agentic results: as :func:`agentic_as_metrics` gives it)."""
    rows: list[dict[str, Any]] | None = None
    """Per-query rows for the drill-down when they come with the JSON (agentic traces)."""
    name: str = ""
    """The label when the results were named by a file other than ``metrics.json``."""

    @property
    def label(self) -> str:
        """A short name for tables: the folder name (or the file's, for a JSON named on its own)."""
        return self.name or self.path.resolve().name or str(self.path)


def load_results(path: str | Path) -> LoadedResults:
    """Load ``metrics.json`` (required) and ``config.json`` (optional) from a results folder.

    A path to a ``metrics.json`` file is accepted too.
    """
    path = Path(path)
    folder = path.parent if path.is_file() else path
    metrics_file = path if path.is_file() else path / "metrics.json"
    if not folder.exists():
        raise InputError("results folder not found", where=str(folder))
    if not metrics_file.is_file():
        raise InputError("no metrics.json here; is this a ragmeter results folder?", where=str(folder))
    try:
        data = json.loads(metrics_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg})", where=f"{metrics_file}:{exc.lineno}") from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", where=str(metrics_file))
    version = str(data.get("schema_version", ""))
    if version and version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise InputError(
            f"results schema version {version} is not readable by this ragmeter (reads {SCHEMA_VERSION})",
            where=str(metrics_file),
        )
    rows = None
    if data.get("kind") == "agentic":
        data, rows = agentic_as_metrics(data, where=str(metrics_file))
    try:
        result = EvalResult.model_validate(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc), where=str(metrics_file)) from None
    config: dict[str, Any] = {}
    config_file = folder / "config.json"
    if config_file.is_file():
        try:
            loaded = json.loads(config_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON ({exc.msg})", where=f"{config_file}:{exc.lineno}") from None
        config = loaded if isinstance(loaded, dict) else {}
    name = metrics_file.stem if metrics_file.name != "metrics.json" else ""
    return LoadedResults(folder, result, config, data, rows, name)


ITERATIONS_FOR_ALL_GOOD = "IterationsForAllGoodResults"
"""Its per-trace value is the trace's ``iterations_for_all_good`` (not in ``at_n``)."""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def agentic_as_metrics(data: dict[str, Any], *, where: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An agentic result as a metrics JSON (traces as queries, values at i = N) plus drill-down rows.

    >>> doc = {"kind": "agentic", "aggregate": {"averages_at_n": {"CG": 3.0, "IterationsForAllGoodResults": 2.0},
    ...        "n_at_n": {"CG": 1}, "averages_by_iteration": {"CG": [1.0, 3.0]}, "traces_by_iteration": [1, 1]},
    ...        "traces": [{"trace_id": "t", "status": "scored", "n_iterations": 2, "at_n": {"CG": 3.0},
    ...                    "iterations_for_all_good": 2}]}
    >>> metrics, rows = agentic_as_metrics(doc, where="a.json")
    >>> metrics["aggregate"], metrics["per_query"], metrics["agentic"]["averages_by_iteration"]
    ({'CG': 3.0, 'IterationsForAllGoodResults': 2.0}, {'t': {'CG': 3.0, 'IterationsForAllGoodResults': 2.0}}, {'CG': [1.0, 3.0]})
    """
    aggregate = data.get("aggregate")
    traces = data.get("traces")
    if not isinstance(aggregate, dict) or not isinstance(traces, list):
        raise InputError("agentic result without 'aggregate' and 'traces'", where=where)
    at_n = aggregate.get("averages_at_n") or {}
    names = [name for name in at_n if not isinstance(at_n[name], (dict, list))]
    per_query: dict[str, dict[str, float | None]] = {}
    rows: list[dict[str, Any]] = []
    for trace in traces:
        if not isinstance(trace, dict):
            continue
        trace_id = str(trace.get("trace_id"))
        values = {**(trace.get("at_n") or {}), ITERATIONS_FOR_ALL_GOOD: trace.get("iterations_for_all_good")}
        unscored: dict[str, str] = {}
        if trace.get("status") == "scored":
            per_query[trace_id] = {name: _number(values.get(name)) for name in names}
            reason = trace.get("iterations_for_all_good_reason")
            if ITERATIONS_FOR_ALL_GOOD in names and values[ITERATIONS_FOR_ALL_GOOD] is None and reason:
                unscored[ITERATIONS_FOR_ALL_GOOD] = str(reason)
        else:
            reason = str(trace.get("reason") or trace.get("status"))
            unscored = dict.fromkeys(names, reason)
        rows.append(
            {"id": trace_id, "metrics": per_query.get(trace_id, {}), "unscored": unscored, "trace": trace}
        )
    n_at_n = aggregate.get("n_at_n") or {}
    metrics = {
        "schema_version": SCHEMA_VERSION,
        "aggregate": {name: _number(at_n[name]) for name in names},
        "per_query": per_query,
        "n_queries": len(traces),
        "n_scored": {name: int(n_at_n.get(name) or 0) for name in names},
        "n_skipped": {name: len(traces) - int(n_at_n.get(name) or 0) for name in names},
        "warnings": list(data.get("warnings") or []),
        "provenance": dict(data.get("provenance") or {}),
        "agentic": {
            "averages_by_iteration": aggregate.get("averages_by_iteration") or {},
            "n_by_iteration": aggregate.get("n_by_iteration") or {},
            "traces_by_iteration": aggregate.get("traces_by_iteration") or [],
            "redundancy": aggregate.get("redundancy"),
            "counts": aggregate.get("counts"),
        },
    }
    return metrics, rows
