"""The HTML report: one self-contained file (inline CSS, JS and SVG) that opens offline from ``file://``.

Sections: summary, breakdowns (metrics as rows, categories as columns),
operations and index coverage (tables with units), judge setup and
reliability, history trend (this suite and dataset only), agentic curves (one
panel per metric) and the per-query drill-down. The tables are rendered here;
the queries are embedded once as compact JSON (:mod:`ragmeter.report.query_data`)
and drawn by the page's script a page at a time, so 10,000 queries stay usable.

Adding a view (the compare view is one: ``_compare.html.j2``, ``compare.js``): pass its data as
``views={"<key>": ...}`` (it reaches the script as ``DATA.<key>``), add a
partial ``templates/_<key>.html.j2`` holding ``<section data-view="<key>">``,
name it in :data:`SECTIONS`, and register ``window.ragmeterViews.<key> = function (root, DATA)``
in a script listed in :data:`SCRIPTS` (docs/report.md).

>>> import tempfile, pathlib
>>> from ragmeter.results import EvalResult
>>> d = EvalResult(aggregate={"mrr": 0.5}, per_query={"q": {"mrr": 0.5}}, n_queries=1,
...                n_scored={"mrr": 1}, n_skipped={"mrr": 0}).write(tempfile.mkdtemp())
>>> page = render_report(d)
>>> page.startswith("<!DOCTYPE html>") and 'data-metric="mrr"' in page
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from ragmeter import __version__
from ragmeter.report import sections
from ragmeter.report.curves import HistoryView, Panel, agentic_curves, history_view
from ragmeter.report.history import HistoryEntry, dataset_identity
from ragmeter.report.query_data import build_query_data
from ragmeter.report.results_dir import LoadedResults, load_results
from ragmeter.report.sources import read_sources
from ragmeter.report.text_budget import dumps
from ragmeter.report.units import is_operational, metric_direction, metric_unit

SECTIONS = (
    ("compare", "Compare"),
    ("summary", "Summary"),
    ("breakdowns", "Breakdowns"),
    ("operations", "Operations"),
    ("index", "Index coverage"),
    ("judge", "Judge"),
    ("agentic", "Agentic curves"),
    ("history", "History"),
    ("extra", "Other sections"),
    ("queries", "Queries"),
    ("provenance", "Provenance"),
)
"""Every section in page order: its id (and partial ``_<id>.html.j2``) and its title."""
SCRIPTS = ("report.js", "compare.js")
"""The page's scripts, inlined in this order (``templates/``)."""
HEADLINE_METRICS = 4
"""Metric columns of the query table (the most-scored quality metrics); the drill-down shows all."""
TEXT_KINDS = {
    "chunk_text": "chunk texts",
    "answer": "answers",
    "raw_reply": "raw judge replies",
    "rationale": "judge rationales",
}
"""How the page names each kind of long text it may shorten."""
KNOWN_KEYS = {
    "schema_version", "aggregate", "per_query", "n_queries", "n_scored", "n_skipped", "n_missing_output",
    "warnings", "provenance", "breakdowns", "operational", "index_coverage", "judge_reliability", "agentic",
}  # fmt: skip


@dataclass
class ReportPage:
    """Everything the template shows; ``data`` is embedded as JSON for the script."""

    title: str
    metrics: dict[str, Any]
    config: dict[str, Any]
    data: dict[str, Any]
    history: HistoryView | None = None
    agentic: list[Panel] = field(default_factory=list)
    shown: list[tuple[str, str]] = field(default_factory=list)


def _template(name: str) -> str:
    return resources.files("ragmeter.report").joinpath(f"templates/{name}").read_text(encoding="utf-8")


def _rows(loaded: LoadedResults) -> list[dict[str, Any]]:
    """The drill-down rows: ``per_query.jsonl`` or the agentic traces as :func:`load_results` checked them."""
    if loaded.rows is not None:
        return loaded.rows
    return [{"id": qid, "metrics": values} for qid, values in loaded.result.per_query.items()]


def _metric_specs(metrics: dict[str, Any]) -> list[dict[str, Any]]:
    info = sections.nested(metrics, "provenance", "metrics")
    return [
        {
            "name": name,
            "unit": metric_unit(name).as_json(),
            "hi": metric_direction(name),
            "op": is_operational(name),
            "skip": (info.get(name) or {}).get("skip_reason"),
        }
        for name in metrics.get("aggregate") or {}
    ]


AGENTIC_HEADLINE = ("CG", "DCG", "SRE", "SRR", "IterationsForAllGoodResults")


def _headline(specs: list[dict[str, Any]], metrics: dict[str, Any]) -> list[int]:
    if "agentic" in metrics:
        return [i for i, s in enumerate(specs) if s["name"] in AGENTIC_HEADLINE]
    scored = metrics.get("n_scored") or {}
    quality = [i for i, s in enumerate(specs) if not s["op"]] or list(range(len(specs)))
    best = sorted(quality, key=lambda i: -int(scored.get(specs[i]["name"]) or 0))[:HEADLINE_METRICS]
    return sorted(best)


def build_page(
    results_dir: str | Path,
    *,
    history: Sequence[HistoryEntry] | None = None,
    views: Mapping[str, Any] | None = None,
) -> ReportPage:
    """Read a results folder (and the files it names) into a :class:`ReportPage`.

    ``views`` adds the data of further views (``{"compare": ...}``): each reaches the page's
    script as ``DATA.<name>``, and its section is shown when :data:`SECTIONS` names it.
    """
    loaded = load_results(results_dir, max_rows=None)
    metrics, config = loaded.metrics, loaded.config
    rows = _rows(loaded)
    sources = read_sources(
        loaded.path, metrics=metrics, config=config, judges_in_rows=any("judges" in r for r in rows[:50])
    )
    specs = _metric_specs(metrics)
    provenance = sections.nested(metrics, "provenance")
    settings = sections.nested(provenance, "settings")
    data = build_query_data(
        rows,
        [s["name"] for s in specs],
        sources,
        snippet_matching=settings.get("snippet_matching") is not False,
        default_k=settings.get("k") or settings.get("default_k"),
    )
    data |= {
        "kind": "agentic" if "agentic" in metrics else "rag",
        "metrics": specs,
        "headline": _headline(specs, metrics),
        "notes": sources.notes,
        **(views or {}),
    }
    suite = sections.nested(config, "suite")
    page = ReportPage(str(suite.get("name") or loaded.label), metrics, config, data)
    dataset = dataset_identity(dict(provenance))
    if history is not None and dataset[0] is not None:
        page.history = history_view(
            history,
            list(metrics.get("aggregate") or {}),
            suite=suite.get("name"),
            dataset=dataset,
            created_at=str(provenance.get("created_at") or ""),
        )
    if isinstance(metrics.get("agentic"), dict):
        page.agentic = agentic_curves(metrics["agentic"])
    present = {
        "summary": True,
        "breakdowns": bool(metrics.get("breakdowns")),
        "operations": bool(metrics.get("operational")) or any(s["op"] for s in specs),
        "index": metrics.get("index_coverage") is not None,
        "judge": bool(provenance.get("judge") or metrics.get("judge_reliability")),
        "agentic": bool(page.agentic),
        "history": page.history is not None,
        "extra": any(k not in KNOWN_KEYS for k in metrics),
        "queries": True,
        "provenance": True,
    }
    page.shown = [(key, title) for key, title in SECTIONS if present.get(key, key in data)]
    return page


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its ``<script>`` element early."""
    text = dumps(data)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_report(
    results_dir: str | Path,
    *,
    history: Sequence[HistoryEntry] | None = None,
    views: Mapping[str, Any] | None = None,
) -> str:
    """Render a results folder as one HTML page (returned as a string).

    ``history`` is every recorded run; the page keeps those of the same suite and dataset.
    ``views``: see :func:`build_page`.
    """
    page = build_page(results_dir, history=history, views=views)
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("ragmeter.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    return env.get_template("report.html.j2").render(
        page=page,
        m=page.metrics,
        meta=_header_facts(page.metrics),
        version=__version__,
        **sections.tables(page.metrics, page.config, known=KNOWN_KEYS),
        data_json=_json_for_script(page.data),
        text_kinds=TEXT_KINDS,
        style=_template("report.css"),
        scripts=[_template(name) for name in SCRIPTS],
    )


def _header_facts(metrics: Mapping[str, Any]) -> dict[str, str | None]:
    """The provenance facts the page's header shows, each a text or ``None`` (odd shapes are left out)."""
    provenance = sections.nested(metrics, "provenance")
    dataset = sections.nested(provenance, "inputs", "dataset")
    facts = {
        "dataset": dataset.get("path"),
        "dataset_sha256": dataset.get("sha256"),
        "created_at": provenance.get("created_at"),
        "ragmeter_version": provenance.get("ragmeter_version"),
    }
    return {key: value if isinstance(value, str) and value else None for key, value in facts.items()}


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
    from ragmeter.io.atomic import write_text_atomic

    target = report_target(results_dir, out)
    page = render_report(results_dir, **kwargs)
    return write_text_atomic(target, page)
