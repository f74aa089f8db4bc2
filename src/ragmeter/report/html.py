"""The HTML report: one self-contained file (inline CSS, JS and SVG) that opens offline.

It shows the summary table, breakdowns, operational numbers (latency, cost,
error rates), judge reliability, agentic per-iteration curves and the history
trend when present, and a per-query drill-down.

>>> import tempfile, pathlib
>>> from ragmeter.results import EvalResult
>>> d = EvalResult(aggregate={"mrr": 0.5}, per_query={"q": {"mrr": 0.5}}, n_queries=1,
...                n_scored={"mrr": 1}, n_skipped={"mrr": 0}).write(tempfile.mkdtemp())
>>> page = render_report(d)
>>> page.startswith("<!DOCTYPE html>") and 'data-metric="mrr"' in page
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from ragmeter import __version__
from ragmeter.report.charts import bar_chart, line_chart
from ragmeter.report.history import HistoryEntry
from ragmeter.report.results_dir import load_results

MAX_DRILLDOWN = 2000
OPERATIONAL_PREFIXES = ("latency", "cost", "tokens", "error_rate", "timeout_rate", "empty_response_rate")
KNOWN_KEYS = {
    "schema_version", "aggregate", "per_query", "n_queries", "n_scored", "n_skipped", "n_missing_output",
    "warnings", "provenance", "breakdowns",
}  # fmt: skip


def _fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _summary_rows(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    info = metrics.get("provenance", {}).get("metrics", {})
    reliability = metrics.get("judge_reliability") or {}
    rows = []
    for name, mean in metrics.get("aggregate", {}).items():
        rel = reliability.get(name) if isinstance(reliability, dict) else None
        rows.append(
            {
                "name": name,
                "mean": mean,
                "mean_text": _fmt(mean),
                "n_scored": metrics.get("n_scored", {}).get(name, ""),
                "n_skipped": metrics.get("n_skipped", {}).get(name, ""),
                "k": (info.get(name) or {}).get("k"),
                "operational": name.startswith(OPERATIONAL_PREFIXES),
                "reliability": rel if isinstance(rel, dict) else None,
            }
        )
    return rows


def _breakdowns(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for dimension, by_value in (metrics.get("breakdowns") or {}).items():
        if not isinstance(by_value, dict) or not by_value:
            continue
        names: list[str] = list(dict.fromkeys(m for cell in by_value.values() for m in (cell or {})))
        rows = []
        for value, cell in by_value.items():
            rows.append(
                {
                    "value": value,
                    "cells": [
                        (_fmt((cell.get(m) or {}).get("mean")), (cell.get(m) or {}).get("n", ""))
                        for m in names
                    ],
                }
            )
        first = names[0] if names else None
        chart = (
            bar_chart([(str(v), ((c or {}).get(first) or {}).get("mean")) for v, c in by_value.items()])
            if first
            else ""
        )
        out.append(
            {"dimension": dimension, "metrics": names, "rows": rows, "chart": chart, "chart_metric": first}
        )
    return out


def _agentic_chart(metrics: dict[str, Any]) -> str:
    agentic = metrics.get("agentic")
    if not isinstance(agentic, dict):
        return ""
    curves = agentic.get("averages_by_iteration") or agentic.get("per_iteration") or {}
    if not isinstance(curves, dict):
        return ""
    series = {k: v for k, v in curves.items() if isinstance(v, list) and v and k in _AGENTIC_PLOTTED}
    if not series:
        series = {k: v for k, v in curves.items() if isinstance(v, list) and v}
    return line_chart(dict(list(series.items())[:8])) if series else ""


_AGENTIC_PLOTTED = (
    "CG",
    "RG",
    "DCG",
    "DRG",
    "RAG",
    "DRAG",
    "SRE",
    "SRR",
    "cg",
    "rg",
    "rag",
    "drag",
    "sre",
    "srr",
)


def _history_chart(history: Sequence[HistoryEntry] | None, names: list[str]) -> str:
    if not history or len(history) < 2:
        return ""
    picked = [n for n in names if not n.startswith(OPERATIONAL_PREFIXES)][:6]
    series = {n: [e.aggregate.get(n) for e in history] for n in picked}
    return line_chart(series, labels=[str(e.id) for e in history])


def _drilldown(rows: list[dict[str, Any]], metric_names: list[str]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        values = row.get("metrics") or {}
        details = {k: v for k, v in row.items() if k not in {"id", "metrics"}}
        retrieved = details.pop("retrieved", None)
        raw_output = details.get("output")
        output: dict[str, Any] = raw_output if isinstance(raw_output, dict) else {}
        if retrieved is None:
            retrieved = output.get("retrieved")
        out.append(
            {
                "id": str(row.get("id", "")),
                "cells": [_fmt(values.get(m)) for m in metric_names],
                "question": details.pop("question", None) or details.pop("input", None),
                "answer": details.pop("answer", None) or output.get("answer"),
                "retrieved": retrieved if isinstance(retrieved, list) else [],
                "details": json.dumps(details, indent=2, ensure_ascii=False, default=str) if details else "",
            }
        )
    return out


def render_report(results_dir: str | Path, *, history: Sequence[HistoryEntry] | None = None) -> str:
    """Render a results folder as one HTML page (returned as a string)."""
    loaded = load_results(results_dir, max_rows=MAX_DRILLDOWN)
    metrics = loaded.metrics
    summary = _summary_rows(metrics)
    names = [r["name"] for r in summary]
    all_rows = loaded.rows or []
    rows, total = all_rows[:MAX_DRILLDOWN], loaded.n_rows if loaded.n_rows is not None else len(all_rows)
    extra = {
        k: v for k, v in metrics.items() if k not in KNOWN_KEYS and k not in {"judge_reliability", "agentic"}
    }
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    template = env.from_string(
        resources.files("ragmeter.report").joinpath("templates/report.html.j2").read_text(encoding="utf-8")
    )
    suite = loaded.config.get("suite", {}) if isinstance(loaded.config.get("suite"), dict) else {}
    return template.render(
        title=str(suite.get("name") or loaded.label),
        created_at=metrics.get("provenance", {}).get("created_at", ""),
        version=__version__,
        results_version=metrics.get("provenance", {}).get("ragmeter_version", ""),
        n_queries=metrics.get("n_queries", 0),
        n_missing_output=metrics.get("n_missing_output", 0),
        quality=[r for r in summary if not r["operational"]],
        operational=[r for r in summary if r["operational"]],
        breakdowns=_breakdowns(metrics),
        reliability=metrics.get("judge_reliability"),
        agentic_chart=_agentic_chart(metrics),
        history_chart=_history_chart(history, names),
        warnings=metrics.get("warnings", []),
        extra_sections={
            k: json.dumps(v, indent=2, ensure_ascii=False, default=str) for k, v in extra.items()
        },
        provenance=json.dumps(metrics.get("provenance", {}), indent=2, ensure_ascii=False, default=str),
        config=json.dumps(loaded.config, indent=2, ensure_ascii=False, default=str) if loaded.config else "",
        metric_names=names,
        queries=_drilldown(rows, names),
        n_queries_listed=len(rows),
        n_queries_total=total,
        fmt=_fmt,
    )


def report_target(results_dir: str | Path, out: str | Path | None = None) -> Path:
    """Where :func:`write_report` writes: ``out`` (``out/report.html`` for a folder), else next to metrics.json.

    A path that cannot be a file (under a file) is an :class:`~ragmeter.errors.InputError`.
    """
    from ragmeter.io.records import check_output_file

    results = Path(results_dir)
    folder = results.parent if results.is_file() else results
    target = folder / "report.html" if out is None else Path(out)
    if target.is_dir():
        target = target / "report.html"
    return check_output_file(target)


def write_report(results_dir: str | Path, out: str | Path | None = None, **kwargs: Any) -> Path:
    """Write the report (default ``report.html`` in the results folder) and return its path.

    ``results_dir`` may also be the path of a ``metrics.json``; ``out`` may be a folder.
    The page is rendered before anything is written, so a bad results folder leaves no file behind.
    """
    target = report_target(results_dir, out)
    page = render_report(results_dir, **kwargs)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return target
