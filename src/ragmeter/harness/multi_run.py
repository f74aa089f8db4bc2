"""``run_systems``: a suite with several ``systems`` — every system asked the same questions, then compared.

The systems are asked at the same time under one concurrency limit (the suite's
``concurrency`` counts the calls in flight across all of them). Each system has its own
results folder, ``<results_dir>/<name>/``, with its own ``outputs.jsonl``, so ``--resume``
continues each one where it stopped and ``--fresh`` replaces each one. Once every system is
scored, the comparison (:func:`ragmeter.report.multi_compare.compare`: the baseline — the
first system, or ``baseline:`` — against each other) is written to
``<results_dir>/comparison.json``.

A system that refuses every connection stops only its own run: the others finish and are
scored, then the run ends with that system's error (its answers so far are kept for
``--resume``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.errors import ConfigError
from ragmeter.executors.base import Executor
from ragmeter.harness.runner import QuestionProgress, RunAborted
from ragmeter.harness.suite import LoadedSuite, load_suite, tidy_path
from ragmeter.harness.suite_run import (
    Notify,
    RunOutcome,
    SystemRun,
    load_samples,
    prepare_system,
    run_settings,
)
from ragmeter.io.atomic import write_text_atomic
from ragmeter.progress import make_progress

if TYPE_CHECKING:
    from ragmeter.judges.answers import JudgeObserver
    from ragmeter.report.multi_compare import MultiComparison

COMPARISON_FILENAME = "comparison.json"


@dataclass
class SuiteOutcome:
    """What a multi-system run produced: each system's run and their comparison."""

    suite: LoadedSuite
    results_dir: Path
    outcomes: dict[str, RunOutcome]
    comparison: MultiComparison | None = None
    """``None`` with a single system (nothing to compare)."""
    warnings: list[str] = field(default_factory=list)

    @property
    def comparison_path(self) -> Path:
        """``<results_dir>/comparison.json``."""
        return self.results_dir / COMPARISON_FILENAME


def run_systems(
    suite_path: str | Path | LoadedSuite,
    *,
    resume: bool = False,
    fresh: bool = False,
    quiet: bool = False,
    config: str | Path | None = None,
    results_dir: str | Path | None = None,
    notify: Notify | None = None,
    environ: Mapping[str, str] | None = None,
    executor: Executor | None = None,
    judge_observer: JudgeObserver | None = None,
    limit: int | None = None,
) -> SuiteOutcome:
    """Run every system of a suite on the same questions, score each, and compare them.

    Options as for :func:`~ragmeter.harness.suite_run.run_suite`; ``results_dir`` is the folder
    that holds one folder per system and ``comparison.json``.
    """
    say: Notify = notify or (lambda _message: None)
    loaded = suite_path if isinstance(suite_path, LoadedSuite) else load_suite(suite_path, environ=environ)
    views = loaded.system_views()
    samples = load_samples(loaded)
    settings = run_settings(loaded, config)
    top = tidy_path(Path(results_dir)) if results_dir is not None else loaded.results_dir
    runs: list[SystemRun] = []
    for view in views:
        name = view.system_name or view.suite.name
        runs.append(
            prepare_system(
                view,
                samples,
                settings,
                folder=top / name,
                resume=resume,
                fresh=fresh,
                environ=environ,
                executor=executor,
                say=_prefixed(say, name),
                limit=limit,
            )
        )
    names = [run.loaded.system_name or run.loaded.suite.name for run in runs]
    errors = _ask_all(runs, names, concurrency=settings.concurrency, quiet=quiet, say=say)
    outcomes = {
        name: run.finish(config=config, executor=executor, say=say, judge_observer=judge_observer)
        for name, run in zip(names, runs, strict=True)
        if name not in errors
    }
    if errors:
        name, error = next(iter(errors.items()))
        others = f" (the other systems were scored: {', '.join(outcomes)})" if outcomes else ""
        message = error.message if error.where else f"system {name!r}: {error.message}"
        raise ConfigError(f"{message}{others}", where=error.where) from None
    outcome = SuiteOutcome(loaded, top, outcomes)
    if len(outcomes) > 1:
        from ragmeter.report.multi_compare import compare

        outcome.comparison = compare(
            [o.results_dir for o in outcomes.values()],
            names=list(outcomes),
            baseline=loaded.suite.baseline,
        )
        write_text_atomic(outcome.comparison_path, outcome.comparison.to_json() + "\n")
    return outcome


def _prefixed(say: Notify, name: str) -> Notify:
    def notify(message: str) -> None:
        warning = message.startswith("warning: ")
        say(f"warning: {name}: {message.removeprefix('warning: ')}" if warning else f"{name}: {message}")

    return notify


def _ask_all(
    runs: list[SystemRun], names: list[str], *, concurrency: int, quiet: bool, say: Notify
) -> dict[str, ConfigError]:
    """Ask every system its pending questions at once, ``concurrency`` calls in flight in all.

    Returns the errors of the systems that refused every connection (the others ran to the end).
    """
    progress = make_progress(quiet=quiet)

    async def ask_all() -> list[BaseException | object]:
        slots = asyncio.Semaphore(concurrency)
        sinks = [QuestionProgress(progress, name=f"asking {name}", shared=True) for name in names]
        return await asyncio.gather(
            *(run.ask(sink, slots=slots) for sink, run in zip(sinks, runs, strict=True)),
            return_exceptions=True,
        )

    try:
        with progress:
            results = asyncio.run(ask_all())
    except KeyboardInterrupt:
        for run in runs:
            run.stopped(interrupted=True)
        say("interrupted: the answers so far are kept in each system's outputs.jsonl; continue with --resume")
        raise
    errors: dict[str, ConfigError] = {}
    for name, run, result in zip(names, runs, results, strict=True):
        if isinstance(result, RunAborted):
            run.stopped(aborted=result.message)
            errors[name] = run.aborted_error(result)
        elif isinstance(result, BaseException):
            raise result
    return errors
