"""``ragmeter run``: run a suite against the system under test, then score and write the results."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from ragmeter.cli import app
from ragmeter.cli.options import examples, output_folder
from ragmeter.errors import ConfigError

if TYPE_CHECKING:
    from ragmeter.harness.multi_run import SuiteOutcome
    from ragmeter.harness.suite_run import RunOutcome

ExecutorOption = Annotated[
    str,
    typer.Option(
        "--executor",
        metavar="local|ray",
        help="Where the work runs: local (this process) or ray (a Ray cluster; see docs/scale.md).",
    ),
]
"""``--executor``, shared by the commands that can run on Ray."""

RayAddressOption = Annotated[
    str | None,
    typer.Option(
        "--ray-address",
        metavar="ADDRESS",
        help="Ray cluster to join: auto, HOST:PORT or ray://HOST:PORT "
        "(default: $RAY_ADDRESS, else a private Ray instance on this machine).",
        show_default=False,
    ),
]
"""``--ray-address``, shared by the commands that can run on Ray."""


@app.command(
    "run",
    epilog=examples(
        "ragmeter run examples/suite.yaml --fresh",
        "ragmeter run suite.yaml --limit 10 -o results/quick",
        "ragmeter run suite.yaml --resume",
    ),
)
def run_command(
    suite: Annotated[Path, typer.Argument(help="Suite file (YAML or JSON).", show_default=False)],
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Continue the results folder: questions already answered are skipped."),
    ] = False,
    fresh: Annotated[
        bool,
        typer.Option("--fresh", help="Replace the previous results folder of this suite (deletes it first)."),
    ] = False,
    results_dir: Annotated[
        Path | None,
        typer.Option(
            "--results-dir",
            "-o",
            help="Write the results folder here instead of the suite's results_dir.",
            callback=output_folder,
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Config file (default: ./ragmeter.yaml).")
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar and no notes; the table still prints.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the evaluation as one JSON object instead of the table.")
    ] = False,
    report: Annotated[
        bool, typer.Option("--report/--no-report", help="Write report.html into the results folder.")
    ] = True,
    record: Annotated[
        bool, typer.Option("--record/--no-record", help="Append the aggregates to the run history.")
    ] = True,
    history: Annotated[
        Path | None, typer.Option("--history", help="History database (default .ragmeter/history.sqlite).")
    ] = None,
    breakdowns: Annotated[
        str,
        typer.Option(
            "--breakdowns", metavar="DIMS", help="Breakdowns to print: comma-separated dimensions, or 'all'."
        ),
    ] = "category",
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, metavar="N", help="A quick look: ask only the first N questions."),
    ] = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
) -> None:
    """Ask every question of a suite, record the answers, score them and write the results folder."""
    from ragmeter.cli.render import JudgeConsole, parse_breakdowns, print_result
    from ragmeter.executors import make_executor
    from ragmeter.harness.results_folder import RUN_FILES
    from ragmeter.harness.suite_run import run_suite

    dims = parse_breakdowns(breakdowns)  # checked before any work
    if record or report:
        from ragmeter.report.history import check_history

        check_history(history)
    from ragmeter.harness.suite import load_suite

    runner = make_executor(executor, address=ray_address)
    try:
        loaded = load_suite(suite)  # every problem a suite file can have, before anything starts
    except BaseException:
        runner.close()
        raise

    err = Console(stderr=True, highlight=False, soft_wrap=True)

    def note(message: str) -> None:
        if not quiet or message.startswith("warning:"):
            err.print(message, markup=False)

    from ragmeter.harness.multi_run import SuiteOutcome, run_systems

    runs = run_systems if loaded.suite.systems is not None else run_suite
    observer = JudgeConsole(err, say_budget_stop=as_json, quiet=quiet)
    try:
        outcome = runs(
            loaded,
            resume=resume,
            fresh=fresh,
            quiet=quiet or as_json,
            config=config,
            results_dir=results_dir,
            notify=note,
            executor=runner,
            judge_observer=observer,
            limit=limit,
        )
        if runner.remote:
            note(executor_note(runner.describe()))
    finally:
        observer.close()
        runner.close()
    if isinstance(outcome, SuiteOutcome):
        _show_systems(
            outcome, as_json=as_json, note=note, dims=dims, report=report, record=record, history=history
        )
        return
    _note_summary(outcome, note)
    if as_json:
        typer.echo(outcome.result.to_json_text())
    else:
        print_result(outcome.result, Console(), err, breakdowns=dims)
    name = outcome.suite.suite.name
    if record:
        _record(outcome, history, label=name)
    if report:
        note(f"report: {_write_report(outcome.results_dir, history)}")
    written = [name for name in RUN_FILES if (outcome.results_dir / name).is_file()]
    note(f"results: {outcome.results_dir}/ ({', '.join(written)})")
    if outcome.all_failed:
        raise ConfigError(f"every call to {outcome.system} failed; first: {outcome.summary.first_errors[0]}")


def _note_summary(outcome: RunOutcome, note: Callable[[str], None], prefix: str = "") -> None:
    summary = outcome.summary
    asked = f"{prefix}asked {summary.n_called} question(s) in {summary.elapsed_seconds:.1f} s"
    if summary.n_resumed:
        asked += f" ({summary.n_resumed} answered before)"
    counts = f"{summary.n_ok} ok, {summary.n_errors} failed, {summary.n_timeouts} timed out, {summary.n_empty} empty"
    note(f"{asked}: {counts}")
    for line in summary.first_errors:
        note(f"  failed: {line}")


def _record(outcome: RunOutcome, history: Path | None, *, label: str) -> None:
    from ragmeter.report.history import default_history_path, record_run

    db = history or default_history_path()
    record_run(outcome.result, db=db, label=label, source=str(outcome.results_dir), suite=label)


def _write_report(results: Path, history: Path | None) -> Path:
    from ragmeter.report.history import default_history_path, load_history
    from ragmeter.report.html import write_report

    db = history or default_history_path()
    return write_report(results, history=load_history(db) if db.exists() else None)


def _show_systems(
    outcome: SuiteOutcome,
    *,
    as_json: bool,
    note: Callable[[str], None],
    dims: list[str] | None,
    report: bool,
    record: bool,
    history: Path | None,
) -> None:
    """Output of a suite with several systems: the comparison table, history, reports, the folder."""
    from ragmeter.cli.render import print_result
    from ragmeter.report.compare_tables import grid_text, legend, summary_grid

    suite_name = outcome.suite.suite.name
    for name, system in outcome.outcomes.items():
        _note_summary(system, note, prefix=f"{name}: ")
        if record:
            _record(system, history, label=f"{suite_name}/{name}")
        if report:
            _write_report(system.results_dir, history)
    mc = outcome.comparison
    if mc is not None:  # --limit cut every system alike: said once (a single result says it itself)
        quick = {
            w for s in outcome.outcomes.values() for w in s.result.warnings if w.startswith("quick look:")
        }
        for warning in sorted(quick):
            note(f"warning: {warning}")
    if mc is None:  # a single entry under systems: nothing to compare
        (system,) = outcome.outcomes.values()
        if as_json:
            typer.echo(system.result.to_json_text())
        else:
            print_result(system.result, Console(), Console(stderr=True), breakdowns=dims)
    elif as_json:
        typer.echo(mc.to_json())
    else:
        width = Console().width
        lines = [f"{mc.n_shared_queries} questions, {len(mc.systems)} systems"]
        lines.append(grid_text(summary_grid(mc), width=width))
        lines.extend(textwrap.fill(line, width=max(width, 40)) for line in legend(mc)[:2])
        lines.extend(f"note: {line}" for line in mc.notes)
        typer.echo("\n".join(lines))
    written = [*outcome.outcomes]
    if mc is not None:
        written.append(outcome.comparison_path.name)
        if report:
            links = {name: f"{name}/report.html" for name in outcome.outcomes}
            page = mc.write_html(outcome.results_dir / "report.html", links=links)
            written.append(page.name)
            note(f"report: {page}")
    note(f"results: {outcome.results_dir}/ ({', '.join(written)})")
    failed = [o for o in outcome.outcomes.values() if o.all_failed]
    if failed:
        first = failed[0]
        raise ConfigError(f"every call to {first.system} failed; first: {first.summary.first_errors[0]}")


def executor_note(info: dict[str, object]) -> str:
    """``ran on Ray 2.9.3: 8 CPUs on 2 node(s) at 10.0.0.5:6379``."""
    where = f"at {info['address']}" if info.get("address") else "(a private local instance)"
    return f"ran on Ray {info.get('ray_version')}: {info.get('cpus')} CPUs on {info.get('nodes')} node(s) {where}"
