"""``ragmeter compare``, ``ragmeter gate`` and ``ragmeter history``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from ragmeter.cli import app
from ragmeter.cli.options import check_level, examples, finite
from ragmeter.cli.render import fmt_value, split_columns
from ragmeter.report import DEFAULT_RESAMPLES

if TYPE_CHECKING:
    from ragmeter.report.history import HistoryEntry

RESULTS_KINDS = "a results folder, its metrics.json, or an agentic result JSON (ragmeter agentic --out)"
BASELINE_HELP = f"Baseline: {RESULTS_KINDS}."
CANDIDATE_HELP = f"Candidate: {RESULTS_KINDS}."


def _plain_table(title: str) -> Table:
    return Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )


FORMATS = ("text", "json", "markdown", "latex", "html")


@app.command("compare", epilog=examples("ragmeter compare results/baseline results/candidate -m ndcg@10"))
def compare_command(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help=f"Two or more runs, each {RESULTS_KINDS}: the baseline first (or name it with --baseline).",
            show_default=False,
        ),
    ],
    baseline: Annotated[
        str | None, typer.Option("--baseline", help="The baseline run, by name (default: the first).")
    ] = None,
    all_pairs: Annotated[
        bool,
        typer.Option(
            "--all-pairs", help="Test every pair of runs, not only the baseline against each other."
        ),
    ] = False,
    metric: Annotated[list[str] | None, typer.Option("--metric", "-m", help="Only these metrics.")] = None,
    alpha: Annotated[
        float, typer.Option(help="Significance level (after the correction).", callback=finite)
    ] = 0.05,
    power: Annotated[
        float, typer.Option(help="Power at which the minimum detectable effect is given.", callback=finite)
    ] = 0.8,
    delta: Annotated[
        float | None,
        typer.Option(
            "--delta", help="A change that matters: name the metrics that cannot detect it.", callback=finite
        ),
    ] = None,
    confidence: Annotated[
        float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.", callback=finite)
    ] = 0.95,
    resamples: Annotated[
        int, typer.Option(min=100, help="Bootstrap resamples and Monte Carlo permutations.")
    ] = DEFAULT_RESAMPLES,
    correction: Annotated[
        str, typer.Option(help="Multiple-comparison correction across the whole table: holm, bh or none.")
    ] = "holm",
    top: Annotated[int, typer.Option(min=0, help="Queries listed as most improved / worsened.")] = 5,
    seed: Annotated[int, typer.Option(help="Seed of the resampling.")] = 0,
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="Output: text, json, markdown, latex or html (needs --out).")
    ] = "text",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write the output to this file instead of printing it.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
) -> None:
    """Compare runs query by query: the baseline against each other run, Holm across the whole table.

    Per metric: the paired permutation test and the bootstrap CI of the delta, effect size,
    queries better/worse/unchanged, and the minimum detectable effect; per breakdown group,
    the deltas. Example: ragmeter compare results/bm25 results/dense results/hybrid -f markdown
    """
    from ragmeter.errors import ConfigError
    from ragmeter.report.compare_tables import render_latex, render_markdown, render_text
    from ragmeter.report.multi_compare import compare

    fmt = "json" if as_json else fmt
    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if correction not in {"holm", "bh", "none"}:
        raise ConfigError(f"--correction must be holm, bh or none, got {correction!r}")
    check_level("--alpha", alpha)
    check_level("--power", power)
    if fmt == "html" and out is None:
        raise ConfigError("--format html writes a file: give it with --out FILE")
    if out is not None:
        from ragmeter.io.records import check_output_file

        check_output_file(out)
    if len(runs) < 2:
        raise ConfigError(f"compare needs at least two results folders, got {len(runs)}")
    mc = compare(
        runs,
        baseline=baseline,
        metrics=metric,
        pairs="all" if all_pairs else "baseline",
        alpha=alpha,
        power=power,
        confidence=confidence,
        n_resamples=resamples,
        correction=correction,
        top=top,
        seed=seed,
        delta=delta,
    )
    if fmt == "html" and out is not None:
        typer.echo(f"wrote {mc.write_html(out)}")
        return
    if fmt == "json":
        text = mc.to_json()
    elif fmt == "markdown":
        text = render_markdown(mc)
    elif fmt == "latex":
        text = render_latex(mc)
    else:
        text = render_text(mc, width=Console().width)
    if out is not None:
        from ragmeter.io.atomic import write_text_atomic

        typer.echo(f"wrote {write_text_atomic(out, text if text.endswith(chr(10)) else text + chr(10))}")
        return
    typer.echo(text.rstrip("\n"))


@app.command(
    "gate",
    epilog=examples(
        "ragmeter gate results/baseline results/candidate --fail-on 'ndcg@10<-0.02' --junit gate.xml"
    ),
)
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
    resamples: Annotated[
        int, typer.Option(min=100, help="Bootstrap resamples and Monte Carlo permutations.")
    ] = DEFAULT_RESAMPLES,
    seed: Annotated[int, typer.Option(help="Seed of the resampling.")] = 0,
) -> None:
    """Exit 1 when any rule fails (one line per failed rule); exit 0 when all pass.

    A delta rule whose threshold the test set cannot detect (below its minimum detectable
    effect at α = 0.05 and 80% power) gets a warning saying how many questions would be needed.
    Example: ragmeter gate results/main results/pr --fail-on 'ndcg@10<-0.02' --alpha 0.05
    """
    from ragmeter.io.records import check_output_file
    from ragmeter.report.compare import compare_results
    from ragmeter.report.gate import check_rules, junit_xml, parse_rule
    from ragmeter.report.results_dir import load_results

    if alpha is not None:
        check_level("--alpha", alpha)
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
        if outcome.warning:
            typer.echo(f"warning: {outcome.warning}", err=True)
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


@app.command("history", epilog=examples("ragmeter history -m ndcg@10 --last 10"))
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


@app.command("report", epilog=examples("ragmeter report results/demo -o report.html"))
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
            "-o",
            help="HTML file to write (default: report.html in the results folder or beside the file).",
        ),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--history",
            help="History database whose trend to include (default: the usual one, if it exists).",
        ),
    ] = None,
) -> None:
    """Write one self-contained HTML report that opens offline, from a results folder or a results file."""
    from ragmeter.report.history import default_history_path, load_history
    from ragmeter.report.html import write_report

    # A database named with --history must exist (a typo must not silently drop the trend);
    # the default one is optional.
    history_path = db or default_history_path()
    history = load_history(history_path) if db is not None or history_path.exists() else None
    path = write_report(results_dir, out, history=history)
    typer.echo(f"wrote {path}")
