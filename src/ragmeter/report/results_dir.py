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

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragmeter.errors import InputError
from ragmeter.io.jsonyaml import loads_json
from ragmeter.io.records import describe_validation_error, read_jsonl
from ragmeter.io.text_files import read_text
from ragmeter.results import SCHEMA_VERSION, EvalResult

MAX_ROWS = 2000
"""Per-query rows kept by default (all are checked); the report asks for all of them."""


@dataclass(frozen=True)
class LoadedResults:
    """A results folder as read from disk."""

    path: Path
    result: EvalResult
    config: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    """The metrics JSON as read (agentic results: as :func:`agentic_as_metrics` gives it)."""
    rows: list[dict[str, Any]] | None = None
    """Per-query rows for the drill-down: the first lines of ``per_query.jsonl``, or the agentic traces."""
    name: str = ""
    """The label when the results were named by a file other than ``metrics.json``."""

    @property
    def label(self) -> str:
        """A short name for tables: the folder name (or the file's, for a JSON named on its own)."""
        return self.name or self.path.resolve().name or str(self.path)


def load_results(path: str | Path, *, max_rows: int | None = MAX_ROWS) -> LoadedResults:
    """Load ``metrics.json`` (required), ``config.json`` and ``per_query.jsonl`` (optional) from a results folder.

    A path to a ``metrics.json`` file is accepted too. Every file is checked: malformed JSON, a
    value that is not a number or null (NaN and infinity included), or a ``per_query.jsonl``
    that does not hold exactly the queries of ``metrics.json`` is an :class:`InputError` naming
    the file, the line and the field; results are never reported, compared or gated half-read.
    The first ``max_rows`` lines of ``per_query.jsonl`` (all when ``None``) are kept as ``rows``.
    """
    path = Path(path)
    folder = path.parent if path.is_file() else path
    metrics_file = path if path.is_file() else path / "metrics.json"
    if not folder.exists():
        raise InputError("results folder not found", where=str(folder))
    if metrics_file.is_dir():
        raise InputError("is a directory, expected a file", where=str(metrics_file))
    if not metrics_file.is_file():
        raise InputError("no metrics.json here; is this a ragmeter results folder?", where=str(folder))
    data = _read_json_object(metrics_file)
    version = str(data.get("schema_version", ""))
    if version and version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise InputError(
            f"results schema version {version} is not readable by this ragmeter (reads {SCHEMA_VERSION})",
            where=str(metrics_file),
        )
    rows = None
    agentic = data.get("kind") == "agentic"
    if agentic:
        data, rows = agentic_as_metrics(data, where=str(metrics_file))
    try:
        result = EvalResult.model_validate(data, strict=True)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc), where=str(metrics_file)) from None
    config_file = folder / "config.json"
    config = _read_json_object(config_file) if config_file.exists() else {}
    rows_file = folder / "per_query.jsonl"
    if not agentic and metrics_file.name == "metrics.json" and rows_file.exists():
        rows = read_per_query_rows(rows_file, result, max_rows=max_rows)
    name = metrics_file.stem if metrics_file.name != "metrics.json" else ""
    return LoadedResults(folder, result, config, data, rows, name)


def _read_json_object(path: Path) -> dict[str, Any]:
    """A JSON file holding one object; anything else is an :class:`InputError` naming the file."""
    data = loads_json(read_text(path), source=str(path))
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type(data).__name__}", where=str(path))
    return data


def read_per_query_rows(
    path: Path, result: EvalResult, *, max_rows: int | None = MAX_ROWS
) -> list[dict[str, Any]]:
    """Check ``per_query.jsonl`` against ``result`` and return its first ``max_rows`` lines (all: ``None``).

    Each line is an object with the ``id`` of a query of ``metrics.json`` (once) and its
    ``metrics`` (numbers or null); every query has its line.
    """
    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    if not result.per_query and path.stat().st_size == 0:
        return rows  # results of no query: ragmeter writes an empty file
    for record in read_jsonl(path):
        line = record.value
        if not isinstance(line, dict):
            raise InputError(f"expected an object, got {type(line).__name__}", where=record.where)
        qid = line.get("id")
        if not isinstance(qid, str) or not qid:
            raise InputError(f"id: expected a query id (a string), got {qid!r}", where=record.where)
        if qid in seen:
            raise InputError(f"id: query {qid!r} again (first at {seen[qid]})", where=record.where)
        if qid not in result.per_query:
            raise InputError(f"id: query {qid!r} is not in metrics.json", where=record.where)
        seen[qid] = record.where
        values = line.get("metrics")
        if not isinstance(values, dict):
            raise InputError(
                f"metrics: expected an object of metric values, got {values!r}", where=record.where
            )
        for name, value in values.items():
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not (value is None or (number and math.isfinite(value))):
                raise InputError(
                    f"metrics.{name}: expected a number or null, got {value!r}", where=record.where
                )
        if max_rows is None or len(rows) < max_rows:
            rows.append(line)
    missing = [qid for qid in result.per_query if qid not in seen]
    if missing:
        raise InputError(
            f"no line for query {missing[0]!r} ({len(missing)} of the {len(result.per_query)} queries of "
            "metrics.json are missing; the file is incomplete)",
            where=str(path),
        )
    return rows


ITERATIONS_FOR_ALL_GOOD = "IterationsForAllGoodResults"
"""Its per-trace value is the trace's ``iterations_for_all_good`` (not in ``at_n``)."""


def _number(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"expected a number or null, got {value!r}", where=where)
    return float(value)


def _trace_field(name: str) -> str:
    return "iterations_for_all_good" if name == ITERATIONS_FOR_ALL_GOOD else f"at_n.{name}"


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
    for index, trace in enumerate(traces):
        if not isinstance(trace, dict) or not isinstance(trace.get("at_n") or {}, dict):
            raise InputError(f"traces[{index}]: expected an object with 'trace_id' and 'at_n'", where=where)
        trace_id = str(trace.get("trace_id"))
        values = {**(trace.get("at_n") or {}), ITERATIONS_FOR_ALL_GOOD: trace.get("iterations_for_all_good")}
        unscored: dict[str, str] = {}
        if trace.get("status") == "scored":
            per_query[trace_id] = {
                name: _number(values.get(name), f"{where}: traces[{index}].{_trace_field(name)}")
                for name in names
            }
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
        "aggregate": {
            name: _number(at_n[name], f"{where}: aggregate.averages_at_n.{name}") for name in names
        },
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
