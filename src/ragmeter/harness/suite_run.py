"""``run_suite``: the whole of ``ragmeter run`` — validate, call, record, evaluate, write.

Order matters for safety: everything that can be checked without asking a
question (suite, dataset, metric names, environment, the python function) is
checked before the results folder is touched; outputs are appended durably
as they arrive; metrics are computed from the recorded file, so a resumed run
and an uninterrupted one score the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.config import RagmeterConfig, load_config
from ragmeter.errors import ConfigError, InputError, RagmeterError
from ragmeter.evaluation.arguments import check_limit
from ragmeter.evaluation.dataset_inputs import check_no_embedded_outputs
from ragmeter.executors.base import Executor, use_executor
from ragmeter.harness.adapters import make_adapter
from ragmeter.harness.calls import Adapter, question_of
from ragmeter.harness.framework_suite import HaystackSystem
from ragmeter.harness.journal import OUTPUTS_FILENAME, JournalState, OutputsJournal, read_journal
from ragmeter.harness.remote import RemoteAdapter
from ragmeter.harness.results_folder import (
    CONFIG_FILENAME,
    INDEX_STATS_FILENAME,
    claim_results_dir,
    provenance,
    read_config_to_resume,
    resolved_suite,
)
from ragmeter.harness.runner import (
    ProgressSink,
    QuestionProgress,
    RunAborted,
    RunSettings,
    RunSummary,
    call_all,
)
from ragmeter.harness.suite import (
    BuiltinSystem,
    HttpSystem,
    LoadedSuite,
    PythonSystem,
    load_suite,
    tidy_path,
)
from ragmeter.io.atomic import write_json_atomic
from ragmeter.io.datasets import load_dataset
from ragmeter.io.outputs import parse_output
from ragmeter.progress import make_progress
from ragmeter.results import EvalResult
from ragmeter.schema.samples import Sample

if TYPE_CHECKING:
    from ragmeter.judges.answers import JudgeObserver

Notify = Callable[[str], None]


@dataclass
class RunOutcome:
    """What a finished run produced."""

    result: EvalResult
    summary: RunSummary
    results_dir: Path
    suite: LoadedSuite
    system: str
    """The system under test, as named in messages (URL as written, function, vault)."""
    warnings: list[str] = field(default_factory=list)

    @property
    def all_failed(self) -> bool:
        """Every question asked in this session failed (none answered)."""
        return self.summary.n_called > 0 and self.summary.n_ok == 0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _check_questions(loaded: LoadedSuite, samples: Sequence[Sample]) -> None:
    system = loaded.system
    if isinstance(system, PythonSystem) or (isinstance(system, HttpSystem) and not system.uses_question()):
        return  # the system gets the whole sample (or the fields its templates name)
    if (
        isinstance(system, HaystackSystem)
        and system.inputs is not None
        and "question" not in str(system.inputs)
    ):
        return  # the pipeline's inputs name other fields of the sample
    for sample in samples:
        if question_of(sample) is None:
            raise InputError(
                f"sample {sample.id!r} has no question (give 'input' as a string, 'input.question' "
                "or 'question')",
                where=str(loaded.dataset_path),
            )


def _check_resumed(state: JournalState, samples: Sequence[Sample], outputs_path: Path) -> None:
    """The recorded outputs a resumed run keeps must belong to the dataset and read as outputs.

    Checked before anything is asked or written: scoring would refuse them after the new calls.
    """
    known = {s.id for s in samples}
    unknown = [sid for sid in state.outputs if sid not in known]
    if unknown:
        raise ConfigError(
            f"holds outputs for {len(unknown)} sample(s) that are not in the dataset (e.g. {unknown[0]!r}); "
            "the dataset changed — use --fresh or a new results_dir",
            where=str(outputs_path),
        )
    for sid, output in state.outputs.items():
        parse_output(output, where=f"{outputs_path} (sample {sid!r})")


def _suite_changes(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> list[str]:
    if not previous or not isinstance(previous.get("suite"), dict):
        return []
    before = previous["suite"]
    return [key for key in ("dataset", "system", "k") if before.get(key) != current.get(key)]


def _evaluate(
    loaded: LoadedSuite,
    outputs: Path,
    *,
    config: RagmeterConfig | str | Path | None,
    index_stats: Path | None,
    judge_observer: JudgeObserver | None = None,
    limit: int | None = None,
) -> EvalResult:
    from ragmeter.api import evaluate

    judged = loaded.suite.judge is not None
    return evaluate(
        loaded.dataset_path,
        outputs,
        metrics=loaded.suite.metrics,
        k=loaded.suite.k,
        config=config,
        index_stats=index_stats,
        judge=loaded.suite.judge,
        judge_log=outputs.parent / "judge_log.jsonl" if judged else None,
        judge_observer=judge_observer,
        limit=limit,
    )


@dataclass
class SystemRun:
    """One system's run, prepared (checked, folder claimed, ``config.json`` started), asked, then scored."""

    loaded: LoadedSuite
    samples: Sequence[Sample]
    adapter: Adapter
    settings: RunSettings
    folder: Path
    state: JournalState
    doc: dict[str, Any]
    session: dict[str, Any]
    warnings: list[str]
    summary: RunSummary = field(default_factory=RunSummary)
    limit: int | None = None
    """``--limit``: only the first ``limit`` questions are asked and scored (:attr:`samples` are those)."""

    @property
    def outputs_path(self) -> Path:
        """The ``outputs.jsonl`` of this run."""
        return self.folder / OUTPUTS_FILENAME

    @property
    def pending(self) -> list[Sample]:
        """The samples not answered yet."""
        return [s for s in self.samples if s.id not in self.state.outputs]

    async def ask(self, progress: ProgressSink, *, slots: asyncio.Semaphore | None = None) -> RunSummary:
        """Ask every pending question (appending each answer to ``outputs.jsonl``)."""
        pending = self.pending
        with OutputsJournal(self.outputs_path) as journal:
            if pending:
                self.summary = await call_all(
                    self.adapter,
                    pending,
                    settings=self.settings,
                    journal=journal,
                    progress=progress,
                    total=len(self.samples),
                    done=len(self.state.outputs),
                    slots=slots,
                )
        return self.summary

    def stopped(self, **why: Any) -> None:
        """Record in ``config.json`` that this session ended early (aborted or interrupted)."""
        self.session.update(finished_at=_now(), **why)
        write_json_atomic(self.folder / CONFIG_FILENAME, self.doc)

    def aborted_error(self, exc: RunAborted) -> ConfigError:
        """The error for a run the system stopped (refused connections), pointing at its URL."""
        if self.loaded.system.type == "http":  # point at the URL in the suite file
            return self.loaded.error(("system", "url"), exc.message)
        return ConfigError(exc.message)

    def finish(
        self,
        *,
        config: str | Path | None,
        executor: Executor | None,
        say: Notify,
        judge_observer: JudgeObserver | None = None,
    ) -> RunOutcome:
        """Score the recorded outputs and write ``metrics.json``, ``per_query.jsonl`` and ``config.json``.

        ``judge_observer`` hears the judges' cost estimate and progress.
        """
        summary = self.summary
        summary.n_samples = len(self.samples)
        summary.n_resumed = len(self.state.outputs)
        self.session.update(finished_at=_now(), **summary.to_json_dict())
        index_stats = _write_index_stats(self.adapter, self.folder, asked=bool(self.pending))
        try:
            with use_executor(executor):
                result = _evaluate(
                    self.loaded,
                    self.outputs_path,
                    config=config,
                    index_stats=index_stats,
                    judge_observer=judge_observer,
                    limit=self.limit,
                )
        except RagmeterError:
            say(
                f"the answers are kept in {self.outputs_path}; once the problem below is fixed, "
                "'--resume' scores them without asking anything again"
            )
            raise
        result.write(self.folder)
        self.doc["finished_at"] = self.session["finished_at"]
        self.doc["run"] = summary.to_json_dict()
        if index_stats is not None:
            self.doc["index_stats_file"] = INDEX_STATS_FILENAME
        write_json_atomic(self.folder / CONFIG_FILENAME, self.doc)
        return RunOutcome(result, summary, self.folder, self.loaded, self.adapter.description, self.warnings)


def load_samples(loaded: LoadedSuite) -> list[Sample]:
    """The suite's dataset, checked for every system of the suite (questions, no embedded outputs)."""
    samples = load_dataset(loaded.dataset_path)
    for view in loaded.system_views():
        _check_questions(view, samples)
    check_no_embedded_outputs(
        samples,
        where=str(loaded.dataset_path),
        other="the system under test",
        fix="score the embedded outputs with 'ragmeter eval'",
    )
    return samples


def run_settings(loaded: LoadedSuite, config: str | Path | None) -> RunSettings:
    """How to call the systems: the suite's limits, and k by the precedence rule."""
    suite = loaded.suite
    cfg, _ = load_config(config)
    return RunSettings(
        concurrency=suite.concurrency,
        timeout_seconds=suite.timeout_seconds,
        retries=suite.retries,
        backoff_seconds=suite.backoff_seconds,
        max_backoff_seconds=suite.max_backoff_seconds,
        default_k=suite.k or cfg.metrics.retrieval.default_k,
    )


def prepare_system(
    loaded: LoadedSuite,
    samples: Sequence[Sample],
    settings: RunSettings,
    *,
    folder: Path,
    resume: bool,
    fresh: bool,
    environ: Mapping[str, str] | None,
    executor: Executor | None,
    say: Notify,
    limit: int | None = None,
) -> SystemRun:
    """Build the adapter, claim the results folder (new, resumed or fresh) and start ``config.json``.

    ``loaded`` is a single-system suite (or one view of a multi-system one). ``limit`` asks only
    the first ``limit`` of ``samples`` (a quick look: recorded in ``config.json`` and said first in
    the result's warnings); the answers a resumed folder holds beyond it are kept, not scored.
    """
    check_limit(limit)
    adapter = make_adapter(loaded, default_k=settings.default_k, environ=environ)
    if executor is not None and executor.remote:
        executor.start()  # an unreachable cluster is an error before the results folder is touched
        adapter = RemoteAdapter(
            adapter,
            executor,
            loaded=loaded,
            default_k=settings.default_k,
            concurrency=settings.concurrency,
            environ=environ,
        )
    system = loaded.system
    keep = [loaded.dataset_path]
    if isinstance(system, BuiltinSystem):
        keep.append(loaded.resolve(system.vault))
    previous = read_config_to_resume(folder) if resume and folder.is_dir() else None
    continuing = claim_results_dir(folder, resume=resume, fresh=fresh, suite_path=loaded.path, keep=keep)
    outputs_path = folder / OUTPUTS_FILENAME
    state = read_journal(outputs_path, repair=True) if continuing else JournalState()
    warnings = list(state.warnings)
    _check_resumed(state, samples, outputs_path)
    samples = samples[:limit] if limit is not None else samples
    suite_doc = resolved_suite(loaded, results_dir=folder)
    changed = _suite_changes(previous, suite_doc)
    if changed:
        warnings.append(
            f"the suite's {', '.join(changed)} changed since this results folder was started; "
            "its outputs now come from both versions"
        )
    for warning in warnings:
        say(f"warning: {warning}")
    session: dict[str, Any] = {
        "started_at": _now(),
        "resumed": continuing,
        "n_resumed": len(state.outputs),
        "executor": executor.describe() if executor is not None else {"kind": "local"},
        **({"limit": limit} if limit is not None else {}),
    }
    sessions = list(previous.get("sessions", [])) if previous and continuing else []
    sessions.append(session)
    doc: dict[str, Any] = {
        "suite": suite_doc,
        "suite_file": str(loaded.path),
        **provenance(loaded),
        **_adapter_provenance(adapter),
        "started_at": sessions[0].get("started_at", session["started_at"]),
        "finished_at": None,
        "sessions": sessions,
    }
    if loaded.system_name is not None:
        doc["system_name"] = loaded.system_name
    write_json_atomic(folder / CONFIG_FILENAME, doc)
    if continuing:
        say(f"resuming {folder}: {len(state.outputs)} of {len(samples)} questions already answered")
    return SystemRun(loaded, samples, adapter, settings, folder, state, doc, session, warnings, limit=limit)


def run_suite(
    suite_path: str | Path | LoadedSuite,
    *,
    resume: bool = False,
    fresh: bool = False,
    quiet: bool = False,
    config: str | Path | None = None,
    results_dir: str | Path | None = None,
    progress: ProgressSink | None = None,
    notify: Notify | None = None,
    environ: Mapping[str, str] | None = None,
    executor: Executor | None = None,
    judge_observer: JudgeObserver | None = None,
    limit: int | None = None,
) -> RunOutcome:
    """Run a suite end to end and return the evaluation and the call summary.

    ``resume`` continues an existing results folder (questions already recorded
    are not asked again); ``fresh`` replaces it; without either, a non-empty
    results folder is an error. ``results_dir`` overrides the suite's.
    ``executor`` (default: this process) is where the system is called and the
    judges' calls are made; ``outputs.jsonl`` is always written here. ``judge_observer`` hears
    the judges' cost estimate and progress. ``limit`` asks only the first ``limit`` questions
    (see :func:`prepare_system`). A suite with several ``systems`` is run by
    :func:`~ragmeter.harness.multi_run.run_systems`.
    """
    say: Notify = notify or (lambda _message: None)
    loaded = suite_path if isinstance(suite_path, LoadedSuite) else load_suite(suite_path, environ=environ)
    if loaded.suite.systems is not None:
        raise ConfigError("this suite lists several systems: run it with run_systems (ragmeter run does)")
    samples = load_samples(loaded)
    settings = run_settings(loaded, config)
    folder = tidy_path(Path(results_dir)) if results_dir is not None else loaded.results_dir
    run = prepare_system(
        loaded,
        samples,
        settings,
        folder=folder,
        resume=resume,
        fresh=fresh,
        environ=environ,
        executor=executor,
        say=say,
        limit=limit,
    )
    sink = progress or QuestionProgress(make_progress(quiet=quiet))
    try:
        asyncio.run(run.ask(sink))
    except RunAborted as exc:
        run.stopped(aborted=exc.message)
        raise run.aborted_error(exc) from None
    except KeyboardInterrupt:
        run.stopped(interrupted=True)
        say(f"interrupted: the answers so far are kept in {run.outputs_path}; continue with --resume")
        raise
    return run.finish(config=config, executor=executor, say=say, judge_observer=judge_observer)


def _adapter_provenance(adapter: Adapter) -> dict[str, Any]:
    details = getattr(adapter, "provenance", None)
    result = details() if callable(details) else {}
    return result if isinstance(result, dict) else {}


def _write_index_stats(adapter: Adapter, folder: Path, *, asked: bool) -> Path | None:
    """Let an adapter that has an index (the builtin pipeline) write its statistics into the folder."""
    writer = getattr(adapter, "write_index_stats", None)
    if not callable(writer):
        return None
    target = folder / INDEX_STATS_FILENAME
    if asked or not target.is_file():
        writer(target)
    return target if target.is_file() else None
