"""One ``ragmeter mine`` run: registry -> questions -> trials -> ``retrieval_dataset.yaml``.

Trial logs go to ``<out stem>.trials/`` next to the output file (one JSONL per question). The
dataset is rewritten after a question at most every :data:`WRITE_EVERY_S` seconds and when the
run ends (Ctrl-C and errors included); the trial logs are the record, ``--recompute`` rebuilds it.

>>> default_trials_dir(Path("out/retrieval_dataset.yaml"))
PosixPath('out/retrieval_dataset.trials')
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError, RagmeterError
from ragmeter.executors.base import Executor, WorkerPool
from ragmeter.io.records import file_sha256, read_structured
from ragmeter.mining.dataset import dataset_document, write_dataset
from ragmeter.mining.designs import BayesDesign, Design
from ragmeter.mining.extractor import Pool
from ragmeter.mining.miner import (
    MinedQuestion,
    MiningProgress,
    SilentProgress,
    log_file_name,
    mine_question,
    recompute_question,
)
from ragmeter.mining.questions import MiningQuestion, load_corpora, prepare_questions, select_pairs
from ragmeter.mining.registry import (
    AnswerValidatorSpec,
    BenchmarkSpec,
    DesignSpec,
    LLMSolverSpec,
    PytestValidatorSpec,
    Registry,
    design_from_spec,
    load_registry,
)
from ragmeter.mining.sandbox import SandboxInfo, SandboxLimits, probe, refusal
from ragmeter.mining.solvers import Solver, load_python_solver
from ragmeter.mining.trials import TrialWorker, local_trial_pool
from ragmeter.mining.validators import AnswerValidator, PytestValidator, Validator

WRITE_EVERY_S = 30.0
"""The dataset is rewritten after a question at most this often (and always at the end)."""
TRIALS_PER_QUESTION = 4
"""With a remote executor, one question is mined at a time per this many trial slots (looks add 4 trials)."""


def default_trials_dir(out: Path) -> Path:
    """``<out without suffix>.trials``."""
    return out.with_suffix("").with_name(out.with_suffix("").name + ".trials")


@dataclass
class DesignOptions:
    """Design choices from the command line (``None``: take the registry's)."""

    name: str | None = None
    trials: int | None = None
    strict: bool | None = None
    screen: int | None = None
    tau: float | None = None

    def given(self) -> bool:
        """True when any option was given."""
        return any(v is not None for v in (self.name, self.trials, self.strict, self.screen, self.tau))


def resolve_design(registry: Registry, options: DesignOptions) -> Design:
    """The registry's design with the command-line options applied (``--trials`` is N or the cap).

    >>> from ragmeter.mining.registry import parse_registry
    >>> reg = parse_registry({"corpora": {"c": {"packages": ["json"]}}, "solver": {"kind": "python", "function": "m:f"},
    ...     "benchmarks": [{"name": "b", "corpus": "c", "validator": {"kind": "answer"},
    ...                     "questions": [{"id": 1, "question": "q", "answer": "a"}]}]}, path=Path("r.yaml"))
    >>> resolve_design(reg, DesignOptions(name="fixed", trials=20))
    FixedDesign(name='fixed', version=1, trials=20, p=0.5, threshold=0.1)
    >>> resolve_design(reg, DesignOptions(trials=128)).n_max
    128
    """
    spec = registry.design
    name = options.name or spec.name
    params = dict(spec.params) if name == spec.name else {}
    kind = "fixed" if name == "fixed" else "bayes"
    design_from_spec(
        DesignSpec(name=kind, params=params), where=f"{registry.path}:design"
    )  # the file's fault
    flags: dict[str, str] = {}  # design parameter -> the option that set it
    if name == "fixed":
        if options.trials is not None:
            params["trials"], flags["trials"] = options.trials, "--trials"
        for flag, value in (
            ("--strict", options.strict),
            ("--screen", options.screen),
            ("--tau", options.tau),
        ):
            if value:
                raise ConfigError(f"{flag} applies to the bayes design only")
    else:
        for key, flag, value in (
            ("n_max", "--trials", options.trials),
            ("strict", "--strict", options.strict),
            ("screen", "--screen", options.screen),
            ("tau", "--tau", options.tau),
        ):
            if value is not None:
                params[key], flags[key] = value, flag
    try:
        return design_from_spec(DesignSpec(name=kind, params=params), where=f"{registry.path}:design")
    except ConfigError as exc:  # only an option can have made valid registry settings invalid
        blamed = [flag for key, flag in flags.items() if (exc.where or "").endswith(f".params.{key}")]
        raise ConfigError(exc.message, where=" / ".join(blamed or flags.values())) from None


def build_solver(registry: Registry, *, concurrency: int | None = None) -> Solver:
    """The registry's solver (``concurrency`` overrides its setting)."""
    spec = registry.solver
    where = f"{registry.path}:solver"
    if isinstance(spec, LLMSolverSpec):
        from ragmeter.mining.llm_solver import LLMSolver

        if concurrency is not None:
            spec = spec.model_copy(update={"concurrency": concurrency})
        return LLMSolver(spec, where=where)
    paths = [str(registry.resolve(p)) for p in spec.python_path]
    return load_python_solver(
        spec.function,
        python_path=paths,
        kwargs=spec.kwargs,
        concurrency=concurrency or spec.concurrency,
        name=spec.name,
        where=f"{where}.function",
    )


def build_validator(
    bench: BenchmarkSpec, *, unsafe_no_sandbox: bool, sandbox_cache: dict[str, SandboxInfo]
) -> Validator:
    """The benchmark's validator; a pytest validator probes its sandbox once (and refuses to run without one)."""
    spec = bench.validator
    if isinstance(spec, AnswerValidatorSpec):
        return AnswerValidator(
            match=spec.match, fuzzy_threshold=spec.fuzzy_threshold, ignore_case=spec.ignore_case
        )
    if not isinstance(spec, PytestValidatorSpec):  # pragma: no cover - the union has two members
        raise TypeError(f"unknown validator {spec!r}")
    mode = "none" if unsafe_no_sandbox else spec.sandbox
    if mode not in sandbox_cache:
        sandbox_cache[mode] = probe(mode)
    info = sandbox_cache[mode]
    if info.kind == "unavailable":
        raise ConfigError(f"benchmark {bench.name!r}: {refusal(info)}")
    limits = SandboxLimits(
        timeout_s=spec.timeout_s,
        cpu_s=spec.cpu_s,
        memory_mb=spec.memory_mb,
        max_processes=spec.max_processes,
        file_size_mb=spec.file_size_mb,
    )
    return PytestValidator(
        info, limits, solution_file=spec.solution_file, pytest_args=tuple(spec.pytest_args)
    )


@dataclass
class MiningOutcome:
    """What a run did: every question's result, where things were written, and why it stopped early."""

    mined: list[MinedQuestion]
    out: Path
    trials_dir: Path
    design: Design
    budget_stop: str | None = None
    sandbox: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def incomplete(self) -> list[MinedQuestion]:
        """Questions not decided (failed trials, budget, or missing logs)."""
        return [m for m in self.mined if m.conclusion is None]


def _clean(out: Path, trials_dir: Path) -> None:
    """``--fresh``: delete the trial logs this command wrote and the old dataset."""
    if trials_dir.is_dir():
        for log in trials_dir.glob("*.jsonl"):
            log.unlink()
        with contextlib.suppress(OSError):
            trials_dir.rmdir()
    out.unlink(missing_ok=True)


def mine(
    registry_path: str | Path,
    out: str | Path,
    *,
    design_options: DesignOptions | None = None,
    resume: bool = False,
    fresh: bool = False,
    recompute: bool = False,
    unsafe_no_sandbox: bool = False,
    only: Sequence[str] | None = None,
    concurrency: int | None = None,
    trials_dir: str | Path | None = None,
    progress: Callable[[int], MiningProgress] | None = None,
    notify: Callable[[str], None] | None = None,
    executor: Executor | None = None,
) -> MiningOutcome:
    """Run (or resume, or recompute) the mining of a registry and write the dataset.

    ``progress`` is called once with the number of questions and returns the progress sink.
    ``executor`` runs the trials (default: threads here); with a remote one, several
    questions are mined at once and the solver's ``concurrency`` caps its calls across the
    cluster. The trial logs and the dataset are written by this process either way.
    """
    registry = load_registry(registry_path)
    out = Path(out)
    logs = Path(trials_dir) if trials_dir is not None else default_trials_dir(out)
    options = design_options or DesignOptions()
    notify = notify or (lambda message: None)
    if sum([resume, fresh, recompute]) > 1:
        raise ConfigError("choose one of --resume, --fresh and --recompute")
    registry_info = {"path": str(registry.path), "sha256": file_sha256(registry.path)}
    if recompute:
        if options.given():
            raise ConfigError(
                "--recompute takes the design from each trial log; drop --design/--trials/--strict/--screen/--tau"
            )
        return _recompute(registry, out, logs, only, registry_info, notify)
    design = resolve_design(registry, options)
    if executor is not None:
        executor.start()  # an unreachable cluster is an error before anything is deleted or written
    if fresh:
        _clean(out, logs)
    elif not resume and (out.exists() or (logs.is_dir() and any(logs.glob("*.jsonl")))):
        raise ConfigError(
            f"{out} or its trial logs in {logs} exist from an earlier run; pass --resume to continue or --fresh to start over"
        )
    selected = select_pairs(registry, only)
    corpora = load_corpora(registry, sorted({b.corpus for b, _ in selected}))
    questions = prepare_questions(registry, only=only, corpora=corpora)
    corpora_info = {name: corpus.provenance for name, corpus in corpora.items()}
    solver = build_solver(registry, concurrency=concurrency)
    sandbox_cache: dict[str, SandboxInfo] = {}
    validators = {
        b.name: build_validator(b, unsafe_no_sandbox=unsafe_no_sandbox, sandbox_cache=sandbox_cache)
        for b in registry.benchmarks
        if any(q.benchmark == b.name for q in questions)
    }
    sandbox = None
    if sandbox_cache:
        info = next(iter(sandbox_cache.values()))
        sandbox = info.to_dict()
        if info.kind == "none":
            notify(f"warning: sandbox: {sandbox['description']}")
        for note in info.notes:
            notify(f"note: sandbox: {note}")
    outcome = MiningOutcome([], out, logs, design, sandbox=sandbox)
    stop = threading.Event()
    sink = progress(len(questions)) if progress is not None else SilentProgress()
    try:
        pool, at_once = _trial_pool(executor, solver, validators)
    except BaseException:
        solver.close()
        raise
    last_write = 0.0

    def mine_one(question: MiningQuestion, progress_sink: MiningProgress) -> tuple[MinedQuestion, str | None]:
        return mine_question(
            question,
            design=design,
            solver=solver,
            validator=validators[question.benchmark],
            log_path=logs / log_file_name(question.pair_id),
            resume=resume,
            progress=progress_sink,
            stop_event=stop,
            pool=pool,
            notify=notify,
        )

    def written(done: int) -> None:
        nonlocal last_write
        if time.monotonic() - last_write >= WRITE_EVERY_S:  # the logs are the record; this is a view
            _write(outcome, registry, registry_info, corpora_info, pending=len(questions) - done)
            last_write = time.monotonic()

    try:
        if at_once == 1:
            for index, question in enumerate(questions):
                mined, budget = mine_one(question, sink)
                outcome.mined.append(mined)
                if budget is not None:
                    outcome.budget_stop = budget
                    break
                written(index + 1)
        else:
            _mine_concurrently(questions, mine_one, outcome, stop, _SerialProgress(sink), at_once, written)
    finally:
        pool.close()
        solver.close()
        if outcome.mined:  # also on Ctrl-C and errors: the dataset shows what was done
            _write(
                outcome, registry, registry_info, corpora_info, pending=len(questions) - len(outcome.mined)
            )
    return outcome


def _solver_key(solver: Solver) -> str:
    """The solver's limiter key: its endpoint and model, or its function."""
    identity = solver.identity()
    if identity.get("kind") == "llm":
        return f"solver:{identity.get('base_url')}|{identity.get('model')}"
    return f"solver:{identity.get('kind')}:{identity.get('function')}"


def _trial_pool(
    executor: Executor | None, solver: Solver, validators: dict[str, Validator]
) -> tuple[WorkerPool[TrialWorker], int]:
    """The pool that runs trials, and how many questions to mine at once."""
    if executor is None or not executor.remote:
        return local_trial_pool(solver, validators, executor), 1
    executor.start()
    size = executor.cpus()
    limiter = executor.limiter(_solver_key(solver), solver.concurrency)
    pool = executor.pool(
        TrialWorker(solver, validators, limiter),
        name="mine",
        size=size,
        per_worker=max(1, math.ceil(solver.concurrency / size)),
        cpus=1.0,
    )
    ready = getattr(pool, "ready", None)
    if callable(ready):
        try:
            ready()
        except Exception as exc:
            pool.close()
            cause = getattr(exc, "cause", None) or exc
            raise ConfigError(
                f"the workers could not load the solver and validators: {type(cause).__name__}: "
                f"{' '.join(str(cause).split())[:300]}"
            ) from None
    return pool, max(1, math.ceil(pool.capacity / TRIALS_PER_QUESTION))


class _SerialProgress:
    """A progress sink called from several question threads, one call at a time."""

    def __init__(self, sink: MiningProgress) -> None:
        self._sink = sink
        self._lock = threading.Lock()

    def question_started(self, pair_id: str, pool_size: int, trials_logged: int) -> None:
        """Forward."""
        with self._lock:
            self._sink.question_started(pair_id, pool_size, trials_logged)

    def look_started(self, pair_id: str, look: int, new_trials: int) -> None:
        """Forward."""
        with self._lock:
            self._sink.look_started(pair_id, look, new_trials)

    def trial_done(self, pair_id: str, passed: bool | None, cost_usd: float | None) -> None:
        """Forward."""
        with self._lock:
            self._sink.trial_done(pair_id, passed, cost_usd)

    def question_done(self, mined: MinedQuestion) -> None:
        """Forward."""
        with self._lock:
            self._sink.question_done(mined)


def _mine_concurrently(
    questions: Sequence[MiningQuestion],
    mine_one: Callable[[MiningQuestion, MiningProgress], tuple[MinedQuestion, str | None]],
    outcome: MiningOutcome,
    stop: threading.Event,
    sink: MiningProgress,
    at_once: int,
    written: Callable[[int], None],
) -> None:
    """Mine ``at_once`` questions at a time; ``outcome.mined`` stays in question order."""
    done: dict[int, MinedQuestion] = {}
    failure: BaseException | None = None
    threads = ThreadPoolExecutor(max_workers=at_once, thread_name_prefix="ragmeter-question")
    running: dict[Future[tuple[MinedQuestion, str | None]], int] = {}
    upcoming = iter(enumerate(questions))
    try:
        while True:
            while len(running) < at_once and not stop.is_set():
                nxt = next(upcoming, None)
                if nxt is None:
                    break
                running[threads.submit(mine_one, nxt[1], sink)] = nxt[0]
            if not running:
                break
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                index = running.pop(future)
                try:
                    mined, budget = future.result()
                except Exception as exc:  # a fatal error: let the others stop, then raise it
                    failure = failure or exc
                    stop.set()
                    continue
                done[index] = mined
                if budget is not None and outcome.budget_stop is None:
                    outcome.budget_stop = budget
                    stop.set()
            outcome.mined = [done[i] for i in sorted(done)]
            written(len(done))
    except BaseException:  # Ctrl-C: the questions running log what is in flight and stop
        stop.set()
        raise
    finally:
        threads.shutdown(wait=True)
        outcome.mined = [done[i] for i in sorted(done)]
    if failure is not None:
        raise failure


def _write(
    outcome: MiningOutcome,
    registry: Registry,
    registry_info: dict[str, Any],
    corpora: dict[str, Any],
    *,
    pending: int,
) -> None:
    document = dataset_document(
        outcome.mined,
        dataset_path=outcome.out,
        design=outcome.design,
        dataset_seed=registry.seed,
        registry=registry_info,
        corpora=corpora,
        sandbox=outcome.sandbox,
        complete=pending == 0 and not outcome.incomplete,
        pending=pending,
    )
    write_dataset(outcome.out, document)


def _recompute(
    registry: Registry,
    out: Path,
    logs: Path,
    only: Sequence[str] | None,
    registry_info: dict[str, Any],
    notify: Callable[[str], None],
) -> MiningOutcome:
    from ragmeter.mining.validators import GroundTruth

    mined: list[MinedQuestion] = []
    design: Design | None = None
    for bench, question in select_pairs(registry, only):
        pair_id = bench.pair_id(question)
        path = logs / log_file_name(pair_id)
        if path.exists():
            result = recompute_question(None, path)
            design = design or result.design
        else:
            placeholder = MiningQuestion(
                pair_id=pair_id,
                benchmark=bench.name,
                question_id=question.id,
                query=question.question,
                pool=Pool((), []),
                seed=0,
                truth=GroundTruth(),
                task="answer",
                solution_file=None,
            )
            result = MinedQuestion(
                placeholder, design or BayesDesign(), None, path, None, {}, {}, error="no trial log"
            )
            notify(f"warning: {pair_id}: no trial log at {path}")
        mined.append(result)
    used = design or BayesDesign()
    for m in mined:
        if m.error == "no trial log":
            m.design = used
    corpora, sandbox = _earlier_header(out, registry, only, mined, notify)
    outcome = MiningOutcome(mined, out, logs, used, sandbox=sandbox)
    if len({json.dumps(m.design.block(), sort_keys=True) for m in mined}) > 1:
        notify("warning: the trial logs were made with different designs; the header shows the first")
    _write(outcome, registry, registry_info, corpora, pending=0)
    return outcome


def _earlier_header(
    out: Path,
    registry: Registry,
    only: Sequence[str] | None,
    mined: Sequence[MinedQuestion],
    notify: Callable[[str], None],
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """``--recompute``: the corpora and sandbox of the dataset's header, as the mining run wrote them.

    Without a readable earlier dataset, the corpora are described from the registry as they are
    now, and the sandbox from what the trial logs recorded.
    """
    with contextlib.suppress(RagmeterError, OSError):
        data = read_structured(out) if out.is_file() else None
        header = data.get("ragmeter_mining") if isinstance(data, dict) else None
        if isinstance(header, dict) and isinstance(header.get("corpora"), dict) and header["corpora"]:
            sandbox = header.get("sandbox")
            return dict(header["corpora"]), dict(sandbox) if isinstance(sandbox, dict) else None
    notify(f"note: no earlier header in {out}: the corpora are described as installed now")
    names = sorted({b.corpus for b, _ in select_pairs(registry, only)})
    corpora = {name: corpus.provenance for name, corpus in load_corpora(registry, names).items()}
    boxes = list(dict.fromkeys(box for m in mined for box in m.sandboxes))
    sandbox = (
        {"description": boxes[0] if len(boxes) == 1 else boxes, "from": "the trial logs"} if boxes else None
    )
    return corpora, sandbox
