"""Seeded trial plans and the look loop shared by mining, ``--recompute`` and the simulation.

Every trial is a pure function of (dataset seed, question id, trial kind, trial index): the
per-question seed is a SHA-256 of the dataset seed and the question id (stable across
processes and Python versions — never ``hash()``), and each trial draws its subset and its
document order from its own ``random.Random`` seeded from that. A resumed run therefore
plans exactly the trials an uninterrupted run would, and only the missing ones are run.

:func:`decide` walks the design's looks over the outcomes it has, asking ``run_batch`` for
the missing trials of the next look (or stopping as incomplete when there is no
``run_batch``, as in ``--recompute``).

>>> question_seed(20260124, "fix_errors:01") == question_seed(20260124, "fix_errors:01")
True
>>> plan = plan_trial(question_seed(1, "q"), "random", 0, m=6, p=0.5)
>>> plan.kind, plan.index, sorted(plan.shown) == sorted(set(plan.shown))
('random', 0, True)
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter.mining.designs import Conclusion, Design, PassRate, doc_statistics

TrialKey = tuple[str, int]
"""``(kind, index)``; kind is ``random``, ``screen_all`` or ``screen_none``."""


@dataclass(frozen=True)
class TrialPlan:
    """One planned trial: the pool indices ``shown`` (in the order shown) and its own ``seed``."""

    kind: str
    index: int
    shown: tuple[int, ...]
    seed: int

    @property
    def key(self) -> TrialKey:
        """``(kind, index)``."""
        return (self.kind, self.index)


@dataclass(frozen=True)
class Outcome:
    """What a trial gave: ``passed`` and the pool indices that were ``shown``."""

    passed: bool
    shown: tuple[int, ...]


def _seed(*parts: object) -> int:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def question_seed(dataset_seed: int, question_id: str) -> int:
    """The per-question seed: SHA-256 of ``(dataset seed, question id)``, 63 bits.

    >>> question_seed(0, "a")
    1108443114620293192
    """
    return _seed("ragmeter-mining", dataset_seed, question_id)


def trial_seed(q_seed: int, kind: str, index: int) -> int:
    """The seed of one trial of a question.

    >>> trial_seed(1, "random", 0) != trial_seed(1, "random", 1)
    True
    """
    return _seed(q_seed, kind, index)


def plan_trial(q_seed: int, kind: str, index: int, *, m: int, p: float) -> TrialPlan:
    """Draw one trial: each of the ``m`` candidates in with probability ``p``, then shuffled.

    ``screen_all`` shows every candidate (shuffled), ``screen_none`` none.

    >>> plan_trial(5, "screen_none", 0, m=4, p=0.5).shown
    ()
    >>> sorted(plan_trial(5, "screen_all", 0, m=4, p=0.5).shown)
    [0, 1, 2, 3]
    """
    seed = trial_seed(q_seed, kind, index)
    rng = random.Random(seed)
    if kind == "screen_all":
        chosen = list(range(m))
    elif kind == "screen_none":
        chosen = []
    else:
        chosen = [d for d in range(m) if rng.random() < p]
    # Fisher-Yates on random() only: random.shuffle's algorithm is not guaranteed across versions.
    for i in range(len(chosen) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        chosen[i], chosen[j] = chosen[j], chosen[i]
    return TrialPlan(kind=kind, index=index, shown=tuple(chosen), seed=seed)


RunBatch = Callable[[Sequence[TrialPlan]], Mapping[TrialKey, Outcome]]
"""Runs planned trials and returns the outcomes it got (a missing key means the trial failed)."""

LookHook = Callable[[int, int], None]
"""Called as ``(look, trials_needed)`` before the trials of a look are run."""


@dataclass
class Decision:
    """The result of :func:`decide`: a conclusion when ``complete``, else what is still missing."""

    complete: bool
    conclusion: Conclusion | None
    trials_run: int
    missing: list[TrialPlan]
    look: int | None


def inclusion_matrix(outcomes: Sequence[Outcome], m: int) -> tuple[np.ndarray, np.ndarray]:
    """Trials x candidates 0/1 matrix and the pass vector.

    >>> X, y = inclusion_matrix([Outcome(True, (1,)), Outcome(False, ())], 2)
    >>> X.astype(int).tolist(), y.tolist()
    ([[0, 1], [0, 0]], [True, False])
    """
    x = np.zeros((len(outcomes), m), dtype=bool)
    for row, outcome in enumerate(outcomes):
        x[row, list(outcome.shown)] = True
    y = np.array([o.passed for o in outcomes], dtype=bool)
    return x, y


def decide(
    design: Design,
    m: int,
    q_seed: int,
    outcomes: Mapping[TrialKey, Outcome],
    run_batch: RunBatch | None = None,
    on_look: LookHook | None = None,
) -> Decision:
    """Walk the design's looks; run missing trials through ``run_batch``; conclude or report incomplete.

    >>> from ragmeter.mining.designs import FixedDesign
    >>> fake = lambda plans: {p.key: Outcome(0 in p.shown, p.shown) for p in plans}
    >>> d = decide(FixedDesign(trials=20), 3, 7, {}, fake)
    >>> d.complete, [s.verdict for s in d.conclusion.docs]  # doc 2 is noise: the fixed rule's false YES
    (True, ['YES', 'NO', 'YES'])
    """
    if m < 1:
        raise ValueError("a question needs at least one candidate")
    have = dict(outcomes)

    def ensure(plans: Sequence[TrialPlan]) -> list[TrialPlan]:
        missing = [plan for plan in plans if plan.key not in have]
        if missing and run_batch is not None:
            have.update(run_batch(missing))
            missing = [plan for plan in plans if plan.key not in have]
        return missing

    screen = design.screen
    screen_record: dict[str, str] | None = None
    if screen:
        screened = _screen(design, m, q_seed, have, ensure)
        if isinstance(screened, Decision):
            return screened
        screen_record, verdict = screened
        if verdict is not None:
            return Decision(True, verdict, 0, [], None)
    run = design.start(m)
    used: list[Outcome] = []
    x = np.zeros((0, m), dtype=bool)
    y = np.zeros(0, dtype=bool)
    for look in design.schedule():
        plans = [plan_trial(q_seed, "random", i, m=m, p=design.p) for i in range(len(used), look)]
        if on_look is not None:
            on_look(look, sum(1 for plan in plans if plan.key not in have))
        missing = ensure(plans)
        if missing:
            return Decision(False, None, len(used), missing, look)
        fresh = [have[plan.key] for plan in plans]
        used.extend(fresh)
        new_x, new_y = inclusion_matrix(fresh, m)
        x, y = np.vstack([x, new_x]), np.concatenate([y, new_y])
        if run.observe(x, y, look):
            conclusion = run.conclude(x, y, stopped=True)
            conclusion.screen = screen_record
            return Decision(True, conclusion, len(used), [], look)
    conclusion = run.conclude(x, y, stopped=False)
    conclusion.screen = screen_record
    return Decision(True, conclusion, len(used), [], design.schedule()[-1])


def _screen(
    design: Design,
    m: int,
    q_seed: int,
    have: dict[TrialKey, Outcome],
    ensure: Callable[[Sequence[TrialPlan]], list[TrialPlan]],
) -> Decision | tuple[dict[str, str], Conclusion | None]:
    """Up to K all-docs trials (stop at a pass), then up to K no-docs trials (stop at a fail)."""
    record: dict[str, str] = {}
    for kind, wanted, label, verdict in (
        ("screen_all", True, "all_docs", "HOPELESS"),
        ("screen_none", False, "no_docs", "TRIVIAL"),
    ):
        results: list[bool] = []
        for index in range(design.screen):
            plan = plan_trial(q_seed, kind, index, m=m, p=design.p)
            missing = ensure([plan])
            if missing:
                return Decision(False, None, 0, missing, None)
            results.append(have[plan.key].passed)
            if results[-1] == wanted:
                break
        record[label] = f"{sum(results)}/{len(results)}"
        if wanted not in results:
            what = "passed" if wanted else "failed"
            reason = f"screen: the {label.replace('_', '-')} trial never {what} in {len(results)} tries ({verdict})"
            conclusion = Conclusion(
                status="NO_RELEVANT_DOC",
                stop_reason=reason,
                trials=0,
                passes=0,
                docs=doc_statistics(np.zeros((0, m), dtype=bool), np.zeros(0, dtype=bool)),
                base_success_rate=None,
                no_relevant_kind="HOPELESS" if verdict == "HOPELESS" else "TRIVIAL",
                absent=PassRate(0, 0),
                screen=record,
            )
            return record, conclusion
    return record, None
