"""Terminal rendering shared by commands: metric tables and warnings (rich).

>>> fmt_value(0.123456), fmt_value(None)
('0.1235', '—')
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ragmeter.results import EvalResult

MAX_WARNINGS_SHOWN = 8


def fmt_value(value: float | None) -> str:
    """Four decimals, or a dash for 'no value'."""
    return "—" if value is None else f"{value:.4f}"


def metrics_table(result: EvalResult, *, title: str = "ragmeter") -> Table:
    """A table of every aggregate with its counts and cutoff."""
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    table.add_column("mean", justify="right")
    table.add_column("scored", justify="right")
    table.add_column("skipped", justify="right")
    table.add_column("k", justify="right")
    metric_info = result.provenance.get("metrics", {})
    for name, mean in result.aggregate.items():
        k = metric_info.get(name, {}).get("k")
        table.add_row(
            name,
            fmt_value(mean),
            str(result.n_scored.get(name, "")),
            str(result.n_skipped.get(name, "")),
            "" if k is None else str(k),
        )
    return table


def print_result(result: EvalResult, console: Console, err: Console) -> None:
    """Print the metric table, the counts, and the first warnings."""
    console.print(metrics_table(result))
    console.print(f"{result.n_queries} queries", end="")
    if result.n_missing_output:
        console.print(f", {result.n_missing_output} without output (scored as empty)", end="")
    console.print()
    for warning in result.warnings[:MAX_WARNINGS_SHOWN]:
        err.print(f"[yellow]warning:[/] {warning}", highlight=False, markup=True)
    if len(result.warnings) > MAX_WARNINGS_SHOWN:
        err.print(f"[yellow]… {len(result.warnings) - MAX_WARNINGS_SHOWN} more warnings (see --json)[/]")
