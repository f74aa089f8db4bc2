"""The solver checks besides the Monte Carlo trials: validators, closed-book and abstention trials.

- :class:`AnswerMatch` — a trial passes when the solver did not abstain and its answer holds the
  reference answer (the fuzzy judge's match: ``partial_ratio`` of the normalised texts >=
  ``threshold``). It is the validator of every Monte Carlo trial of ``ragmeter synth``.
- :class:`AbstentionCheck` — a trial "passes" when the solver abstained (replied
  ``UNANSWERABLE`` or said the documents do not hold the answer).
- :func:`run_fixed_trials` — a fixed number of trials with the same documents (none for the
  closed-book check, the top retrieved chunks in a new order each time for the abstention
  check), logged in the trial-log format of ``ragmeter mine`` (one JSONL per question and
  check, header fingerprinted), resumed without asking a logged trial again, and stopped as
  soon as the outcome is settled.

>>> AnswerMatch().check("It is 15 minutes.", ["15 minutes"]).passed
True
>>> AnswerMatch().check("The documents do not say.", ["15 minutes"]).passed
False
>>> abstained("UNANSWERABLE"), abstained("Not stated in the documents."), abstained("15 minutes")
(True, True, False)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragmeter.io.digests import file_sha256
from ragmeter.mining.driver import plan_trial
from ragmeter.mining.solvers import BudgetExhausted, Solver, SolveRequest, SolverError
from ragmeter.mining.triallog import TrialLog, read_log
from ragmeter.mining.validators import GroundTruth, Validation

ABSTAIN_TOKEN = "UNANSWERABLE"
ABSTAIN_INSTRUCTION = f"If the documents do not state the answer, reply exactly: {ABSTAIN_TOKEN}"
ABSTAIN_SYSTEM_PROMPT = (
    "You are a blind solver. You see a task and a numbered set of documents. Work ONLY from these "
    "documents: treat anything they do not state as unknown, even if you believe you know it. If the "
    f"documents do not state the answer, reply exactly: {ABSTAIN_TOKEN}"
)
"""The system prompt of the LLM solver in abstention checks (the blind solver's own asks for a best attempt)."""
_ABSTAINED = re.compile(
    r"\bunanswerable\b"
    r"|\bnot (?:stated|mentioned|given|provided|specified|included|found|known|in the (?:documents?|notes?|context))\b"
    r"|\b(?:cannot|can't|can not|unable to) (?:be )?(?:determined?|answer(?:ed)?|tell|find|know|say)\b"
    r"|\b(?:don't|do not|doesn't|does not|did not) (?:know|say|state|mention|contain|specify|include)\b"
    r"|\bno (?:information|mention|answer|details?)\b|\bunknown\b|\bnot sure\b",
    re.IGNORECASE,
)


def abstained(answer: str) -> bool:
    """Whether a reply declines to answer (the token, or a usual phrase such as "not stated")."""
    return bool(_ABSTAINED.search(answer)) or not answer.strip()


@dataclass(frozen=True)
class AnswerMatch:
    """Pass when the answer holds a reference answer (fuzzy, ``threshold`` 0-100) and is no abstention."""

    threshold: float = 90.0
    task: Literal["answer", "code"] = "answer"

    def identity(self) -> dict[str, Any]:
        """``{"name": "synth-answer", ...}``."""
        return {"name": "synth-answer", "version": 1, "match": "fuzzy-partial", "threshold": self.threshold}

    def check(self, answer: str, expected: Sequence[str]) -> Validation:
        """Compare one reply with the acceptable answers."""
        from ragmeter.judges.fuzzy import fuzzy_match

        if abstained(answer):
            return Validation(False, {"abstained": True})
        result = fuzzy_match(answer, expected, threshold=self.threshold)
        return Validation(result.matched, {"score": round(result.score, 2), "abstained": False})

    def validate(self, answer: str, truth: GroundTruth) -> Validation:
        """Pass when a reference answer matches."""
        return self.check(answer, truth.answers)


@dataclass(frozen=True)
class AbstentionCheck:
    """Passes when the solver abstained: the check of an unanswerable question."""

    task: Literal["answer", "code"] = "answer"

    def identity(self) -> dict[str, Any]:
        """``{"name": "synth-abstention", ...}``."""
        return {"name": "synth-abstention", "version": 1, "token": ABSTAIN_TOKEN}

    def validate(self, answer: str, truth: GroundTruth) -> Validation:
        """Pass when the reply abstains."""
        return Validation(abstained(answer), {"abstained": abstained(answer)})


Validator = AnswerMatch | AbstentionCheck


@dataclass
class FixedTrials:
    """What a fixed set of trials gave (every record of the log, this run's and earlier ones)."""

    name: str
    planned: int
    trials: list[dict[str, Any]] = field(default_factory=list)
    errors: int = 0
    budget: str | None = None
    log_path: Path | None = None
    log_sha256: str | None = None

    @property
    def passes(self) -> int:
        """Trials that passed."""
        return sum(1 for t in self.trials if t.get("passed"))

    @property
    def calls(self) -> int:
        """Solver calls recorded (failed ones included)."""
        return len(self.trials) + self.errors

    @property
    def cost(self) -> tuple[float, int]:
        """Known cost in USD, and how many calls had no price."""
        known, unpriced = 0.0, self.errors
        for record in self.trials:
            value = (record.get("call") or {}).get("cost_usd")
            if isinstance(value, (int, float)):
                known += float(value)
            else:
                unpriced += 1
        return known, unpriced

    def summary(self) -> dict[str, Any]:
        """As written to the dataset: passes, trials, answers and the log."""
        return {
            "passes": self.passes,
            "trials": len(self.trials),
            "answers": [str(t.get("answer", ""))[:200] for t in self.trials],
            "trial_log": {"path": str(self.log_path), "sha256": self.log_sha256},
        }


def run_fixed_trials(
    *,
    name: str,
    pair_id: str,
    query: str,
    documents: Sequence[tuple[str, str]],
    trials: int,
    seed: int,
    solver: Solver,
    validator: Validator,
    truth: GroundTruth,
    log_path: Path,
    resume: bool,
    settled: Callable[[int, int], bool],
) -> FixedTrials:
    """Run (or resume) up to ``trials`` trials showing ``documents`` (shuffled each time; none: closed book).

    ``settled(passes, fails)`` stops the trials early once the outcome cannot change. The
    question shown is ``query``; trial ``i`` has the seed and document order of mining's
    ``screen_all`` / ``screen_none`` trial ``i``, so a resumed run asks exactly what an
    uninterrupted one would.
    """
    kind = "screen_all" if documents else "screen_none"
    header = {
        "pair_id": pair_id,
        "seed": seed,
        "query": query,
        "pool": [{"id": doc_id, "text": text} for doc_id, text in documents],
        "design": {"name": name, "trials": trials},
        "solver": solver.identity(),
        "validator": validator.identity(),
        "ground_truth_sha256": truth.sha256(),
    }
    log = TrialLog.open(log_path, header, resume=resume)
    out = FixedTrials(name, trials, log_path=log_path)
    try:
        done = {int(r["index"]): r for r in log.contents.trials if r.get("kind") == kind}
        out.errors = len(log.contents.errors)
        for index in range(trials):
            fails = len(out.trials) - out.passes
            if settled(out.passes, fails):
                break
            if index in done:
                out.trials.append(done[index])
                continue
            plan = plan_trial(seed, kind, index, m=len(documents), p=0.5)
            shown = tuple(documents[i] for i in plan.shown)
            request = SolveRequest(
                pair_id, query, shown, task="answer", trial_kind=kind, trial_index=index, seed=plan.seed
            )
            try:
                answer = solver.solve(request)
            except SolverError as exc:
                log.append({"type": "error", "kind": kind, "index": index, "message": f"SolverError: {exc}"})
                out.errors += 1
                break
            except BudgetExhausted as exc:
                out.budget = str(exc)
                break
            validation = validator.validate(answer.text, truth)
            record = {
                "type": "trial",
                "kind": kind,
                "index": index,
                "seed": plan.seed,
                "shown": [doc_id for doc_id, _ in shown],
                "passed": validation.passed,
                "answer": answer.text[:20_000],
                "validation": validation.detail,
                "call": answer.record(),
            }
            log.append(record)
            out.trials.append(record)
    finally:
        log.close()
    out.log_sha256 = file_sha256(log_path)
    return out


def is_complete(result: FixedTrials, settled: Callable[[int, int], bool]) -> bool:
    """Whether the trials reached their outcome (all run, or settled early) with no call left to make."""
    fails = len(result.trials) - result.passes
    return result.budget is None and (len(result.trials) == result.planned or settled(result.passes, fails))


def logged_trials(log_path: Path) -> list[dict[str, Any]]:
    """The trial records of a trial log (for checks computed from a Monte Carlo log)."""
    return read_log(log_path).trials
