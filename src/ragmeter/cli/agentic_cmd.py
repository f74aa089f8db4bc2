"""``ragmeter agentic``: Retrieved Good Gain metrics over agentic search traces.

>>> _fmt(None), _fmt(2.0, count=True), _fmt(0.123456)
('—', '2.00', '0.123')
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from ragmeter.cli import app
from ragmeter.cli.options import examples
from ragmeter.errors import ConfigError

if TYPE_CHECKING:
    from ragmeter.agentic.aggregate import Aggregates
    from ragmeter.agentic.result import AgenticResult

MAX_ROWS = 30
"""Iterations shown in full; longer tables show the first and last rows."""
PROGRESS_AFTER_S = 2.0
"""Seconds of work (reading, importing, preparing and scoring traces, without a judge) before progress is shown."""
_UNITS = {"importing traces": "records", "keying URLs and texts": "strings"}
"""The unit of each step shown (``evaluate_agentic``'s ``step_progress``); traces by default."""

METRIC_COLUMNS = ("CG", "RG", "DCG", "DRG", "AvgGain", "RAG", "DRAG", "SRE", "SRR")
COUNT_COLUMNS = ("R", "UR", "GR", "Dup", "R_cum", "UR_cum", "GR_cum", "Dup_cum")


def _fmt(value: float | None, *, count: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:.2f}" if count else f"{value:.3f}"


def _rows(depth: int) -> list[int | None]:
    if depth <= MAX_ROWS:
        return list(range(depth))
    return [*range(MAX_ROWS - 5), None, *range(depth - 4, depth)]


def _table(agg: Aggregates, columns: tuple[str, ...], *, title: str, count: bool) -> Table:
    from ragmeter.agentic.metrics import SERIES

    notation = {s.name: s.notation for s in SERIES}
    table = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True
    )
    table.add_column("i", justify="right")
    if count:
        table.add_column("traces", justify="right")
    for name in columns:
        table.add_column(notation[name] if count else name, justify="right")
    for row in _rows(agg.max_iterations):
        if row is None:
            table.add_row("…", *([""] * (len(columns) + count)))
            continue
        values = [_fmt(agg.averages_by_iteration[name][row], count=count) for name in columns]
        table.add_row(str(row + 1), *([str(agg.traces_by_iteration[row])] if count else []), *values)
    table.add_section()
    final = [_fmt(agg.averages_at_n[name], count=count) for name in columns]
    table.add_row("N", *([str(agg.counts.scored)] if count else []), *final)
    return table


def _redundancy_table(agg: Aggregates) -> Table:
    table = Table(
        title="redundancy by matching key", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False
    )
    table.add_column("key")
    table.add_column("duplicates", justify="right")
    table.add_column("share of all results", justify="right")
    for key, n in agg.redundancy.by_key.items():
        table.add_row(key, str(n), _fmt(agg.redundancy.share_by_key[key]))
    table.add_section()
    table.add_row("all", str(agg.redundancy.duplicates), _fmt(agg.redundancy.srr))
    return table


def print_agentic(result: AgenticResult, console: Console, err: Console) -> None:
    """Print averages at each iteration (and at N), redundancy, counts and warnings."""
    agg = result.aggregate
    counts = agg.counts
    if counts.scored:
        console.print(
            _table(
                agg,
                METRIC_COLUMNS,
                title="agentic search: averages at iteration i (N = each trace's last)",
                count=False,
            )
        )
        console.print(_table(agg, COUNT_COLUMNS, title="result counts: averages at iteration i", count=True))
        console.print(_redundancy_table(agg))
        ifagr = agg.averages_at_n["IterationsForAllGoodResults"]
        console.print(
            f"IterationsForAllGoodResults: {_fmt(ifagr, count=True)} "
            f"(over {agg.n_at_n['IterationsForAllGoodResults']} traces; "
            f"{counts.iterations_for_all_good_undefined} without good results, "
            f"{counts.iterations_for_all_good_unscored} with unscored gains)",
            highlight=False,
        )
    console.print(
        f"{counts.traces} traces: {counts.scored} scored, {counts.results_not_captured} results not captured, "
        f"{counts.no_search} without search; {counts.unscored_results} unique results unscored",
        highlight=False,
    )
    for warning in result.warnings:
        err.print(f"[yellow]warning:[/] {warning}", highlight=False, markup=True)


@app.command(
    "agentic",
    epilog=examples(
        "ragmeter agentic -t traces.jsonl -l labels.jsonl",
        "ragmeter agentic -t otel.json --format otel --search-tool 'web_*' -o agentic.json",
    ),
)
def agentic_command(
    traces: Annotated[Path, typer.Option("--traces", "-t", help="Trace file (JSONL or JSON).")],
    labels: Annotated[
        Path | None, typer.Option("--labels", "-l", help="Gains by trace id and result key (JSONL).")
    ] = None,
    trace_format: Annotated[
        str,
        typer.Option("--format", "-f", help="auto, native, otel, openai-agents or langsmith."),
    ] = "auto",
    search_tool: Annotated[
        list[str] | None,
        typer.Option("--search-tool", help="Tool name (glob) that counts as a search; repeat for more."),
    ] = None,
    judge_config: Annotated[
        Path | None,
        typer.Option(
            "--judge-config",
            help="Label results without a gain with the LLM relevance judge (a file with a judge: block).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Also write the JSON result to this file.")
    ] = None,
    details: Annotated[
        bool, typer.Option("--details", help="Include every result's dedup record in the JSON.")
    ] = False,
) -> None:
    """Score agentic search traces: CG, DCG, SRE, SRR … at every search iteration."""
    from ragmeter.agentic.api import evaluate_agentic
    from ragmeter.agentic.load import TRACE_FORMATS
    from ragmeter.io.records import check_output_file

    if trace_format not in TRACE_FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(TRACE_FORMATS)}, got {trace_format!r}")
    if out is not None:
        check_output_file(out)  # before any judge call is paid for
    from ragmeter.progress import DelayedTasks, make_progress

    labeller = None
    if judge_config is not None:
        from ragmeter.agentic.judge_labeller import JudgeLabeller

        labeller = JudgeLabeller(judge_config)
    progress = make_progress()
    # Shown once the work has taken PROGRESS_AFTER_S (a judge's calls: at once, but not the
    # reading before them): a small file prints no progress line, a million results do.
    step = "labelling traces" if labeller is not None else "scoring traces"
    show = DelayedTasks(
        progress, PROGRESS_AFTER_S, after_for={step: 0.0} if labeller is not None else None
    ).report

    try:
        result = evaluate_agentic(
            traces,
            labels,
            trace_format=trace_format,
            search_tools=search_tool or None,
            details=details,
            labeller=labeller,
            progress=lambda done, total: show(step, done, total, "traces"),
            read_progress=lambda done, total: show("reading traces", done >> 20, total >> 20, "MB"),
            step_progress=lambda step, done, total: show(step, done, total, _UNITS.get(step, "traces")),
        )
    finally:
        progress.stop()
    if labeller is not None:
        usage = labeller.usage()
        Console(stderr=True).print(
            f"relevance judge: {usage.get('calls', 0)} call(s), {usage.get('cache_hits', 0)} cache hit(s)",
            highlight=False,
        )
    text = result.to_json_text() if as_json else None  # encoded once, for both
    if out is not None:
        result.write(out, text)
    if as_json:
        typer.echo(text)
    else:
        print_agentic(result, Console(), Console(stderr=True))
        if out is not None:
            Console(stderr=True).print(f"wrote {out}", highlight=False)
