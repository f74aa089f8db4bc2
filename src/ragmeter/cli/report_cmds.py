"""``ragmeter compare``, ``ragmeter gate`` and ``ragmeter history``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from ragmeter.cli import app
from ragmeter.cli.render import fmt_value


def _fmt_delta(value: float | None) -> str:
    return "—" if value is None else f"{value:+.4f}"


def _fmt_p(value: float | None) -> str:
    return "—" if value is None else (f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}")


@app.command("compare")
def compare_command(
    baseline: Annotated[Path, typer.Argument(help="Baseline results folder.")],
    candidate: Annotated[Path, typer.Argument(help="Candidate results folder.")],
    metric: Annotated[list[str] | None, typer.Option("--metric", "-m", help="Only these metrics.")] = None,
    confidence: Annotated[
        float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.")
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
    table = Table(title=f"{cand.label} vs {base.label}", title_justify="left")
    for col in (
        "metric",
        base.label,
        cand.label,
        "delta",
        f"{confidence:.0%} CI",
        "p",
        f"p ({correction})",
        "+/-",
    ):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for m in comparison.metrics:
        ci = "—" if m.ci_low is None else f"[{m.ci_low:+.4f}, {m.ci_high:+.4f}]"
        table.add_row(
            m.metric,
            fmt_value(m.baseline_mean),
            fmt_value(m.candidate_mean),
            _fmt_delta(m.delta),
            ci,
            _fmt_p(m.p_value),
            _fmt_p(m.p_adjusted),
            f"{m.n_improved}/{m.n_regressed}",
        )
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
    baseline: Annotated[Path, typer.Argument(help="Baseline results folder.")],
    candidate: Annotated[Path, typer.Argument(help="Candidate results folder.")],
    fail_on: Annotated[
        list[str],
        typer.Option(
            "--fail-on", help="Rule that fails the gate, e.g. 'ndcg@10<-0.02' or 'error_rate>0.01'."
        ),
    ],
    alpha: Annotated[
        float | None, typer.Option(help="Delta rules fail only when the change is significant at this level.")
    ] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write a JUnit XML report here.")] = None,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples and permutations.")] = 10_000,
    seed: Annotated[int, typer.Option(help="Seed of the resampling.")] = 0,
) -> None:
    """Exit 1 when any rule fails (one line per failed rule); exit 0 when all pass."""
    from ragmeter.report.compare import compare_results
    from ragmeter.report.gate import check_rules, junit_xml, parse_rule
    from ragmeter.report.results_dir import load_results

    rules = [parse_rule(r) for r in fail_on]
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
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(junit_xml(outcomes), encoding="utf-8")
    for note in comparison.notes:
        typer.echo(f"note: {note}", err=True)
    for outcome in outcomes:
        typer.echo(outcome.reason, err=outcome.failed)
    failed = sum(o.failed for o in outcomes)
    if failed:
        typer.echo(f"gate failed: {failed} of {len(outcomes)} rule(s)", err=True)
        sys.exit(1)
    typer.echo(f"gate passed: {len(outcomes)} rule(s)")


@app.command("history")
def history_command(
    db: Annotated[
        Path | None, typer.Option("--db", help="History database (default .ragmeter/history.sqlite).")
    ] = None,
    metric: Annotated[list[str] | None, typer.Option("--metric", "-m", help="Only these metrics.")] = None,
    last: Annotated[int, typer.Option(min=1, help="Show the last N runs.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON.")] = False,
) -> None:
    """The trend of each metric over recorded runs, oldest first."""
    from ragmeter.report.history import default_history_path, load_history

    entries = load_history(db or default_history_path(), last=last)
    names = metric or list(dict.fromkeys(m for e in entries for m in e.aggregate))
    if as_json:
        typer.echo(json.dumps([e.__dict__ for e in entries], indent=2))
        return
    table = Table(title="ragmeter history", title_justify="left")
    for col in ("run", "when", "label", *names):
        table.add_column(col, justify="right" if col in names else "left")
    previous: dict[str, float | None] = {}
    for e in entries:
        cells = []
        for name in names:
            value = e.aggregate.get(name)
            before = previous.get(name)
            arrow = (
                ""
                if value is None or before is None or value == before
                else (" ↑" if value > before else " ↓")
            )
            cells.append(fmt_value(value) + arrow)
            previous[name] = value
        table.add_row(str(e.id), e.created_at.replace("T", " ")[:16], e.label, *cells)
    Console().print(table)


@app.command("report")
def report_command(
    results_dir: Annotated[Path, typer.Argument(help="Results folder (with metrics.json).")],
    out: Annotated[
        Path | None, typer.Option("--out", help="HTML file to write (default RESULTS_DIR/report.html).")
    ] = None,
    db: Annotated[
        Path | None, typer.Option("--history", help="History database whose trend to include, if it exists.")
    ] = None,
) -> None:
    """Write one self-contained HTML report that opens offline."""
    from ragmeter.report.history import default_history_path, load_history
    from ragmeter.report.html import write_report

    history_path = db or default_history_path()
    history = load_history(history_path) if history_path.is_file() else None
    path = write_report(results_dir, out, history=history)
    typer.echo(f"wrote {path}")
