"""Compare N runs at once: a baseline against each other run (or every pair), Holm across the whole table.

:func:`compare` is ``ragmeter.compare`` and what ``ragmeter compare A B C`` and a multi-system
``ragmeter run`` compute. Every run is paired on the queries all of them share; each pair
is compared metric by metric (:func:`~ragmeter.report.compare.compare_results`: paired
permutation test, bootstrap CI of the delta, effect size, W/T/L counts, minimum detectable
effect); the p-values of the whole table — every pair and every metric — form one family
for the correction. Per breakdown cell (a category, a tag, …) the deltas are tested too,
as a family of their own.

The table's values are each run's statistic over the shared queries it scored (the mean,
or the percentile of a ``latency_p95``). A value is *better than* another run's when their
difference is significant after the correction and goes the metric's better way; that is
what the letters of :mod:`ragmeter.report.compare_tables` show, as ranx does.

>>> from ragmeter.results import EvalResult
>>> def run(values):
...     return EvalResult(aggregate={}, per_query={f"q{i}": {"hit@1": v} for i, v in enumerate(values)},
...                       n_queries=len(values), n_scored={}, n_skipped={})
>>> mc = compare([run([0] * 20), run([1] * 20), run([0] * 19 + [1])], names=["a", "b", "c"])
>>> [(c.candidate, c.metrics[0].delta, c.metrics[0].significant) for c in mc.comparisons]
[('b', 1.0, True), ('c', 0.05, None)]
>>> mc.rows[0].values, mc.rows[0].best, mc.rows[0].better_than
({'a': 0.0, 'b': 1.0, 'c': 0.05}, ['b'], {'b': ['a']})
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field, PrivateAttr

from ragmeter.errors import ConfigError, InputError
from ragmeter.report import DEFAULT_RESAMPLES
from ragmeter.report.compare import (
    CORRECTIONS,
    Comparison,
    aggregate_percentile,
    apply_correction,
    compare_results,
    higher_is_better,
)
from ragmeter.report.compare_breakdowns import BreakdownCell, breakdown_cells, query_groups
from ragmeter.report.gate import questions
from ragmeter.report.power import ALPHA, POWER
from ragmeter.results import EvalResult

Pairs = Literal["baseline", "all"]


class TableRow(BaseModel):
    """One metric across every run."""

    metric: str
    higher_is_better: bool
    statistic: str = "mean"
    values: dict[str, float | None]
    """Each run's value over the shared queries it scored (totals-only metrics: the run total)."""
    best: list[str] = Field(default_factory=list)
    better_than: dict[str, list[str]] = Field(default_factory=dict)
    """Run → the runs it is significantly better than (after the correction)."""
    tested: bool = True
    """False for totals-only metrics (no per-query values to test)."""


class MultiComparison(BaseModel):
    """The comparison of several runs: the table, each pair's statistics, and the breakdown deltas."""

    schema_version: str = "1"
    systems: list[str]
    baseline: str
    pairs: Pairs
    alpha: float
    power: float
    confidence: float
    correction: str
    n_resamples: int
    seed: int
    n_shared_queries: int
    left_out: dict[str, int] = Field(default_factory=dict)
    """Queries of each run that are not in every run (not compared)."""
    family_size: int
    """How many p-values the correction adjusted together (pairs × metrics tested)."""
    rows: list[TableRow]
    comparisons: list[Comparison]
    breakdowns: list[BreakdownCell] = Field(default_factory=list)
    breakdown_family_size: int = 0
    notes: list[str] = Field(default_factory=list)
    delta: float | None = None
    """The change of interest (``--delta``): notes say which metrics cannot detect it."""
    _results: list[EvalResult] = PrivateAttr(default_factory=list)
    _sources: list[Path | None] = PrivateAttr(default_factory=list)

    def comparison(self, candidate: str, baseline: str | None = None) -> Comparison:
        """The pair ``baseline`` (default: the baseline) vs ``candidate``."""
        base = baseline or self.baseline
        for c in self.comparisons:
            if (c.baseline, c.candidate) == (base, candidate):
                return c
        raise KeyError(f"no comparison of {candidate!r} against {base!r}")

    def to_json(self) -> str:
        """The whole comparison as indented JSON."""
        return self.model_dump_json(indent=2)

    def to_text(self, *, width: int = 100) -> str:
        """The tables as plain text, split to fit ``width`` columns (:mod:`ragmeter.report.compare_tables`)."""
        from ragmeter.report.compare_tables import render_text

        return render_text(self, width=width)

    def to_markdown(self) -> str:
        """The tables as GitHub-flavoured markdown (best value in bold, significance as superscripts)."""
        from ragmeter.report.compare_tables import render_markdown

        return render_markdown(self)

    def to_latex(self) -> str:
        """The summary table as LaTeX (booktabs), ranx-style, with the legend as its caption."""
        from ragmeter.report.compare_tables import render_latex

        return render_latex(self)

    def write_html(self, path: str | Path, *, links: dict[str, str] | None = None) -> Path:
        """Write the HTML report with the compare view (the baseline's report, compare view first).

        ``links`` maps a run's name to a link to its own report. Needs the runs themselves: a
        comparison read back from JSON cannot be drawn.
        """
        from ragmeter.report.compare_view import write_compare_report

        if not self._results:
            raise ConfigError("this comparison does not hold its runs (read from JSON?); compare them again")
        return write_compare_report(self, path, results=self._results, sources=self._sources, links=links)

    def __str__(self) -> str:
        return self.to_text()


ResultsInput = EvalResult | str | Path


@dataclass
class _Run:
    label: str
    result: EvalResult
    source: Path | None = None
    """The results folder (or result file) the run was read from."""
    dims: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """Query id → dimension → the groups the query is in (:func:`query_groups`)."""


def _load(item: ResultsInput, index: int) -> _Run:
    if isinstance(item, EvalResult):
        dims = {qid: query_groups(details) for qid, details in item.query_details.items()}
        return _Run(f"run{index + 1}", item, None, dims)
    if isinstance(item, (str, Path)):
        from ragmeter.report.results_dir import load_results

        loaded = load_results(item, max_rows=None)
        dims = {str(row["id"]): query_groups(row) for row in loaded.rows or []}
        return _Run(loaded.label, loaded.result, Path(item), dims)
    raise TypeError(f"expected an EvalResult or a results folder, got {type(item).__name__}")


def _unique_labels(runs: Sequence[_Run]) -> None:
    """Make labels unique: a folder name shared by several runs gets its parent folder in front."""
    for _ in range(3):
        seen: dict[str, int] = {}
        for run in runs:
            seen[run.label] = seen.get(run.label, 0) + 1
        clashes = [run for run in runs if seen[run.label] > 1]
        if not clashes:
            return
        for run in clashes:
            folder = None if run.source is None else run.source.resolve()
            if folder is not None and folder.is_file():
                folder = folder.parent
            parent = folder.parent.name if folder is not None else ""
            run.label = (
                f"{parent}/{run.label}" if parent and not run.label.startswith(f"{parent}/") else run.label
            )
    counts: dict[str, int] = {}
    for run in runs:
        counts[run.label] = counts.get(run.label, 0) + 1
        if counts[run.label] > 1:
            run.label = f"{run.label}#{counts[run.label]}"


def _restricted(result: EvalResult, shared: Sequence[str]) -> EvalResult:
    return result.model_copy(update={"per_query": {q: result.per_query[q] for q in shared}})


def _statistic(values: list[float], metric: str) -> float | None:
    if not values:
        return None
    percentile = aggregate_percentile(metric)
    return float(np.percentile(values, percentile)) if percentile is not None else float(np.mean(values))


def _better(a: float, b: float, hib: bool) -> bool:
    return a > b if hib else a < b


def compare(
    results: Sequence[ResultsInput],
    *,
    names: Sequence[str] | None = None,
    baseline: str | int | None = None,
    metrics: Sequence[str] | None = None,
    pairs: Pairs = "baseline",
    alpha: float = ALPHA,
    power: float = POWER,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    correction: str = "holm",
    top: int = 5,
    seed: int = 0,
    breakdowns: bool = True,
    delta: float | None = None,
) -> MultiComparison:
    """Compare two or more runs (``EvalResult`` objects or results folders) query by query.

    ``baseline`` (a name or an index; default the first run) is compared against each other
    run, or every pair with ``pairs="all"``. The statistics are those of ``ragmeter compare``:
    paired permutation test and bootstrap CI of each delta (``n_resamples`` each), the
    ``correction`` (Holm by default) across the whole table, effect size, the queries
    counted, and the minimum detectable effect at ``alpha`` and ``power``. ``delta`` (a change
    that matters) adds a note for every metric that cannot detect it.

    Errors: fewer than two runs, an unknown baseline, no query or metric shared by all runs,
    a metric no pair can compare.
    """
    if len(results) < 2:
        raise ConfigError(f"compare needs at least two runs, got {len(results)}")
    if pairs not in ("baseline", "all"):
        raise ConfigError(f"pairs must be 'baseline' or 'all', got {pairs!r}")
    if correction not in CORRECTIONS:
        raise ConfigError(f"correction must be holm, bh or none, got {correction!r}")
    for name, level in (("alpha", alpha), ("power", power)):
        if not 0 < level < 1:
            raise ConfigError(f"{name} must be between 0 and 1 (exclusive), got {level:g}")
    if n_resamples < 1:
        raise ConfigError(f"n_resamples must be at least 1, got {n_resamples}")
    if delta is not None and not (np.isfinite(delta) and delta != 0):
        raise ConfigError(f"delta must be a finite number other than 0, got {delta}")
    runs = [_load(item, i) for i, item in enumerate(results)]
    if names is not None:
        if len(names) != len(runs) or len(set(names)) != len(names):
            raise ConfigError(f"names: expected {len(runs)} distinct names, got {list(names)}")
        for run, name in zip(runs, names, strict=True):
            run.label = str(name)
    else:
        _unique_labels(runs)
    labels = [run.label for run in runs]
    base_index = _baseline_index(baseline, labels)
    shared = [q for q in runs[base_index].result.per_query if all(q in r.result.per_query for r in runs)]
    if not shared:
        sizes = _and([f"{r.label} ({len(r.result.per_query)} queries)" for r in runs])
        raise InputError(f"{sizes} share no query: nothing to compare")
    left_out = {
        r.label: len(r.result.per_query) - len(shared) for r in runs if len(r.result.per_query) > len(shared)
    }
    notes = _query_set_notes(runs, shared, left_out)
    chosen = _metric_names(runs, metrics)
    restricted = [_restricted(r.result, shared) for r in runs]
    order = (
        [(base_index, j) for j in range(len(runs)) if j != base_index]
        if pairs == "baseline"
        else [(i, j) for i in range(len(runs)) for j in range(i + 1, len(runs))]
    )
    comparisons = [
        compare_results(
            restricted[i],
            restricted[j],
            metrics=chosen,
            baseline_label=labels[i],
            candidate_label=labels[j],
            confidence=confidence,
            n_resamples=n_resamples,
            correction="none",
            top=top,
            seed=seed,
            alpha=alpha,
            power=power,
        )
        for i, j in order
    ]
    family = apply_correction([m for c in comparisons for m in c.metrics], correction, alpha=alpha)
    for c in comparisons:
        c.correction = correction
        notes.extend(n for n in c.notes if n not in notes and "query sets differ" not in n)
    rows = _rows(comparisons, runs, restricted, labels)
    cells: list[BreakdownCell] = []
    groups_of = runs[base_index].dims or next((r.dims for r in runs if r.dims), {})
    if breakdowns and groups_of:
        by_name = dict(zip(labels, restricted, strict=True))
        cells = breakdown_cells(comparisons, by_name, groups_of, n_resamples=n_resamples, seed=seed)
        apply_correction(cells, correction, alpha=alpha)
    notes.extend(_power_notes(comparisons, delta))
    outcome = MultiComparison(
        systems=labels,
        baseline=labels[base_index],
        pairs=pairs,
        alpha=alpha,
        power=power,
        confidence=confidence,
        correction=correction,
        n_resamples=n_resamples,
        seed=seed,
        n_shared_queries=len(shared),
        left_out=left_out,
        family_size=family,
        rows=rows,
        comparisons=comparisons,
        breakdowns=cells,
        breakdown_family_size=sum(c.p_value is not None for c in cells),
        notes=notes,
        delta=delta,
    )
    outcome._results = [r.result for r in runs]
    outcome._sources = [r.source for r in runs]
    return outcome


def _and(items: Sequence[str]) -> str:
    """``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _baseline_index(baseline: str | int | None, labels: list[str]) -> int:
    if baseline is None:
        return 0
    if isinstance(baseline, int) and not isinstance(baseline, bool):
        if not 0 <= baseline < len(labels):
            raise ConfigError(f"baseline index {baseline} is out of range (0..{len(labels) - 1})")
        return baseline
    name = str(baseline)
    exact = [i for i, label in enumerate(labels) if label == name]
    matches = exact or [i for i, label in enumerate(labels) if label.endswith(f"/{name}")]
    if not matches:
        raise ConfigError(f"--baseline {name!r}: not one of the runs ({', '.join(labels)})")
    if len(matches) > 1:
        raise ConfigError(
            f"--baseline {name!r} matches several runs ({', '.join(labels[i] for i in matches)})"
        )
    return matches[0]


def _query_set_notes(runs: Sequence[_Run], shared: Sequence[str], left_out: dict[str, int]) -> list[str]:
    if not left_out:
        return []
    if len(runs) == 2:
        a, b = runs
        detail = f"{left_out.get(a.label, 0)} only in {a.label}, {left_out.get(b.label, 0)} only in {b.label}"
    else:
        detail = ", ".join(f"{n} of {label}'s not in every run" for label, n in left_out.items())
    return [f"the runs' query sets differ: compared on the {len(shared)} shared queries ({detail})"]


def _metric_names(runs: Sequence[_Run], requested: Sequence[str] | None) -> list[str] | None:
    """The metrics to compare: as asked, or (more than two runs) those every run has."""
    if requested or len(runs) == 2:
        return list(requested) if requested else None
    from ragmeter.report.compare import _all_names

    names = [n for n in _all_names(runs[0].result) if all(n in _all_names(r.result) for r in runs[1:])]
    if not names:
        listed = "; ".join(f"{r.label}: {', '.join(_all_names(r.result)) or 'no metric'}" for r in runs)
        raise InputError(f"the runs share no metric ({listed}): nothing to compare")
    return names


def _rows(
    comparisons: Sequence[Comparison],
    runs: Sequence[_Run],
    restricted: Sequence[EvalResult],
    labels: list[str],
) -> list[TableRow]:
    names = list(dict.fromkeys(m.metric for c in comparisons for m in c.metrics))
    totals = [n for n in dict.fromkeys(t for c in comparisons for t in c.totals_only) if n not in names]
    rows: list[TableRow] = []
    for name in [*names, *totals]:
        hib = higher_is_better(name)
        tested = name in names
        values: dict[str, float | None] = {}
        for label, run, result in zip(labels, runs, restricted, strict=True):
            if tested:
                scored = [v for q in result.per_query.values() if (v := q.get(name)) is not None]
                values[label] = _statistic(scored, name)
            else:
                values[label] = run.result.aggregate.get(name)
        present = {k: v for k, v in values.items() if v is not None}
        best: list[str] = []
        if present:
            top = max(present.values()) if hib else min(present.values())
            best = [k for k, v in present.items() if abs(v - top) <= 1e-12 * max(1.0, abs(top))]
        better: dict[str, list[str]] = {}
        for c in comparisons:
            m = c.get(name)
            if m is None or not m.significant or m.delta is None or m.delta == 0:
                continue
            winner, loser = (
                (c.candidate, c.baseline) if _better(m.delta, 0.0, hib) else (c.baseline, c.candidate)
            )
            better.setdefault(winner, []).append(loser)
        better = {
            k: sorted(v, key=labels.index)
            for k, v in sorted(better.items(), key=lambda kv: labels.index(kv[0]))
        }
        statistic = next((m.statistic for c in comparisons if (m := c.get(name)) is not None), "total")
        rows.append(
            TableRow(
                metric=name,
                higher_is_better=hib,
                statistic=statistic if tested else "total",
                values=values,
                best=best,
                better_than=better,
                tested=tested,
            )
        )
    return rows


def _power_notes(comparisons: Sequence[Comparison], delta: float | None) -> list[str]:
    """With ``delta`` (a change that matters), a note for each metric and pair that cannot detect it."""
    notes: list[str] = []
    for c in comparisons:
        for m in c.metrics:
            p = m.power
            if delta is None or p is None or p.detects(delta):
                continue
            text = f"with {questions(p.n)} a change of {abs(delta):g} in {m.metric} cannot be told from noise"
            needed = p.queries_for(delta)
            if needed is not None:
                text += f"; about {questions(needed)} would be needed"
            mde = f"MDE {p.mde:.3g}" if p.mde is not None else (p.reason or "no MDE")
            notes.append(f"{text} ({c.candidate} vs {c.baseline}: {mde})")
    return notes
