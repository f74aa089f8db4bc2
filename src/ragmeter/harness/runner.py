"""Ask every question: bounded concurrency, per-call timeout, retries with backoff, durable outputs.

Each question yields exactly one record in ``outputs.jsonl``: the system's
output plus ``latency`` (wall-clock seconds of the last attempt) and
``attempts``; a failure has an empty ``retrieved``, ``answer: null`` and
``error`` (one line) and, when it ran out of time, ``timed_out: true``.

Retried (up to ``retries`` more attempts, exponential backoff with jitter,
``Retry-After`` honoured up to ``max_backoff_seconds``): connection errors,
HTTP 5xx and 429. Not retried: timeouts (a hang would multiply the run time),
other HTTP errors, malformed responses, exceptions of a python system.

A system that refuses connections is not hammered: when the calls in flight
all end in "connection refused" the run stops with :class:`RunAborted`, and
those questions are *not* recorded, so ``--resume`` asks them again.

>>> backoff_delay(3, base=0.5, cap=30.0, retry_after=None, jitter=1.0)
2.0
>>> backoff_delay(1, base=0.5, cap=30.0, retry_after=120.0, jitter=0.0)
30.0
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ragmeter.harness.calls import Adapter, CallFailed, describe_exception, finish_output
from ragmeter.schema.samples import Sample

if TYPE_CHECKING:
    from ragmeter.progress import Progress

MIN_REFUSED_STREAK = 3
"""Stop after this many consecutive connection-refused questions (or ``concurrency``, if larger)."""


@dataclass(frozen=True)
class RunSettings:
    """How to call the system; the suite's values by default."""

    concurrency: int = 4
    timeout_seconds: float = 30.0
    retries: int = 2
    backoff_seconds: float = 0.5
    max_backoff_seconds: float = 30.0
    default_k: int = 5


@dataclass(frozen=True)
class CallRecord:
    """The outcome of one question, as written to ``outputs.jsonl``."""

    sample_id: str
    output: dict[str, Any]
    attempts: int = 1
    failed: bool = False
    """No usable output: an error or a timeout."""
    refused: bool = False

    @property
    def error(self) -> str | None:
        """The one-line error, if the call failed."""
        value = self.output.get("error")
        return value if self.failed and isinstance(value, str) else None

    @property
    def timed_out(self) -> bool:
        """Whether the call ran out of time."""
        return self.failed and self.output.get("timed_out") is True

    @property
    def empty(self) -> bool:
        """A successful call that returned nothing: a blank answer, or no answer and no retrieved items."""
        if self.failed or self.output.get("abstained") is True:
            return False
        if "answer" in self.output:
            answer = self.output.get("answer")
            return answer is None or (isinstance(answer, str) and not answer.strip())
        return not self.output.get("retrieved")


@dataclass
class RunSummary:
    """Counts for the run (this session only; ``n_resumed`` were done before)."""

    n_samples: int = 0
    n_resumed: int = 0
    n_called: int = 0
    n_ok: int = 0
    n_errors: int = 0
    n_timeouts: int = 0
    n_empty: int = 0
    elapsed_seconds: float = 0.0
    first_errors: list[str] = field(default_factory=list)

    def add(self, record: CallRecord) -> None:
        """Count one finished question."""
        self.n_called += 1
        if record.timed_out:
            self.n_timeouts += 1
        elif record.failed:
            self.n_errors += 1
        else:
            self.n_ok += 1
            self.n_empty += record.empty
        if record.failed and len(self.first_errors) < 5:
            self.first_errors.append(f"{record.sample_id}: {record.error}")

    def to_json_dict(self) -> dict[str, Any]:
        """Plain data for ``config.json``."""
        return {
            "n_samples": self.n_samples,
            "n_resumed": self.n_resumed,
            "n_called": self.n_called,
            "n_ok": self.n_ok,
            "n_errors": self.n_errors,
            "n_timeouts": self.n_timeouts,
            "n_empty": self.n_empty,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


class RunAborted(Exception):
    """The run stopped early; ``records`` are the questions that were not recorded."""

    def __init__(self, message: str, records: Sequence[CallRecord]) -> None:
        self.message = message
        self.records = list(records)
        super().__init__(message)


class Journal(Protocol):
    """Where finished outputs go (``outputs.jsonl``, or memory for ``ragmeter.run``)."""

    def append(self, sample_id: str, output: dict[str, Any]) -> None:
        """Record one question's output."""


class ProgressSink(Protocol):
    """Receives progress (a rich progress bar, or nothing)."""

    def start(self, total: int, completed: int) -> None:
        """The run begins: ``completed`` of ``total`` are already done."""

    def advance(self, record: CallRecord) -> None:
        """One more question finished."""

    def stop(self) -> None:
        """The run ended (normally or not)."""


class NoProgress:
    """A progress sink that shows nothing."""

    def start(self, total: int, completed: int) -> None:
        """Show nothing."""

    def advance(self, record: CallRecord) -> None:
        """Show nothing."""

    def stop(self) -> None:
        """Show nothing."""


class QuestionProgress:
    """Questions asked, on a :class:`ragmeter.progress.Progress`; failures and timeouts in its text.

    Several systems asked at once share one ``Progress``: each has its own task ``name``, and
    ``shared=True`` leaves stopping the display to its owner.
    """

    def __init__(self, progress: Progress, *, name: str = "asking", shared: bool = False) -> None:
        self._progress = progress
        self._name = name
        self._shared = shared
        self._failed = 0
        self._timeouts = 0

    def start(self, total: int, completed: int) -> None:
        """The run begins: questions answered by an earlier run count as done (not in the rate)."""
        self._progress.add(self._name, total=total, done=completed, unit="questions")

    def advance(self, record: CallRecord) -> None:
        """One more question finished."""
        if record.timed_out:
            self._timeouts += 1
        elif record.failed:
            self._failed += 1
        counts = [f"{self._failed} failed"] if self._failed else []
        counts += [f"{self._timeouts} timed out"] if self._timeouts else []
        self._progress.update(self._name, advance=1, info=", ".join(counts))

    def stop(self) -> None:
        """End the display (unless it is shared)."""
        if not self._shared:
            self._progress.stop()


def backoff_delay(
    attempt: int, *, base: float, cap: float, retry_after: float | None, jitter: float | None = None
) -> float:
    """Seconds to wait before retry number ``attempt`` (1-based).

    ``Retry-After`` wins when the server sent one (capped at ``cap``); otherwise
    ``base * 2**(attempt-1)`` (capped), of which the upper half is random
    ("equal jitter"). ``jitter`` in [0, 1] pins the random part (for tests).
    """
    if retry_after is not None:
        return min(max(retry_after, 0.0), cap)
    ceiling: float = min(cap, base * 2.0 ** (attempt - 1))
    share = random.random() if jitter is None else jitter
    return ceiling / 2 + share * ceiling / 2


def _failure_output(
    message: str, *, latency: float, attempts: int, timed_out: bool = False
) -> dict[str, Any]:
    output: dict[str, Any] = {"retrieved": [], "answer": None, "error": message}
    if timed_out:
        output["timed_out"] = True
    output["latency"] = round(latency, 6)
    output["attempts"] = attempts
    return output


class _Run:
    def __init__(
        self,
        adapter: Adapter,
        settings: RunSettings,
        journal: Journal,
        progress: ProgressSink,
        n_pending: int,
        slots: asyncio.Semaphore | None = None,
    ) -> None:
        self.adapter = adapter
        self.slots = slots
        self.settings = settings
        self.journal = journal
        self.progress = progress
        self.summary = RunSummary()
        self.refused: list[CallRecord] = []
        self.streak_limit = max(1, min(n_pending, max(MIN_REFUSED_STREAK, settings.concurrency)))

    async def ask(self, sample: Sample) -> CallRecord:
        settings = self.settings
        k = sample.metadata.k or settings.default_k
        attempt = 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                async with self.slots or contextlib.nullcontext():  # shared by several systems' runs
                    started = time.perf_counter()
                    async with asyncio.timeout(settings.timeout_seconds):
                        raw = await self.adapter.call(sample, k=k)
                latency = time.perf_counter() - started
                output = finish_output(raw)
            except TimeoutError as exc:  # ours (no message) or the system's own client's (with one)
                message = str(exc) or f"timed out after {settings.timeout_seconds:g} s"
                latency = time.perf_counter() - started
                out = _failure_output(message, latency=latency, attempts=attempt, timed_out=True)
                return CallRecord(sample.id, out, attempt, failed=True)
            except CallFailed as failure:
                latency = time.perf_counter() - started
                if failure.retryable and attempt <= settings.retries:
                    delay = backoff_delay(
                        attempt,
                        base=settings.backoff_seconds,
                        cap=settings.max_backoff_seconds,
                        retry_after=failure.retry_after,
                    )
                    await asyncio.sleep(delay)
                    continue
                message = failure.message
                if attempt > 1:
                    message += f" (after {attempt} attempts)"
                out = _failure_output(message, latency=latency, attempts=attempt)
                return CallRecord(sample.id, out, attempt, failed=True, refused=failure.refused)
            except Exception as exc:  # an adapter bug must not lose the question
                latency = time.perf_counter() - started
                message = f"internal error: {describe_exception(exc)}"
                out = _failure_output(message, latency=latency, attempts=attempt)
                return CallRecord(sample.id, out, attempt, failed=True)
            output["latency"] = round(latency, 6)
            output["attempts"] = attempt
            return CallRecord(sample.id, output, attempt)

    def settle(self, record: CallRecord) -> None:
        if record.refused:
            self.refused.append(record)
            if len(self.refused) >= self.streak_limit:
                raise self.aborted()
            return
        for held in self.refused:  # a blip: the system answered again, so these are real failures
            self.record(held)
        self.refused.clear()
        self.record(record)

    def record(self, record: CallRecord) -> None:
        self.journal.append(record.sample_id, record.output)
        self.summary.add(record)
        self.progress.advance(record)

    def aborted(self) -> RunAborted:
        target = self.adapter.description
        if self.summary.n_called == 0:
            message = f"cannot reach {target} (connection refused)"
        else:
            message = (
                f"cannot reach {target} any more (connection refused) after {self.summary.n_called} "
                "recorded answers; start the system and continue with --resume"
            )
        return RunAborted(message, self.refused)


async def run_calls(
    samples: Sequence[Sample],
    adapter: Adapter,
    *,
    settings: RunSettings,
    journal: Journal,
    progress: ProgressSink | None = None,
    slots: asyncio.Semaphore | None = None,
) -> RunSummary:
    """Ask ``samples`` with up to ``settings.concurrency`` calls at a time; append each outcome to ``journal``.

    ``slots``, when given, is a limit shared with other runs (several systems asked at once):
    each call holds one of its slots. The adapter must be started. Raises :class:`RunAborted`
    when the system refuses every connection; whatever was recorded before stays recorded.
    """
    sink = progress or NoProgress()
    run = _Run(adapter, settings, journal, sink, len(samples), slots)
    run.summary.n_samples = len(samples)
    pending = deque(samples)
    started = time.perf_counter()

    async def worker() -> None:
        while pending:
            sample = pending.popleft()
            run.settle(await run.ask(sample))

    workers = [asyncio.create_task(worker()) for _ in range(min(settings.concurrency, len(samples)))]
    try:
        await asyncio.gather(*workers)
        if run.refused:
            raise run.aborted()
    finally:
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        run.summary.elapsed_seconds = time.perf_counter() - started
    return run.summary


async def call_all(
    adapter: Adapter,
    pending: Sequence[Sample],
    *,
    settings: RunSettings,
    journal: Journal,
    progress: ProgressSink,
    total: int,
    done: int,
    slots: asyncio.Semaphore | None = None,
) -> RunSummary:
    """Start the adapter, ask ``pending`` (:func:`run_calls`) with progress, and close the adapter."""
    await adapter.start()
    try:
        progress.start(total, done)
        try:
            return await run_calls(
                pending, adapter, settings=settings, journal=journal, progress=progress, slots=slots
            )
        finally:
            progress.stop()
    finally:
        await adapter.aclose()
