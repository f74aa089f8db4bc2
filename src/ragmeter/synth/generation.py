"""Running the generation tasks: concurrent calls, an append-only log, resume without asking twice.

The generation log (``<work>/generation.jsonl``) has the trial-log format of ``ragmeter mine``
(:mod:`ragmeter.mining.triallog`: whole lines, fsynced, locked, a cut last line dropped on
reopening): its header fingerprints the corpus, the generator, its prompts and the plan, and
each finished task is one record (``kind`` = the task's category, ``index`` = its number)
holding the parsed reply. A resumed run reads the records and asks only the tasks that have
none; the judge cache besides answers a repeated call without a request.

A task ends as ``ok`` (a usable reply), ``unusable`` (the reply did not fit even after the
repair request, or the endpoint rejected the request: logged, not asked again) or ``failed``
(the call failed after its retries, or the budget ran out: not logged, asked again on
``--resume``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.mining.triallog import TrialLog, read_log
from ragmeter.synth.generator import Generator
from ragmeter.synth.plan import Task

FINAL_FAILURES = frozenset({"unparseable_reply", "request_rejected"})
"""Failure codes logged as ``unusable`` (asking again would give the same); the others are retried."""


@dataclass
class GenerationStats:
    """What generation did in this run and before."""

    tasks: int = 0
    from_log: int = 0
    asked: int = 0
    cache_hits: int = 0
    http_calls: int = 0
    cost_usd: float = 0.0
    unpriced_calls: int = 0
    unusable: dict[str, str] = field(default_factory=dict)
    """Tasks logged as unusable (this run or earlier), with the reason."""
    failed: dict[str, str] = field(default_factory=dict)
    """Tasks whose call failed in this run (asked again on ``--resume``)."""
    budget: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As written to the report."""
        return {
            "tasks": self.tasks,
            "from_log": self.from_log,
            "asked": self.asked,
            "cache_hits": self.cache_hits,
            "http_calls": self.http_calls,
            "cost_usd": None
            if self.unpriced_calls and self.unpriced_calls == self.asked - self.cache_hits
            else round(self.cost_usd, 6),
            "unpriced_calls": self.unpriced_calls,
            "unusable": dict(self.unusable),
            "failed": dict(self.failed),
            "budget_stop": self.budget,
        }


class GenerationLog:
    """The open generation log: finished tasks by id, and appending new ones."""

    def __init__(self, path: Path, fingerprint: Mapping[str, Any], *, resume: bool) -> None:
        self.path = path
        if resume and path.exists() and path.stat().st_size:
            old = read_log(path).header.get("synth") or {}
            for key, value in fingerprint.items():
                if json.dumps(old.get(key), sort_keys=True) != json.dumps(value, sort_keys=True):
                    raise ConfigError(
                        f"the generation log was made with a different {key.replace('_', ' ')}; "
                        "pass --fresh to start over (or write to another --out)",
                        where=str(path),
                    )
        header = {"pair_id": "synth:generation", "synth": dict(fingerprint)}
        self._log = TrialLog.open(path, header, resume=resume)
        self.records: dict[str, dict[str, Any]] = {
            str(r.get("task")): r for r in self._log.contents.trials if r.get("task")
        }

    def add(self, task: Task, record: Mapping[str, Any]) -> None:
        """Log one finished task."""
        full = {"type": "trial", "kind": task.category, "index": task.index, "task": task.id, **record}
        self._log.append(full)
        self.records[task.id] = full

    def close(self) -> None:
        """Release the log."""
        self._log.close()


def run_tasks(
    tasks: Sequence[Task],
    *,
    generator: Generator,
    log: GenerationLog,
    variables: Callable[[Task], dict[str, str]],
    stats: GenerationStats,
    on_done: Callable[[Task], None] | None = None,
) -> None:
    """Ask every task the log does not hold yet (``generator.concurrency`` at once); log each as it ends."""
    todo = [t for t in tasks if t.id not in log.records]
    stats.tasks += len(tasks)
    stats.from_log += len(tasks) - len(todo)
    stop = threading.Event()
    lock = threading.Lock()

    def ask(task: Task) -> None:
        if stop.is_set():
            return
        asked = generator.ask(task, variables(task))
        call = asked.call
        with lock:
            stats.asked += 1
            stats.cache_hits += int(call.cache_hit)
            if not call.cache_hit:
                stats.http_calls += len(call.raw_replies) or call.http_attempts
                if call.cost_usd is None:
                    stats.unpriced_calls += 1
                else:
                    stats.cost_usd += call.cost_usd
        call_record = {
            "prompt": call.prompt,
            "cache_hit": call.cache_hit,
            "cost_usd": call.cost_usd,
            "prompt_tokens": call.prompt_tokens,
            "completion_tokens": call.completion_tokens,
            "model_reported": call.model_reported,
            "repair_reason": call.repair_reason,
        }
        if asked.parsed is not None:
            log.add(
                task, {"status": "ok", "reply": asked.parsed.model_dump(mode="json"), "call": call_record}
            )
        else:
            code, reason = asked.failure or ("unparseable_reply", "no reply")
            with lock:
                if code == "budget_exhausted":
                    stats.budget = stats.budget or reason
                    stop.set()
                if code not in FINAL_FAILURES:
                    stats.failed[task.id] = f"{code}: {reason}"
            if code in FINAL_FAILURES:
                log.add(task, {"status": "unusable", "reason": f"{code}: {reason}", "call": call_record})
        if on_done is not None:
            on_done(task)

    if not todo:
        return
    with ThreadPoolExecutor(max_workers=generator.concurrency, thread_name_prefix="ragmeter-synth") as pool:
        running: set[Future[None]] = {pool.submit(ask, task) for task in todo}
        try:
            while running:
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    future.result()  # a configuration error (401, 404) ends the run
        except BaseException:
            stop.set()
            for future in running:
                future.cancel()
            raise
