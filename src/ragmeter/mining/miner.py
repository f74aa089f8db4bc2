"""The mining loop: for each question, run trials look by look, log them, and conclude.

:func:`mine_question` opens (or resumes) the question's trial log, replays what it holds,
plans the missing trials of the next look with the seeded RNG, runs them through the solver
and the validator (``solver.concurrency`` at once), appends each to the log as it completes,
and lets the design decide at each look. :func:`recompute_question` does the same from the
log alone, with no solver call.

A trial whose solver call or validation fails is logged as an ``error`` and the question ends
``INCOMPLETE``; the trial is run again on ``--resume``. A budget stop ends the run cleanly.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ragmeter import __version__
from ragmeter.errors import ConfigError, InputError
from ragmeter.executors.base import WorkerPool
from ragmeter.io.digests import file_sha256
from ragmeter.mining.designs import Conclusion, Design, design_from_block
from ragmeter.mining.driver import Outcome, TrialKey, TrialPlan, decide, plan_trial
from ragmeter.mining.extractor import Candidate, Pool
from ragmeter.mining.questions import MiningQuestion
from ragmeter.mining.solvers import (
    BudgetExhausted,
    MeteredSolver,
    Solver,
    SolveRequest,
)
from ragmeter.mining.triallog import LogContents, TrialLog, read_log
from ragmeter.mining.trials import TrialAttempt, TrialWorker, attempt_trial, local_trial_pool
from ragmeter.mining.validators import GroundTruth, Validator


class MiningProgress(Protocol):
    """What the mining loop reports as it goes (a rich bar in the CLI, nothing in tests)."""

    def question_started(self, pair_id: str, pool_size: int, trials_logged: int) -> None:
        """A question begins (``trials_logged`` came from an earlier run)."""
        ...

    def look_started(self, pair_id: str, look: int, new_trials: int) -> None:
        """The trials of the look at ``look`` are being run (``new_trials`` of them are new)."""
        ...

    def trial_done(self, pair_id: str, passed: bool | None, cost_usd: float | None) -> None:
        """One trial finished (``passed`` is ``None`` when it failed to run)."""
        ...

    def question_done(self, mined: MinedQuestion) -> None:
        """A question is concluded (or incomplete)."""
        ...


class SilentProgress:
    """Reports nothing."""

    def question_started(self, pair_id: str, pool_size: int, trials_logged: int) -> None:
        """Nothing."""

    def look_started(self, pair_id: str, look: int, new_trials: int) -> None:
        """Nothing."""

    def trial_done(self, pair_id: str, passed: bool | None, cost_usd: float | None) -> None:
        """Nothing."""

    def question_done(self, mined: MinedQuestion) -> None:
        """Nothing."""


@dataclass
class MinedQuestion:
    """A question after mining: the design's conclusion (``None`` if incomplete) and its accounting."""

    question: MiningQuestion
    design: Design
    conclusion: Conclusion | None
    log_path: Path
    log_sha256: str | None
    solver: dict[str, Any]
    validator: dict[str, Any]
    calls: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    error: str | None = None
    sandboxes: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """The conclusion's status, or ``INCOMPLETE``."""
        return self.conclusion.status if self.conclusion is not None else "INCOMPLETE"


def log_file_name(pair_id: str) -> str:
    """A safe, unique file name for a question's trial log.

    >>> log_file_name("fix_errors:01")
    'fix_errors_01-3e22b689.jsonl'
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", pair_id).strip("._") or "question"
    return f"{safe[:80]}-{hashlib.sha256(pair_id.encode('utf-8')).hexdigest()[:8]}.jsonl"


def log_header(
    question: MiningQuestion, design: Design, solver: Mapping[str, Any], validator: Mapping[str, Any]
) -> dict[str, Any]:
    """The header of a question's trial log: everything needed to recompute its verdicts."""
    return {
        "pair_id": question.pair_id,
        "benchmark": question.benchmark,
        "question_id": question.question_id,
        "query": question.query,
        "task": question.task,
        "seed": question.seed,
        "pool": [
            {"id": c.id, "text": c.text, "source": c.source, "seeded_by": list(c.seeded_by)}
            for c in question.pool.candidates
        ],
        "unmatched_seeds": list(question.pool.unmatched),
        "design": design.block(),
        "solver": dict(solver),
        "validator": dict(validator),
        "ground_truth_sha256": question.truth.sha256(),
        "ragmeter_version": __version__,
    }


def _outcomes_from_log(contents: LogContents, ids: Sequence[str], path: Path) -> dict[TrialKey, Outcome]:
    position = {doc_id: i for i, doc_id in enumerate(ids)}
    out: dict[TrialKey, Outcome] = {}
    for record in contents.trials:
        shown = record.get("shown")
        if not isinstance(shown, list):
            raise InputError("trial record has no 'shown' list", where=f"{path}:{record['_line']}")
        try:
            indices = tuple(position[str(doc_id)] for doc_id in shown)
        except KeyError as exc:
            raise InputError(
                f"trial shows {exc.args[0]!r}, which is not in the pool", where=f"{path}:{record['_line']}"
            ) from None
        out[(str(record["kind"]), int(record["index"]))] = Outcome(bool(record["passed"]), indices)
    return out


def _accounting(contents: LogContents) -> tuple[int, float, int, list[str]]:
    """Solver calls (failed ones included), known cost, calls of unknown cost, sandboxes used."""
    calls = len(contents.trials) + len(contents.errors)
    cost = 0.0
    unpriced = len(contents.errors)  # a failed call may have cost something: unknown
    sandboxes: list[str] = []
    for record in contents.trials:
        value = (record.get("call") or {}).get("cost_usd")
        if isinstance(value, (int, float)):
            cost += float(value)
        else:
            unpriced += 1
        box = (record.get("validation") or {}).get("sandbox")
        if isinstance(box, str) and box not in sandboxes:
            sandboxes.append(box)
    return calls, cost, unpriced, sandboxes


@dataclass
class _InFlight:
    plan: TrialPlan
    docs: tuple[tuple[str, str], ...]
    reservation: Any


class _Runner:
    """Runs planned trials of one question in a pool (solve, validate), logs them here; collects failures."""

    def __init__(
        self,
        question: MiningQuestion,
        log: TrialLog,
        solver: Solver,
        pool: WorkerPool[TrialWorker],
        progress: MiningProgress,
        stop_event: threading.Event,
    ) -> None:
        self.question = question
        self.log = log
        self.solver = solver
        self.pool = pool
        self.progress = progress
        self.stop_event = stop_event
        self.failures: list[str] = []
        self.fatal: BaseException | None = None
        self.budget: str | None = None
        self.ran = 0

    def _submit(self, plan: TrialPlan) -> tuple[Future[TrialAttempt], _InFlight] | None:
        q = self.question
        docs = tuple((q.pool.candidates[i].id, q.pool.candidates[i].text) for i in plan.shown)
        request = SolveRequest(
            pair_id=q.pair_id,
            question=q.query,
            documents=docs,
            task=q.task,
            trial_kind=plan.kind,
            trial_index=plan.index,
            seed=plan.seed,
            solution_file=q.solution_file,
            metadata=q.metadata,
        )
        reservation = None
        if isinstance(self.solver, MeteredSolver):  # the budget is kept here, on the driver
            try:
                reservation = self.solver.reserve(request)
            except BudgetExhausted as exc:
                self._stop_for_budget(str(exc))
                return None
        try:
            future = self.pool.submit(attempt_trial, request, q.benchmark, q.truth)
        except BaseException:
            self._release(reservation)
            raise
        return future, _InFlight(plan, docs, reservation)

    def _release(self, reservation: Any) -> None:
        if reservation is not None and isinstance(self.solver, MeteredSolver):
            self.solver.release(reservation)

    def _stop_for_budget(self, message: str) -> None:
        self.budget = self.budget or message
        self.stop_event.set()

    def _error(self, plan: TrialPlan, message: str) -> None:
        self.log.append({"type": "error", "kind": plan.kind, "index": plan.index, "message": message})
        self.failures.append(f"trial {plan.kind}/{plan.index}: {message}")
        self.progress.trial_done(self.question.pair_id, None, None)

    def _settle(self, future: Future[TrialAttempt], item: _InFlight) -> tuple[TrialKey, Outcome] | None:
        plan = item.plan
        try:
            attempt = future.result()
        except Exception as exc:  # the executor lost the call (its worker died, beyond the retries)
            self._release(item.reservation)
            self._error(plan, f"WorkerLost: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            return None
        answer = attempt.answer
        if item.reservation is not None:
            if answer is not None and isinstance(self.solver, MeteredSolver):
                answer = self.solver.settle(item.reservation, answer)
            else:
                self._release(item.reservation)
        if attempt.budget is not None:
            self._stop_for_budget(attempt.budget)
            return None
        if attempt.fatal is not None:
            self.fatal = self.fatal or attempt.fatal
            self.stop_event.set()
            return None
        if attempt.error is not None or answer is None or attempt.validation is None:
            self._error(plan, attempt.error or "the trial produced no answer")
            return None
        validation = attempt.validation
        self.log.append(
            {
                "type": "trial",
                "kind": plan.kind,
                "index": plan.index,
                "seed": plan.seed,
                "shown": [doc_id for doc_id, _ in item.docs],
                "passed": validation.passed,
                "answer": answer.text[:20_000],
                "validation": validation.detail,
                "call": answer.record(),
            }
        )
        self.ran += 1
        self.progress.trial_done(self.question.pair_id, validation.passed, answer.cost_usd)
        return plan.key, Outcome(validation.passed, plan.shown)

    def run_batch(self, plans: Sequence[TrialPlan]) -> dict[TrialKey, Outcome]:
        """Run ``plans`` with up to the pool's capacity in flight; log each as it completes."""
        results: dict[TrialKey, Outcome] = {}
        queue = deque(plans)
        inflight: dict[Future[TrialAttempt], _InFlight] = {}
        try:
            while queue or inflight:
                while queue and len(inflight) < self.pool.capacity and not self.stop_event.is_set():
                    submitted = self._submit(queue.popleft())
                    if submitted is not None:
                        inflight[submitted[0]] = submitted[1]
                if not inflight:
                    break
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for future in done:
                    settled = self._settle(future, inflight.pop(future))
                    if settled is not None:
                        results[settled[0]] = settled[1]
        except BaseException:  # Ctrl-C: log the calls in flight as they finish, start no more
            self.stop_event.set()
            for future, item in list(inflight.items()):
                self._settle(future, item)  # waits for the call; a lost one is logged as an error
            raise
        return results


def _check_plans(
    contents: LogContents, ids: Sequence[str], plans_of: Callable[[str, int], TrialPlan], path: Path
) -> None:
    """Logged trials must show exactly what the seeded plan shows (same seed, pool and RNG)."""
    for record in contents.trials:
        plan = plans_of(str(record["kind"]), int(record["index"]))
        expected = [ids[i] for i in plan.shown]
        if [str(x) for x in record.get("shown", [])] != expected:
            raise ConfigError(
                f"trial {record['kind']}/{record['index']} does not show what the seeded plan shows "
                "(was the log made with another seed, pool or ragmeter version?); --recompute still works, "
                "or pass --fresh to start over",
                where=f"{path}:{record['_line']}",
            )


def mine_question(
    question: MiningQuestion,
    *,
    design: Design,
    solver: Solver,
    validator: Validator,
    log_path: Path,
    resume: bool,
    progress: MiningProgress | None = None,
    stop_event: threading.Event | None = None,
    pool: WorkerPool[TrialWorker] | None = None,
    notify: Callable[[str], None] | None = None,
) -> tuple[MinedQuestion, str | None]:
    """Mine one question; returns the result and a budget-stop message (``None`` unless the budget ran out).

    ``pool`` runs the trials (an executor's pool of :class:`TrialWorker`; default: threads
    here, ``solver.concurrency`` at once); the trial log is written by this process.
    ``notify`` hears what reopening the log repaired.
    """
    progress = progress or SilentProgress()
    stop_event = stop_event or threading.Event()
    own_pool = None
    if pool is None:
        pool = own_pool = local_trial_pool(solver, {question.benchmark: validator})
    header = log_header(question, design, solver.identity(), validator.identity())
    log = TrialLog.open(log_path, header, resume=resume)
    if log.dropped is not None and notify is not None:
        notify(f"warning: {log.dropped}; that trial is run again")
    try:
        ids = question.pool.ids
        m = len(ids)
        _check_plans(
            log.contents,
            ids,
            lambda kind, index: plan_trial(question.seed, kind, index, m=m, p=design.p),
            log_path,
        )
        outcomes = _outcomes_from_log(log.contents, ids, log_path)
        progress.question_started(question.pair_id, m, len(outcomes))
        runner = _Runner(question, log, solver, pool, progress, stop_event)

        def on_look(look: int, new: int) -> None:
            progress.look_started(question.pair_id, look, new)

        decision = decide(design, m, question.seed, outcomes, runner.run_batch, on_look)
        if runner.fatal is not None:
            raise runner.fatal
        error: str | None = None
        if decision.complete and decision.conclusion is not None:
            conclusion = decision.conclusion
            if log.contents.end is None or runner.ran:
                log.append(
                    {
                        "type": "end",
                        "status": conclusion.status,
                        "stop_reason": conclusion.stop_reason,
                        "trials": conclusion.trials,
                        "looks": conclusion.looks,
                    }
                )
        else:
            conclusion = None
            if runner.budget is not None:
                error = f"budget reached: {runner.budget}"
            elif runner.failures:
                error = f"{len(runner.failures)} trial(s) failed; first: {runner.failures[0]}"
            else:
                error = "stopped before the question was decided"
    finally:
        log.close()
        if own_pool is not None:
            own_pool.close()
    contents = read_log(log_path)
    calls, cost, unpriced, sandboxes = _accounting(contents)
    mined = MinedQuestion(
        question=question,
        design=design,
        conclusion=conclusion,
        log_path=log_path,
        log_sha256=file_sha256(log_path),
        solver=header["solver"],
        validator=header["validator"],
        calls=calls,
        cost_usd=cost,
        unpriced_calls=unpriced,
        error=error,
        sandboxes=sandboxes,
    )
    progress.question_done(mined)
    return mined, runner.budget


def recompute_question(question: MiningQuestion | None, log_path: Path) -> MinedQuestion:
    """Conclude a question from its trial log alone (no solver call); incomplete logs stay INCOMPLETE.

    The design, pool and seed come from the log's header; ``question`` (from the registry)
    is only used when given, to check it is the same question.
    """
    contents = read_log(log_path)
    header = contents.header
    if question is not None and header.get("pair_id") != question.pair_id:
        raise InputError(
            f"log belongs to {header.get('pair_id')!r}, not {question.pair_id!r}", where=str(log_path)
        )
    try:
        design = design_from_block(dict(header["design"]))
        pool_records = list(header["pool"])
        candidates = tuple(
            Candidate(
                str(c["id"]),
                str(c.get("text", "")),
                str(c.get("source", "random")),
                tuple(c.get("seeded_by", [])),
            )
            for c in pool_records
        )
        seed = int(header["seed"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"trial log header is incomplete ({exc})", where=f"{log_path}:1") from None
    if question is None:
        question = MiningQuestion(
            pair_id=str(header["pair_id"]),
            benchmark=str(header.get("benchmark", "")),
            question_id=str(header.get("question_id", "")),
            query=str(header.get("query", "")),
            pool=Pool(candidates, list(header.get("unmatched_seeds", []))),
            seed=seed,
            truth=GroundTruth(),
            task="code" if header.get("task") == "code" else "answer",
            solution_file=None,
        )
    ids = [c.id for c in candidates]
    outcomes = _outcomes_from_log(contents, ids, log_path)
    decision = decide(design, len(ids), seed, outcomes, None)
    calls, cost, unpriced, sandboxes = _accounting(contents)
    error = (
        None
        if decision.complete
        else (
            f"the log stops before the design decided (look {decision.look}, {len(decision.missing)} trial(s) missing)"
        )
    )
    return MinedQuestion(
        question=question,
        design=design,
        conclusion=decision.conclusion if decision.complete else None,
        log_path=log_path,
        log_sha256=file_sha256(log_path),
        solver=dict(header.get("solver", {})),
        validator=dict(header.get("validator", {})),
        calls=calls,
        cost_usd=cost,
        unpriced_calls=unpriced,
        error=error,
        sandboxes=sandboxes,
    )
