"""The report's charts as data: history trends (one suite, one dataset) and agentic curves.

>>> from ragmeter.report.history import HistoryEntry
>>> runs = [HistoryEntry(i, f"2026-01-0{i}T00:00", "demo", None, None, 3, {"mrr": 0.5 + i / 10},
...                      "demo", "tests.yaml", "a" if i < 3 else "b") for i in (1, 2, 3)]
>>> view = history_view(runs, ["mrr"], suite="demo", dataset=("tests.yaml", "b"), created_at="")
>>> [(r.id, r.dataset_changed) for r in view.runs], len(view.panels)
([(1, False), (2, False), (3, True)], 1)
>>> curves = agentic_curves({"averages_by_iteration": {"CG": [1.0, 2.0], "R": [3, 1]}})
>>> [(c.name, c.group) for c in curves]
[('CG', 'metric'), ('R', 'count')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.report.charts import panel
from ragmeter.report.history import HistoryEntry, same_series
from ragmeter.report.units import is_operational

HISTORY_PANELS = 12
"""At most this many metric trends (quality metrics first)."""


@dataclass(frozen=True)
class Panel:
    """One small chart: a metric's name, a line of description, and the SVG."""

    name: str
    svg: str
    note: str = ""
    group: str = "metric"


@dataclass(frozen=True)
class HistoryRun:
    """A row of the history's run table."""

    id: int
    when: str
    label: str
    git_revision: str
    n_queries: int
    dataset_sha256: str
    dataset_changed: bool
    this_run: bool


@dataclass
class HistoryView:
    """The runs of this suite and dataset, a trend panel per metric, and what was left out."""

    suite: str | None
    dataset: str | None
    runs: list[HistoryRun] = field(default_factory=list)
    panels: list[Panel] = field(default_factory=list)
    left_out: int = 0


def history_view(
    entries: Sequence[HistoryEntry],
    names: Sequence[str],
    *,
    suite: str | None,
    dataset: tuple[str | None, str | None],
    created_at: str,
) -> HistoryView:
    """Trends over the recorded runs of ``suite`` on the dataset file ``dataset[0]``.

    A run whose dataset SHA-256 differs from the run before it is marked "dataset changed"
    (in the table and as a dashed line in every panel); the run made at ``created_at`` is
    ringed as this run.
    """
    name, sha = dataset
    kept = same_series(list(entries), suite=suite, dataset_name=name)
    view = HistoryView(suite, name, left_out=len(entries) - len(kept))
    previous: str | None = None
    markers: dict[int, str] = {}
    this_run: int | None = None
    for i, e in enumerate(kept):
        changed = i > 0 and e.dataset_sha256 != previous
        if changed:
            markers[i] = "dataset changed"
        previous = e.dataset_sha256
        mine = bool(created_at) and e.created_at == created_at and (sha is None or e.dataset_sha256 == sha)
        this_run = i if mine else this_run
        view.runs.append(
            HistoryRun(
                e.id,
                e.created_at.replace("T", " ")[:16],
                e.label,
                (e.git_revision or "")[:10],
                e.n_queries,
                (e.dataset_sha256 or "")[:12],
                changed,
                mine,
            )
        )
    if len(kept) < 2:
        return view
    recorded = [n for n in names if any(e.aggregate.get(n) is not None for e in kept)]
    picked = sorted(recorded, key=is_operational)[:HISTORY_PANELS]
    labels = [str(e.id) for e in kept]
    for metric in picked:
        svg = panel(
            [e.aggregate.get(metric) for e in kept],
            title=metric,
            x_title="run",
            y_title=metric,
            labels=labels,
            markers=markers,
            highlight=this_run,
        )
        view.panels.append(Panel(metric, svg))
    return view


def agentic_curves(agentic: Mapping[str, Any]) -> list[Panel]:
    """One panel per series of the per-iteration averages: metrics first, then counts.

    The note under each panel says what the series means and how many traces reach each iteration.
    """
    from ragmeter.agentic.metrics import SERIES

    specs = {s.name: s for s in SERIES}
    curves = agentic.get("averages_by_iteration") or {}
    counts = agentic.get("n_by_iteration") or {}
    panels = []
    for name, values in curves.items():
        if not isinstance(values, list) or not values:
            continue
        spec = specs.get(name)
        y_title = spec.notation if spec is not None else name
        n = counts.get(name)
        note = spec.description if spec is not None else ""
        if isinstance(n, list) and n:
            note += (
                f" (traces per iteration: {', '.join(str(c) for c in n[:12])}{' …' if len(n) > 12 else ''})"
            )
        svg = panel(values, title=name, x_title="iteration i", y_title=y_title)
        panels.append(Panel(name, svg, note, spec.kind if spec is not None else "metric"))
    return sorted(panels, key=lambda p: p.group != "metric")
