"""``ragmeter power``: what a test set can detect, and how many questions a change would need."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from ragmeter.cli import app
from ragmeter.cli.options import check_level, finite

if TYPE_CHECKING:
    from ragmeter.report.power import Power
    from ragmeter.results import EvalResult


def metric_powers(
    baseline: EvalResult,
    candidate: EvalResult | None,
    *,
    metrics: list[str] | None,
    alpha: float,
    power: float,
) -> tuple[dict[str, Power], list[str]]:
    """Each mean metric's :class:`~ragmeter.report.power.Power`: paired with ``candidate``, else one run.

    Returns the powers and notes on the metrics left out (percentiles, too few values).
    """
    from ragmeter.errors import ConfigError
    from ragmeter.report.compare import aggregate_percentile, canonical_metric_name
    from ragmeter.report.power import one_run_power, paired_power
    from ragmeter.report.units import is_operational

    available = list(dict.fromkeys(m for values in baseline.per_query.values() for m in values))
    names = [m for m in available if not is_operational(m)]  # quality metrics unless asked for
    if metrics:
        names = []
        for requested in metrics:
            name = requested if requested in available else canonical_metric_name(requested)
            if name not in available:
                raise ConfigError(
                    f"--metric {requested!r}: no per-query values of it (have: {', '.join(available) or 'none'})"
                )
            names.append(name)
    powers: dict[str, Power] = {}
    notes: list[str] = []
    for name in names:
        if aggregate_percentile(name) is not None:
            notes.append(f"{name}: a percentile, not a mean; no MDE")
            continue
        if candidate is None:
            values = [v for row in baseline.per_query.values() if (v := row.get(name)) is not None]
            powers[name] = one_run_power(values, alpha=alpha, power=power)
            continue
        pairs = [
            (b, c)
            for q, row in baseline.per_query.items()
            if (b := row.get(name)) is not None
            and (c := candidate.per_query.get(q, {}).get(name)) is not None
        ]
        if not pairs:
            notes.append(f"{name}: no query has a value in both runs")
            continue
        powers[name] = paired_power([b for b, _ in pairs], [c for _, c in pairs], alpha=alpha, power=power)
    if not powers:
        raise ConfigError("no metric with per-query values to plan with: " + "; ".join(notes))
    return powers, notes


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}g}"


@app.command("power")
def power_command(
    results: Annotated[
        list[Path],
        typer.Argument(
            help="A results folder (one run: its per-query spread), or two (paired: the spread of their deltas).",
            show_default=False,
        ),
    ],
    delta: Annotated[
        float | None,
        typer.Option(help="A change that matters: the questions needed to detect it.", callback=finite),
    ] = None,
    metric: Annotated[list[str] | None, typer.Option("--metric", "-m", help="Only these metrics.")] = None,
    alpha: Annotated[float, typer.Option(help="Significance level of the test.", callback=finite)] = 0.05,
    power: Annotated[float, typer.Option(help="Chance of detecting the change.", callback=finite)] = 0.8,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
) -> None:
    """Plan the size of a test set: per metric, the minimum detectable effect now and the questions a change needs.

    With one results folder the spread comes from its per-query values (s·√2 for a second,
    uncorrelated run; 2p(1−p) discordance for 0/1 metrics); with two, from their paired
    differences (McNemar's discordant pairs for 0/1 metrics).
    Example: ragmeter power results/demo --delta 0.02
    """
    from ragmeter.errors import ConfigError
    from ragmeter.report.gate import questions
    from ragmeter.report.results_dir import load_results

    check_level("--alpha", alpha)
    check_level("--power", power)
    if delta is not None and delta == 0:
        raise ConfigError("--delta must not be 0: a change of 0 cannot be detected")
    if not 1 <= len(results) <= 2:
        raise ConfigError(f"power takes one results folder (or two, paired), got {len(results)}")
    base = load_results(results[0])
    cand = load_results(results[1]) if len(results) == 2 else None
    powers, notes = metric_powers(
        base.result, cand.result if cand else None, metrics=metric, alpha=alpha, power=power
    )
    rows: list[dict[str, Any]] = []
    for name, p in powers.items():
        row: dict[str, Any] = {"metric": name, **p.model_dump()}
        if delta is not None:
            row["delta"] = delta
            row["queries_needed"] = p.queries_for(delta)
            row["power_at_delta"] = p.power_at(delta)
        rows.append(row)
    if as_json:
        typer.echo(json.dumps({"alpha": alpha, "power": power, "metrics": rows, "notes": notes}, indent=2))
        return
    from ragmeter.report.compare_tables import Cell, Grid, grid_text

    mode = f"paired: {cand.label} vs {base.label}" if cand else f"one run: {base.label}"
    columns = ["metric", "queries", "method", "spread", "MDE"]
    if delta is not None:
        columns += [f"queries for {delta:g}", f"power at {delta:g}"]
    grid = Grid("power", f"what the test set can detect ({mode}; α = {alpha:g}, power {power:.0%})", columns)
    for row in rows:
        spread = row["spread"]
        shown = (
            "—"
            if spread is None
            else (f"ψ {spread:.3g}" if "McNemar" in row["method"] else f"sd {spread:.3g}")
        )
        cells = [row["metric"], str(row["n"]), row["method"], shown, _fmt(row["mde"], 3)]
        if delta is not None:
            needed = row["queries_needed"]
            cells += ["—" if needed is None else f"{needed:,}", _fmt(row["power_at_delta"], 2)]
        grid.rows.append([Cell(text) for text in cells])
    console = Console()
    lines = [grid_text(grid, width=console.width), ""]
    for name, p in powers.items():
        if p.reason:
            lines.append(f"{name}: {p.reason}")
        elif delta is not None and not p.detects(delta):
            needed = p.queries_for(delta)
            lines.append(
                f"with {questions(p.n)} a change of {abs(delta):g} in {name} cannot be told from noise"
                + (f"; about {questions(needed)} would be needed" if needed else "")
            )
    lines.extend(f"note: {note}" for note in notes)
    typer.echo("\n".join(lines).rstrip("\n"))
