"""Verification: which generated questions are kept, and which chunks are proven gold supports.

For an answerable question (factual, multi-hop, recency, paraphrase, adversarial):

1. **Closed book.** The blind solver gets the question with no document,
   ``closed_book_trials`` times (stopping at the first pass beyond ``closed_book_max_passes``).
   A question it answers without context is rejected (``closed_book``).
2. **Monte Carlo trials** (``ragmeter mine``'s trial engine and ``bayes`` design): the pool is
   the chunks the question was made from plus ``distractors`` chunks BM25 retrieves for the
   question from the whole corpus; each trial shows a random subset in a random order. A
   chunk is a gold support only with a ``YES`` verdict: generated supports without one are
   dropped, and other chunks with one are added. The question is rejected when the design
   finds no document matters (``trivial``: the solver passes anyway; ``hopeless``: it fails
   even with the gold), cannot decide (``unresolved``) or says YES to nothing
   (``no_verified_support``).
3. **Sufficiency.** Shown only its verified gold chunks, ``sufficiency_trials`` times, the
   solver must pass at least ``sufficiency_min_passes`` times (``gold_not_sufficient``
   otherwise): a question whose answer needs a chunk the trials did not identify (say, one of
   two interchangeable copies of a fact *and* another chunk — a structure of three documents,
   outside the design's model) is not written with incomplete supports.
4. The required support groups follow the identified structure: ``d AND e`` gives two groups
   (a multi-hop question), ``d OR e`` one group of two, ``{d}`` one group. A factual or
   multi-hop question is labelled by what was verified: two groups make it ``multi_hop``,
   one ``factual`` (its generated category is kept in ``synth.generated_category``).
5. **Recency/conflict** questions also need: the newer chunk ``YES``; in the trials that show
   the older chunk without the newer one, the solver gives the older value at least half the
   time (the conflict is real); in the trials that show both, it passes at least
   ``recency_min_newer_rate`` of the time (the rule ``cite_newer`` can be applied). The older
   chunk is kept as the conflicting support (``newer: false``) with its own evidence.

An **unanswerable** question is shown with the ``unanswerable_top_k`` chunks BM25 retrieves for
it, ``unanswerable_trials`` times in new orders; it is kept only if the solver abstains every
time (``answered_from_corpus`` otherwise).

A question whose trials could not all run (a failed call, the budget) is ``pending``: it is not
written, and ``--resume`` continues it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.executors.base import WorkerPool
from ragmeter.mining.designs import BayesDesign
from ragmeter.mining.driver import question_seed
from ragmeter.mining.extractor import Candidate, Pool
from ragmeter.mining.miner import MinedQuestion, MiningProgress, log_file_name, mine_question
from ragmeter.mining.questions import MiningQuestion
from ragmeter.mining.solvers import Solver
from ragmeter.mining.triallog import read_log
from ragmeter.mining.trials import TrialWorker, local_trial_pool
from ragmeter.mining.validators import GroundTruth
from ragmeter.synth.checks import (
    ABSTAIN_INSTRUCTION,
    AbstentionCheck,
    AnswerMatch,
    FixedTrials,
    is_complete,
    logged_trials,
    run_fixed_trials,
)
from ragmeter.synth.config import VerificationSettings
from ragmeter.synth.corpus import SynthCorpus
from ragmeter.synth.drafts import Draft

BENCHMARK = "synth"
"""The benchmark name of every synthesised question in the trial logs."""


@dataclass
class Support:
    """A chunk kept as a gold support: why (``role``) and the verdict behind it."""

    chunk_id: str
    role: str
    """``generated`` (the question was made from it), ``discovered`` (a retrieved chunk proven
    necessary), ``newer`` / ``older`` (the two sides of a recency conflict)."""
    verdict: str
    conflict: dict[str, Any] | None = None


@dataclass
class Verified:
    """The outcome of one question: kept, rejected (with a reason) or pending."""

    draft: Draft
    status: str
    reason: str | None = None
    detail: str = ""
    category: str = ""
    supports: list[Support] = field(default_factory=list)
    groups: list[list[str]] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    mined: MinedQuestion | None = None
    checks: dict[str, FixedTrials] = field(default_factory=dict)
    new_calls: int = 0
    """Solver calls made for this question in this run (the logs held the others)."""

    def __post_init__(self) -> None:
        self.category = self.category or self.draft.category

    @property
    def calls(self) -> int:
        """Solver calls recorded for this question (all runs)."""
        return sum(c.calls for c in self.checks.values()) + (self.mined.calls if self.mined else 0)

    @property
    def cost(self) -> tuple[float, int]:
        """Known solver cost in USD and the number of calls without a price."""
        known, unpriced = 0.0, 0
        for check in self.checks.values():
            k, u = check.cost
            known, unpriced = known + k, unpriced + u
        if self.mined is not None:
            known, unpriced = known + self.mined.cost_usd, unpriced + self.mined.unpriced_calls
        return known, unpriced


def _recorded_calls(path: Path) -> int:
    """Solver calls a trial log records (0 when there is none)."""
    if not path.exists():
        return 0
    contents = read_log(path)
    return len(contents.trials) + len(contents.errors)


def _closed_book_settled(limit: int) -> Any:
    return lambda passes, fails: passes > limit


def _all_abstain_settled(passes: int, fails: int) -> bool:
    return fails > 0


class Verifier:
    """Verifies questions one at a time; holds the trial pool, the validators and the settings."""

    def __init__(
        self,
        *,
        corpus: SynthCorpus,
        settings: VerificationSettings,
        design: BayesDesign,
        solver: Solver,
        abstain_solver: Solver,
        seed: int,
        trials_dir: Path,
        resume: bool,
        progress: MiningProgress,
        stop_event: threading.Event | None = None,
        pool: WorkerPool[TrialWorker] | None = None,
    ) -> None:
        self.corpus = corpus
        self.settings = settings
        self.design = design
        self.solver = solver
        self.abstain_solver = abstain_solver
        self.seed = seed
        self.trials_dir = trials_dir
        self.resume = resume
        self.progress = progress
        self.stop_event = stop_event or threading.Event()
        self.answer_match = AnswerMatch(settings.answer_threshold)
        self.pool = pool or local_trial_pool(solver, {BENCHMARK: self.answer_match})
        self.budget: str | None = None

    def close(self) -> None:
        """Stop the trial pool."""
        self.pool.close()

    def _log(self, draft: Draft, check: str | None = None) -> Path:
        name = log_file_name(draft.id)
        if check is not None:
            name = name.removesuffix(".jsonl") + f".{check}.jsonl"
        return self.trials_dir / name

    def verify(self, draft: Draft) -> Verified:
        """Verify one question (resuming whatever its logs already hold)."""
        logs = [
            self._log(draft),
            *(self._log(draft, c) for c in ("closed_book", "abstention", "sufficiency")),
        ]
        before = sum(_recorded_calls(path) for path in logs)
        result = self._answerable(draft) if draft.answerable else self._unanswerable(draft)
        result.new_calls = sum(_recorded_calls(path) for path in logs) - before
        return result

    def _pending(self, draft: Draft, detail: str, **fields: Any) -> Verified:
        return Verified(draft, "pending", "incomplete", detail, **fields)

    def _unanswerable(self, draft: Draft) -> Verified:
        s = self.settings
        shown = self.corpus.search(draft.question, k=s.unanswerable_top_k)
        documents = [(c, self.corpus.text_of(c)) for c in shown]
        check = run_fixed_trials(
            name="abstention",
            pair_id=draft.id,
            query=f"{draft.question}\n\n{ABSTAIN_INSTRUCTION}",
            documents=documents,
            trials=s.unanswerable_trials,
            seed=question_seed(self.seed, draft.id),
            solver=self.abstain_solver,
            validator=AbstentionCheck(),
            truth=GroundTruth(),
            log_path=self._log(draft, "abstention"),
            resume=self.resume,
            settled=_all_abstain_settled,
        )
        checks = {"abstention": check}
        if not is_complete(check, _all_abstain_settled):
            self.budget = self.budget or check.budget
            return self._pending(draft, check.budget or "a solver call failed", checks=checks)
        if check.passes < len(check.trials) or not check.trials:
            answer = next((t["answer"] for t in check.trials if not t.get("passed")), "")
            detail = f"given the top {len(shown)} retrieved chunks the solver answered {answer[:120]!r}"
            return Verified(draft, "rejected", "answered_from_corpus", detail, checks=checks)
        detail = f"the solver abstained in {check.passes}/{len(check.trials)} trials over the top {len(shown)} chunks"
        return Verified(draft, "kept", None, detail, checks=checks)

    def _answerable(self, draft: Draft) -> Verified:
        s = self.settings
        truth = GroundTruth(answers=draft.answers)
        seed = question_seed(self.seed, draft.id)
        checks: dict[str, FixedTrials] = {}
        if s.closed_book_trials:
            settled = _closed_book_settled(s.closed_book_max_passes)
            closed = run_fixed_trials(
                name="closed_book",
                pair_id=draft.id,
                query=draft.question,
                documents=[],
                trials=s.closed_book_trials,
                seed=seed,
                solver=self.solver,
                validator=self.answer_match,
                truth=truth,
                log_path=self._log(draft, "closed_book"),
                resume=self.resume,
                settled=settled,
            )
            checks["closed_book"] = closed
            if not is_complete(closed, settled):
                self.budget = self.budget or closed.budget
                return self._pending(draft, closed.budget or "a solver call failed", checks=checks)
            if closed.passes > s.closed_book_max_passes:
                detail = (
                    f"the solver answered it with no document in {closed.passes}/{len(closed.trials)} trials"
                )
                return Verified(draft, "rejected", "closed_book", detail, checks=checks)
        question = self._mining_question(draft, truth, seed)
        mined, budget = mine_question(
            question,
            design=self.design,
            solver=self.solver,
            validator=self.answer_match,
            log_path=self._log(draft),
            resume=self.resume,
            progress=self.progress,
            stop_event=self.stop_event,
            pool=self.pool,
        )
        self.budget = self.budget or budget
        if mined.conclusion is None:
            return self._pending(draft, mined.error or "not decided", mined=mined, checks=checks)
        result = conclude(draft, mined, self.answer_match, self.settings, checks)
        if result.status == "kept" and draft.category != "recency" and s.sufficiency_trials:
            return self._sufficiency(result, truth, seed)
        return result

    def _sufficiency(self, result: Verified, truth: GroundTruth, seed: int) -> Verified:
        """Shown its verified gold alone, the solver must pass: no needed chunk is missing."""
        s = self.settings
        need = min(s.sufficiency_min_passes, s.sufficiency_trials)
        gold = [support.chunk_id for support in result.supports]

        def settled(passes: int, fails: int) -> bool:
            return passes >= need or fails > s.sufficiency_trials - need

        check = run_fixed_trials(
            name="sufficiency",
            pair_id=result.draft.id,
            query=result.draft.question,
            documents=[(c, self.corpus.text_of(c)) for c in gold],
            trials=s.sufficiency_trials,
            seed=seed,
            solver=self.solver,
            validator=self.answer_match,
            truth=truth,
            log_path=self._log(result.draft, "sufficiency"),
            resume=self.resume,
            settled=settled,
        )
        result.checks["sufficiency"] = check
        if not is_complete(check, settled):
            self.budget = self.budget or check.budget
            return self._pending(
                result.draft, check.budget or "a solver call failed", mined=result.mined, checks=result.checks
            )
        if check.passes < need:
            result.status, result.reason = "rejected", "gold_not_sufficient"
            result.detail = (
                f"shown only its verified gold ({', '.join(gold)}) the solver passed {check.passes}/"
                f"{len(check.trials)} trials: a needed chunk is missing or was not identified"
            )
        return result

    def _mining_question(self, draft: Draft, truth: GroundTruth, seed: int) -> MiningQuestion:
        distractors = self.corpus.search(
            draft.question, k=self.settings.distractors, exclude=set(draft.sources)
        )
        candidates = [Candidate(c, self.corpus.text_of(c), "generated") for c in draft.sources]
        candidates += [Candidate(c, self.corpus.text_of(c), "bm25") for c in distractors]
        return MiningQuestion(
            pair_id=draft.id,
            benchmark=BENCHMARK,
            question_id=draft.id,
            query=draft.question,
            pool=Pool(tuple(sorted(candidates, key=lambda c: c.id)), []),
            seed=seed,
            truth=truth,
            task="answer",
            solution_file=None,
            metadata={"category": draft.category},
        )


def _groups(mined: MinedQuestion, yes: Sequence[str]) -> list[list[str]]:
    conclusion = mined.conclusion
    ids = mined.question.pool.ids
    groups: list[list[str]] = []
    structure = conclusion.structure if conclusion is not None else None
    if structure is not None and structure.kind == "and":
        groups = [[ids[d]] for d in structure.docs]
    elif structure is not None and structure.kind in ("or", "single"):
        groups = [[ids[d] for d in structure.docs]]
    groups = [[c for c in group if c in yes] for group in groups]
    groups = [g for g in groups if g]
    covered = {c for g in groups for c in g}
    return groups + [[c] for c in yes if c not in covered]


def conclude(
    draft: Draft,
    mined: MinedQuestion,
    validator: AnswerMatch,
    settings: VerificationSettings,
    checks: Mapping[str, FixedTrials],
) -> Verified:
    """Keep or reject an answerable question from its concluded Monte Carlo trials."""
    conclusion = mined.conclusion
    if conclusion is None:
        raise ValueError(f"{draft.id}: the trials are not concluded")

    def result(status: str, reason: str | None, detail: str, **fields: Any) -> Verified:
        return Verified(draft, status, reason, detail, mined=mined, checks=dict(checks), **fields)

    ids = mined.question.pool.ids
    verdicts: dict[str, str] = {ids[i]: s.verdict for i, s in enumerate(conclusion.docs)}
    if conclusion.status == "NO_RELEVANT_DOC":
        rate = f"{conclusion.passes}/{conclusion.trials}" if conclusion.trials else "no"
        if conclusion.no_relevant_kind == "TRIVIAL":
            detail = f"no document matters: the solver passes whatever it is shown ({rate} trials passed)"
            return result("rejected", "trivial", detail)
        detail = f"no document helps: the solver fails even with the gold chunks ({rate} trials passed)"
        return result("rejected", "hopeless", detail)
    if conclusion.status != "IDENTIFIED":
        return result("rejected", "unresolved", conclusion.stop_reason)
    yes = [c for c in ids if verdicts[c] == "YES"]
    if not yes:
        return result("rejected", "no_verified_support", conclusion.stop_reason)
    if draft.category == "recency":
        return _recency(draft, mined, validator, settings, verdicts, yes, result)
    groups = _groups(mined, yes)
    category = draft.category
    if category in ("factual", "multi_hop"):
        category = "multi_hop" if len(groups) >= 2 else "factual"
    supports = [Support(c, "generated" if c in draft.sources else "discovered", "YES") for c in yes]
    dropped = [(c, verdicts.get(c, "UNDECIDED")) for c in draft.sources if verdicts.get(c) != "YES"]
    detail = f"{conclusion.stop_reason}; gold: {', '.join(yes)}"
    return result("kept", None, detail, category=category, supports=supports, groups=groups, dropped=dropped)


def _recency(
    draft: Draft,
    mined: MinedQuestion,
    validator: AnswerMatch,
    settings: VerificationSettings,
    verdicts: Mapping[str, str],
    yes: Sequence[str],
    result: Callable[..., Verified],
) -> Verified:
    newer, older = str(draft.extra["newer"]), str(draft.extra["older"])
    if verdicts.get(newer) != "YES":
        detail = f"the newer chunk {newer} is not verified necessary (verdict {verdicts.get(newer)})"
        return result("rejected", "newer_not_verified", detail)
    trials = logged_trials(mined.log_path)
    older_only = [t for t in trials if older in t["shown"] and newer not in t["shown"]]
    both = [t for t in trials if older in t["shown"] and newer in t["shown"]]
    older_answer = [str(draft.extra.get("older_answer", ""))]
    hits = sum(1 for t in older_only if validator.check(str(t.get("answer", "")), older_answer).passed)
    conflict = {
        "older_only_trials": len(older_only),
        "older_value_given": hits,
        "both_shown_trials": len(both),
    }
    if not older_only or hits * 2 < len(older_only):
        detail = (
            f"with the older chunk alone the solver gave its value in {hits}/{len(older_only)} trials: "
            "the conflict is not shown"
        )
        return result("rejected", "conflict_not_verified", detail)
    passed_both = sum(1 for t in both if t.get("passed"))
    conflict["both_shown_passes"] = passed_both
    if not both or passed_both < settings.recency_min_newer_rate * len(both):
        detail = f"with both chunks shown the solver gave the newer value in {passed_both}/{len(both)} trials"
        return result("rejected", "newer_not_preferred", detail)
    supports = [
        Support(newer, "newer", "YES"),
        Support(older, "older", verdicts.get(older, "UNDECIDED"), conflict),
    ]
    supports += [Support(c, "discovered", "YES") for c in yes if c not in (newer, older)]
    detail = (
        f"newer chunk verified; older value given in {hits}/{len(older_only)} older-only trials, "
        f"newer value in {passed_both}/{len(both)} trials showing both"
    )
    return result("kept", None, detail, category="recency", supports=supports, groups=[[newer]])
