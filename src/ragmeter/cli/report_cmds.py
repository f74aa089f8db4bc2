"""``ragmeter compare``, ``ragmeter gate`` and ``ragmeter history``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from ragmeter.cli import app
from ragmeter.cli.options import finite
from ragmeter.cli.render import fmt_value, split_columns

if TYPE_CHECKING:
    from ragmeter.report.compare import Comparison
    from ragmeter.report.history import HistoryEntry

RESULTS_KINDS = "a results folder, its metrics.json, or an agentic result JSON (ragmeter agentic --out)"
BASELINE_HELP = f"Baseline: {RESULTS_KINDS}."
CANDIDATE_HELP = f"Candidate: {RESULTS_KINDS}."


def _fmt_delta(value: float | None) -> str:
    return "—" if value is None else f"{value:+.4f}"


def _fmt_p(value: float | None) -> str:
    return "—" if value is None else (f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}")


def _plain_table(title: str) -> Table:
    return Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )


def comparison_tables(comparison: Comparison, *, width: int) -> list[Table]:
    """The comparison as one table, or as two (values, then significance) when one is wider than ``width``.

    Metric names are never cut (``latency_p50.retrieval`` and ``latency_p50.generation`` must stay
    apart) and no column is dropped: a narrow terminal gets two tables instead.
    """
    values_cols = (comparison.baseline, comparison.candidate, "delta", f"{comparison.confidence:.0%} CI")
    sig_cols = ("p", f"p ({comparison.correction})", "+/-")
    rows = []
    for m in comparison.metrics:
        ci = "—" if m.ci_low is None or m.ci_high is None else f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}]"
        values = (fmt_value(m.baseline_mean), fmt_value(m.candidate_mean), _fmt_delta(m.delta), ci)
        sig = (_fmt_p(m.p_value), _fmt_p(m.p_adjusted), f"{m.n_improved}/{m.n_regressed}")
        rows.append((m.metric, values, sig))

    def build(title: str, columns: tuple[str, ...], part: int | None) -> Table:
        table = _plain_table(title)
        table.add_column("metric", no_wrap=True)
        for col in columns:
            table.add_column(col, justify="right", no_wrap=True)
        for name, values, sig in rows:
            cells = (*values, *sig) if part is None else (values if part == 0 else sig)
            table.add_row(name, *cells)
        return table

    title = f"{comparison.candidate} vs {comparison.baseline}"
    whole = build(title, values_cols + sig_cols, None)
    if Measurement.get(Console(width=10_000), Console(width=10_000).options, whole).maximum <= width:
        return [whole]
    return [build(title, values_cols, 0), build(f"{title}: significance", sig_cols, 1)]


@app.command("compare")
def compare_command(
    baseline: Annotated[Path, typer.Argument(help=BASELINE_HELP)],
    candidate: Annotated[Path, typer.Argument(help=CANDIDATE_HELP)],
    metric: Annotated[list[str] | None, typer.Option("--metric", "-m", help="Only these metrics.")] = None,
    confidence: Annotated[
        float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.", callback=finite)
    ] = 0.95,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples and permutations.")] = 10_000,
    correction: Annotated[
        str, typer.Option(help="Multiple-comparison correction: holm, bh or none.")
    ] = "holm",
    top: Annotated[int, typer.Option(min=0, help="Queries listed as most improved / regressed.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the resampling.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
) -> None:
    """Per-metric deltas with bootstrap CIs and paired permutation p-values, over shared queries."""
    from ragmeter.errors import ConfigError
    from ragmeter.report.compare import compare_results
    from ragmeter.report.results_dir import load_results

    if correction not in {"holm", "bh", "none"}:
        raise ConfigError(f"--correction must be holm, bh or none, got {correction!r}")
    base, cand = load_results(baseline), load_results(candidate)
    comparison = compare_results(
        base.result,
        cand.result,
        metrics=metric,
        baseline_label=base.label,
        candidate_label=cand.label,
        confidence=confidence,
        n_resamples=resamples,
        correction=correction,
        top=top,
        seed=seed,
    )
    if as_json:
        typer.echo(comparison.model_dump_json(indent=2))
        return
    console = Console()
    for table in comparison_tables(comparison, width=console.width):
        console.print(table)
    console.print(f"{comparison.n_shared_queries} shared queries")
    for note in comparison.notes:
        console.print(f"[yellow]note:[/] {note}", soft_wrap=True)
    for m in comparison.metrics:
        if m.regressed:
            worst = ", ".join(f"{c.id} ({c.delta:+.3f})" for c in m.regressed)
            console.print(f"[red]{m.metric}[/] regressed most: {worst}", highlight=False, soft_wrap=True)


@app.command("gate")
def gate_command(
    baseline: Annotated[Path, typer.Argument(help=BASELINE_HELP)],
    candidate: Annotated[Path, typer.Argument(help=CANDIDATE_HELP)],
    fail_on: Annotated[
        list[str],
        typer.Option(
            "--fail-on", help="Rule that fails the gate, e.g. 'ndcg@10<-0.02' or 'error_rate>0.01'."
        ),
    ],
    alpha: Annotated[
        float | None,
        typer.Option(
            help="Delta rules fail only when the change is significant at this level.", callback=finite
        ),
    ] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write a JUnit XML report here.")] = None,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples and permutations.")] = 10_000,
    seed: Annotated[int, typer.Option(help="Seed of the resampling.")] = 0,
) -> None:
    """Exit 1 when any rule fails (one line per failed rule); exit 0 when all pass."""
    from ragmeter.errors import ConfigError
    from ragmeter.io.records import check_output_file
    from ragmeter.report.compare import compare_results
    from ragmeter.report.gate import check_rules, junit_xml, parse_rule
    from ragmeter.report.results_dir import load_results

    if alpha is not None and not 0 < alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1 (exclusive), got {alpha:g}")
    rules = [parse_rule(r) for r in fail_on]
    if junit is not None:
        check_output_file(junit)
    base, cand = load_results(baseline), load_results(candidate)
    comparison = compare_results(
        base.result,
        cand.result,
        baseline_label=base.label,
        candidate_label=cand.label,
        n_resamples=resamples,
        seed=seed,
    )
    outcomes = check_rules(comparison, rules, alpha=alpha)
    if junit is not None:
        from ragmeter.io.atomic import write_text_atomic

        write_text_atomic(junit, junit_xml(outcomes))
    for note in comparison.notes:
        typer.echo(f"note: {note}", err=True)
    for outcome in outcomes:
        typer.echo(outcome.reason, err=outcome.failed)
    failed = sum(o.failed for o in outcomes)
    if failed:
        typer.echo(f"gate failed: {failed} of {len(outcomes)} rule(s)", err=True)
        sys.exit(1)
    typer.echo(f"gate passed: {len(outcomes)} rule(s)")


HISTORY_CELL = 9
"""Width of a history value cell: ``0.1234 ↑``."""


def history_tables(entries: list[HistoryEntry], names: list[str], *, width: int) -> list[Table]:
    """The runs (id, time, label, source), then the metric values by run, split to fit ``width``.

    A value carries ↑ / ↓ when it moved since the run above it.
    """
    runs = _plain_table("ragmeter history")
    for col in ("run", "when", "label", "queries", "source"):
        runs.add_column(col, justify="right" if col in {"run", "queries"} else "left")
    for e in entries:
        runs.add_row(
            str(e.id), e.created_at.replace("T", " ")[:16], e.label, str(e.n_queries), e.source or ""
        )
    cells: dict[str, list[str]] = {}
    for name in names:
        previous: float | None = None
        column = []
        for e in entries:
            value = e.aggregate.get(name)
            arrow = ""
            if value is not None and previous is not None and value != previous:
                arrow = " ↑" if value > previous else " ↓"
            column.append(fmt_value(value) + arrow)
            previous = value if value is not None else previous
        cells[name] = column
    key_width = max([3, *(len(str(e.id)) for e in entries)]) + 2
    chunks = split_columns(names, first=key_width, cell=HISTORY_CELL, pad=2, width=width)
    tables = [runs]
    for number, chunk in enumerate(chunks):
        part = f" ({number + 1}/{len(chunks)})" if len(chunks) > 1 else ""
        table = _plain_table(f"metrics by run{part}")
        table.add_column("run", justify="right", no_wrap=True)
        for name in chunk:
            table.add_column(name, justify="right", no_wrap=True)
        for row, e in enumerate(entries):
            table.add_row(str(e.id), *(cells[name][row] for name in chunk))
        tables.append(table)
    return tables


@app.command("history")
def history_command(
    db: Annotated[
        Path | None,
        typer.Option(
            "--db", help="History database (default $RAGMETER_HISTORY, else .ragmeter/history.sqlite)."
        ),
    ] = None,
    metric: Annotated[list[str] | None, typer.Option("--metric", "-m", help="Only these metrics.")] = None,
    last: Annotated[int, typer.Option(min=1, help="Show the last N runs.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON.")] = False,
) -> None:
    """The trend of each metric over recorded runs, oldest first."""
    from ragmeter.errors import ConfigError
    from ragmeter.report.gate import canonical_metric_name
    from ragmeter.report.history import default_history_path, load_history

    entries = load_history(db or default_history_path(), last=last)
    recorded = list(dict.fromkeys(m for e in entries for m in e.aggregate))
    names = recorded
    if metric:
        names = []
        for requested in metric:
            name = requested if requested in recorded else canonical_metric_name(requested)
            if name not in recorded:
                raise ConfigError(
                    f"--metric {requested!r}: no recorded run has this metric "
                    f"(have: {', '.join(recorded) or 'none'})"
                )
            names.append(name)
    if as_json:
        rows = [{**e.__dict__, "aggregate": {n: e.aggregate.get(n) for n in names}} for e in entries]
        typer.echo(json.dumps(rows, indent=2))
        return
    console = Console()
    if not entries:
        console.print("no runs recorded yet")
        return
    for table in history_tables(entries, names, width=console.width):
        console.print(table)


@app.command("report")
def report_command(
    results_dir: Annotated[
        Path,
        typer.Argument(
            metavar="RESULTS",
            help=f"The results: {RESULTS_KINDS}.",
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="HTML file to write (default: report.html in the results folder or beside the file).",
        ),
    ] = None,
    db: Annotated[
        Path | None, typer.Option("--history", help="History database whose trend to include, if it exists.")
    ] = None,
) -> None:
    """Write one self-contained HTML report that opens offline, from a results folder or a results file."""
    from ragmeter.report.history import default_history_path, load_history
    from ragmeter.report.html import write_report

    history_path = db or default_history_path()
    history = load_history(history_path) if history_path.exists() else None
    path = write_report(results_dir, out, history=history)
    typer.echo(f"wrote {path}")
