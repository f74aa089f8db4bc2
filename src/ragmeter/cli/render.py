"""Terminal rendering shared by commands: metric tables, breakdowns and warnings (rich).

>>> fmt_value(0.123456), fmt_value(None)
('0.1235', '—')
>>> fmt_cell({"mean": 0.5, "n": 4}), fmt_cell(None)
('0.5000 (4)', '')
>>> fmt_reliability({"disagreement_rate": 0.15, "kappa": 0.62, "spot_check_n": 20})
'15% disagree, kappa 0.62, n 20'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ragmeter.progress import make_progress

if TYPE_CHECKING:
    from ragmeter.judges import CostEstimate, JudgeRun
    from ragmeter.result_json import PlainResult
    from ragmeter.results import EvalResult

MAX_WARNINGS_SHOWN = 8


ShownResult = Union["EvalResult", "PlainResult"]
"""What the terminal shows: an :class:`~ragmeter.results.EvalResult`, or the quick start's
:class:`~ragmeter.result_json.PlainResult` (the same fields, no pydantic to import)."""


def fmt_value(value: float | None) -> str:
    """Four decimals, or a dash for 'no value'."""
    return "—" if value is None else f"{value:.4f}"


def fmt_reliability(stats: Mapping[str, Any] | None) -> str:
    """A judge metric's spot-check as ``rate disagree, kappa K, n N``; empty without one."""
    if not stats:
        return ""
    rate = stats.get("disagreement_rate")
    kappa = stats.get("kappa")
    rate_text = "—" if not isinstance(rate, int | float) else f"{rate:.0%}"
    kappa_text = "—" if not isinstance(kappa, int | float) else f"{kappa:.2f}"
    return f"{rate_text} disagree, kappa {kappa_text}, n {stats.get('spot_check_n', 0)}"


def metrics_table(result: ShownResult, *, title: str = "ragmeter") -> Table:
    """A table of every aggregate with its counts and cutoff (and the judge spot-check, when run).

    Each row is named as the user typed the metric, beside its canonical name when they
    differ; a cutoff taken by the precedence rule says where it came from.
    """
    metric_info = result.provenance.get("metrics", {})
    typed = result.requested_names()
    renamed = any(typed[name] != name for name in result.aggregate)
    sourced = any(metric_info.get(name, {}).get("k_source") for name in result.aggregate)
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    if renamed:
        table.add_column("canonical")
    table.add_column("value", justify="right")
    table.add_column("scored", justify="right")
    table.add_column("skipped", justify="right")
    table.add_column("k", justify="right")
    if sourced:
        table.add_column("k from")
    reliability = result.judge_reliability
    if reliability:
        table.add_column("judge reliability")
    for name, mean in result.aggregate.items():
        info = metric_info.get(name, {})
        k = info.get("k")
        cells = [
            typed[name],
            *([name] if renamed else []),
            fmt_value(mean),
            str(result.n_scored.get(name, "")),
            str(result.n_skipped.get(name, "")),
            "" if k is None else str(k),
            *([str(info.get("k_source") or "")] if sourced else []),
        ]
        if reliability:
            cells.append(fmt_reliability(reliability.get(name)))
        table.add_row(*cells)
    return table


def judge_lines(result: ShownResult) -> list[str]:
    """Lines on the judge run: model, calls, cache hits, tokens and cost.

    Also the spot-check of judge metrics without a row of their own (the
    abstention judge's ``abstained``).
    """
    info = result.provenance.get("judge") or {}
    usage = info.get("usage")
    lines = []
    if isinstance(usage, dict):
        judge = info.get("judge") or {}
        second = (info.get("reliability") or {}).get("model")
        cost = usage.get("cost_usd")
        cost_text = "cost unknown (no price for the model)" if cost is None else f"{cost:.6g} USD"
        logged = f"{usage.get('from_log', 0)} from the judge log, " if usage.get("from_log") else ""
        seconds = usage.get("seconds")
        lines.append(
            f"judge {judge.get('model', '?')}"
            + (f" (spot-check: {second})" if second else "")
            + f": {usage.get('calls', 0)} calls, "
            f"{usage.get('cache_hits', 0)} from the cache, {logged}"
            f"{usage.get('prompt_tokens', 0) + usage.get('completion_tokens', 0)} tokens, {cost_text}"
            + (f", {seconds:.1f} s judging" if isinstance(seconds, int | float) else "")
            + (" — stopped at the budget" if usage.get("budget_exhausted") else "")
        )
    for name, stats in result.judge_reliability.items():
        if name not in result.aggregate:
            lines.append(f"judge reliability ({name}): {fmt_reliability(stats)}")
    return lines


def fmt_cell(cell: dict[str, Any] | None) -> str:
    """A breakdown cell as ``mean (n)``; empty when the group scored nothing."""
    if not cell:
        return ""
    mean = cell.get("mean")
    return f"{fmt_value(mean if isinstance(mean, (int, float)) else None)} ({cell.get('n', 0)})"


TERMINAL_SKIPPED_PREFIXES = ("latency_", "tokens_", "cost")
"""Breakdown rows left out of the terminal (they stay in the JSON and the HTML report)."""
CELL_WIDTH = 11


def split_columns(headers: Sequence[str], *, first: int, cell: int, pad: int, width: int) -> list[list[str]]:
    """``headers`` in order, in groups whose columns fit ``width`` beside a first column ``first`` wide.

    A column takes its header's length (at least ``cell``) plus ``pad``; a group has at least one.

    >>> split_columns(["a", "bb", "c"], first=4, cell=3, pad=2, width=14)
    [['a', 'bb'], ['c']]
    """
    chunks: list[list[str]] = [[]]
    used = first
    for header in headers:
        need = max(len(header), cell) + pad
        if chunks[-1] and used + need > width:
            chunks.append([])
            used = first
        chunks[-1].append(header)
        used += need
    return [chunk for chunk in chunks if chunk]


def breakdown_tables(breakdowns: Mapping[str, Mapping[str, Any]], *, width: int = 100) -> list[Table]:
    """Tables per breakdown dimension: a row per metric, a column per value (``mean (n)``).

    Values are split over several tables so that each fits in ``width`` columns.
    """
    tables = []
    for dimension, by_value in breakdowns.items():
        names = [
            name
            for name in dict.fromkeys(name for cells in by_value.values() for name in cells)
            if not name.startswith(TERMINAL_SKIPPED_PREFIXES)
        ]
        if not names:
            continue
        chunks = split_columns(
            list(by_value), first=max(len(n) for n in names) + 7, cell=CELL_WIDTH, pad=3, width=width
        )
        for number, chunk in enumerate(chunks, start=1):
            part = f" ({number}/{len(chunks)})" if len(chunks) > 1 else ""
            table = Table(title=f"by {dimension}{part}", title_justify="left")
            table.add_column("metric", no_wrap=True)
            for value in chunk:
                table.add_column(value, justify="right", no_wrap=True)
            for name in names:
                table.add_row(name, *(fmt_cell(by_value[value].get(name)) for value in chunk))
            tables.append(table)
    return tables


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return fmt_value(value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "—"
    return "—" if value is None else str(value)


def section_table(title: str, section: dict[str, Any]) -> Table:
    """A two-column table of a run-level section (``operational``, ``index_coverage``)."""
    table = Table(title=title, title_justify="left")
    table.add_column("item")
    table.add_column("value", overflow="fold")
    for key, value in section.items():
        table.add_row(key, _plain(value))
    return table


DEFAULT_BREAKDOWNS = ("category",)
"""Breakdown dimensions the terminal shows unless asked for more (all are in the JSON and HTML)."""


def parse_breakdowns(text: str) -> list[str] | None:
    """``--breakdowns``: comma-separated dimensions (``None`` for ``all``); an unknown one is an error.

    >>> parse_breakdowns("category, tag"), parse_breakdowns("all")
    (['category', 'tag'], None)
    >>> parse_breakdowns("catgory")
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: --breakdowns: unknown dimension 'catgory'; did you mean 'category'?
    """
    import difflib

    from ragmeter.errors import ConfigError
    from ragmeter.metrics.breakdowns import REPORTED_DIMENSIONS

    if text.strip() == "all":
        return None
    dims = [d.strip() for d in text.split(",") if d.strip()]
    for dim in dims:
        if dim not in REPORTED_DIMENSIONS:
            close = difflib.get_close_matches(dim, REPORTED_DIMENSIONS, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(REPORTED_DIMENSIONS)}, all"
            raise ConfigError(f"--breakdowns: unknown dimension {dim!r}; {hint}")
    return dims


def print_result(
    result: ShownResult,
    console: Console,
    err: Console,
    *,
    breakdowns: Sequence[str] | None = DEFAULT_BREAKDOWNS,
) -> None:
    """Print the metric table, breakdowns, run-level sections, the counts, and the first warnings.

    ``breakdowns`` names the dimensions to print (``None`` = all of them).
    """
    console.print(metrics_table(result))
    console.print(f"{result.n_queries:,} {'query' if result.n_queries == 1 else 'queries'}", end="")
    limited = result.provenance.get("limited")
    if limited:
        console.print(
            f" [bold yellow](quick look: the first {limited['first']} of {limited['of']}, not a full run)[/]",
            end="",
        )
    if result.n_missing_output:
        console.print(f", {result.n_missing_output} without output (scored as empty)", end="")
    console.print()
    for line in judge_lines(result):
        console.print(escape(line), highlight=False, soft_wrap=True)
    shown = (
        result.breakdowns
        if breakdowns is None
        else {d: result.breakdowns[d] for d in breakdowns if d in result.breakdowns}
    )
    for table in breakdown_tables(shown, width=console.width):
        console.print(table)
    hidden = [d for d in result.breakdowns if d not in shown]
    if hidden:
        console.print(
            f"[dim]more breakdowns (by {', '.join(hidden)}): --breakdowns all, --json, or the HTML report[/]"
        )
    if result.operational:
        console.print(section_table("operational", result.operational))
    if result.index_coverage:
        index_info = result.provenance.get("inputs", {}).get("index") or {}
        console.print(section_table("index coverage", {**result.index_coverage, **index_info}))
    for warning in result.warnings[:MAX_WARNINGS_SHOWN]:
        err.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True)
    if len(result.warnings) > MAX_WARNINGS_SHOWN:
        err.print(f"[yellow]… {len(result.warnings) - MAX_WARNINGS_SHOWN} more warnings (see --json)[/]")


class JudgeConsole:
    """Tells the user on stderr what judging may cost, how far it is, and when the budget stopped it.

    Progress is a bar on a terminal and a plain line every few seconds elsewhere (CI logs).
    """

    def __init__(self, err: Console, *, say_budget_stop: bool, quiet: bool = False) -> None:
        self.err = err
        self.say_budget_stop = say_budget_stop
        self.quiet = quiet
        self._progress = make_progress(quiet=quiet, console=err)
        self._phases: set[str] = set()

    def estimated(
        self, estimate: CostEstimate, *, n_items: int, max_cost_usd: float | None, spot_check: bool
    ) -> None:
        """Print the estimate of the calls that remain, before any judge call (not when quiet)."""
        if self.quiet:
            return
        if estimate.cost_usd_max is None:
            cost = "cost unknown: no price for the judge model (set judge.prices)"
        else:
            cost = f"at most {estimate.cost_usd_max:.4g} USD (upper bound)"
        extra = (
            f" + up to {estimate.possible_extra_calls} verification passes"
            if estimate.possible_extra_calls
            else ""
        )
        logged = f", {estimate.logged_calls} from the judge log" if estimate.logged_calls else ""
        self.err.print(
            f"judging {n_items} answer(s): {estimate.planned_calls} judge call(s){extra}, "
            f"{estimate.cached_calls} from the cache{logged}; {cost}"
            + ("; the reliability spot-check re-judges a subset on top" if spot_check else ""),
            highlight=False,
            soft_wrap=True,
        )
        if max_cost_usd is not None:
            self.err.print(
                f"budget: judging stops before spending more than {max_cost_usd:g} USD", highlight=False
            )

    def progress(self, phase: str, done: int, total: int) -> None:
        """``phase`` (``judging`` / ``spot-check``) has ``done`` of ``total`` judgements."""
        if phase not in self._phases:
            self._phases.add(phase)
            self._progress.add(phase, total=total, unit="answers" if phase == "bertscore" else "judgements")
        self._progress.update(phase, done=done, total=total)

    def finished(self, run: JudgeRun) -> None:
        """End the progress; say so when the budget stopped the run."""
        self.close()
        if self.say_budget_stop and run.usage.budget_exhausted:
            self.err.print(
                f"[yellow]judge:[/] stopped before spending more: {escape(run.usage.budget_message or '')}",
                highlight=False,
                soft_wrap=True,
            )

    def close(self) -> None:
        """End the progress display."""
        self._progress.stop()
        self._phases.clear()
