"""Filters run before verification: questions that give their answer away, and near-duplicates.

- **answer_in_question** — the reference answer (normalised as the fuzzy judge normalises:
  NFKC, case-folded, punctuation removed) appears as whole words inside the question.
- **near_duplicate** — in generation order, a question is dropped when an earlier kept one is
  a near-duplicate: it asks for the *same fact* (two answerable questions: a shared source
  chunk or the same normalised answer; two unanswerable ones: a rapidfuzz ``token_set_ratio``
  of at least ``bertscore_candidates``) *in close words*: rapidfuzz's ``token_sort_ratio`` of
  the two normalised questions reaches ``fuzzy_threshold``, or else their BERTScore F1 (the
  bundled offline MiniLM) reaches ``bertscore_threshold``. Measured on MiniLM layer 6: close
  paraphrases score 0.90–0.96, the same question about two different things 0.85, unrelated
  questions 0.4–0.65. The same-fact test keeps "What is the Alpha locker code?" and "What is
  the Beta locker code?" apart, which text similarity alone would not.

A paraphrase of a question is meant to be close to it, so a question and its variants are
never compared with each other.

>>> d = Draft("fact-0000", "factual", "How long is the wait of 15 minutes?", ("15 minutes",), ("a",), {}, "easy", "factual:0")
>>> answer_in_question(d)
True
>>> outcome = apply_filters([d, Draft("fact-0001", "factual", "Which team owns Atlas?", ("Platform",), ("b",), {}, "easy", "factual:1")],
...                         FilterSettings(bertscore=False))
>>> [x.id for x in outcome.kept], [(r.draft.id, r.reason) for r in outcome.rejected]
(['fact-0001'], [('fact-0000', 'answer_in_question')])
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ragmeter.io.atomic import write_text_atomic
from ragmeter.judges.fuzzy import normalise
from ragmeter.synth.config import FilterSettings
from ragmeter.synth.drafts import Draft

Similarity = Callable[[str, Sequence[str]], Sequence[float]]
"""``(question, others) -> scores``: one BERTScore F1 per other question."""


@dataclass(frozen=True)
class Rejection:
    """A question dropped before or during verification, and why (a reason code and one sentence)."""

    draft: Draft
    reason: str
    detail: str
    stage: str = "filter"


@dataclass
class FilterOutcome:
    """The drafts kept, in order, and the ones dropped with their reasons."""

    kept: list[Draft] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)


def answer_in_question(draft: Draft) -> bool:
    """Whether any reference answer appears, as whole words, in the question."""
    question = f" {normalise(draft.question)} "
    for answer in draft.answers:
        norm = normalise(answer)
        if norm and re.search(rf"(?<!\w){re.escape(norm)}(?!\w)", question):
            return True
    return False


def bertscore_similarity(model: str) -> Similarity:
    """BERTScore F1 of a question against others, on ``model`` (loaded once, torch imported here).

    torch runs on one thread: on batches this small its thread pool costs more than it gives
    (measured 15 times slower with two threads on a busy two-core machine).
    """
    import torch

    from ragmeter.judges.bertscore import scorer_for
    from ragmeter.judges.config import BertScoreConfig

    torch.set_num_threads(1)
    scorer = scorer_for(BertScoreConfig(model=model, measure="f1"))

    def similarity(question: str, others: Sequence[str]) -> list[float]:
        return [row[0] for row in scorer.matrix(list(others), [question])] if others else []

    return similarity


class CachedSimilarity:
    """BERTScore F1 with a file of the scores already computed (the model loads only for a new pair).

    The score of a pair does not depend on its order (F1 is symmetric), so the key is the
    sorted pair and the model.

    >>> sim = CachedSimilarity(None, "m", compute=lambda q, others: [0.5 for _ in others])
    >>> sim("a", ["b", "c"]), sim("c", ["a"]), sim.computed
    ([0.5, 0.5], [0.5], 2)
    """

    def __init__(self, path: Path | None, model: str, *, compute: Similarity | None = None) -> None:
        self.path = path
        self.model = model
        self.computed = 0
        self._compute = compute
        self.scores: dict[str, float] = {}
        if path is not None and path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                if data.get("model") == model:
                    self.scores = {str(k): float(v) for k, v in data.get("scores", {}).items()}
            except (OSError, ValueError, AttributeError):
                self.scores = {}  # a damaged cache is rebuilt

    def _key(self, a: str, b: str) -> str:
        first, second = sorted((a, b))
        return hashlib.sha256(f"{self.model}\0{first}\0{second}".encode()).hexdigest()

    def __call__(self, question: str, others: Sequence[str]) -> list[float]:
        """Scores of ``question`` against each of ``others``."""
        keys = [self._key(question, other) for other in others]
        missing = [(k, o) for k, o in zip(keys, others, strict=True) if k not in self.scores]
        if missing:
            if self._compute is None:
                self._compute = bertscore_similarity(self.model)
            values = self._compute(question, [o for _, o in missing])
            for (key, _), value in zip(missing, values, strict=True):
                self.scores[key] = float(value)
            self.computed += len(missing)
        return [self.scores[k] for k in keys]

    def save(self) -> None:
        """Write the scores (atomically) when any was computed."""
        if self.path is not None and self.computed:
            write_text_atomic(
                self.path, json.dumps({"model": self.model, "scores": self.scores}, sort_keys=True)
            )


def apply_filters(
    drafts: Sequence[Draft], settings: FilterSettings, *, similarity: Similarity | None = None
) -> FilterOutcome:
    """Drop drafts that give their answer away, then near-duplicates (rapidfuzz, then BERTScore)."""
    from rapidfuzz import fuzz

    outcome = FilterOutcome()
    survivors: list[Draft] = []
    for draft in drafts:
        if settings.answer_in_question and draft.answerable and answer_in_question(draft):
            outcome.rejected.append(
                Rejection(draft, "answer_in_question", "the question contains its answer")
            )
        else:
            survivors.append(draft)
    if settings.bertscore and similarity is None:
        similarity = CachedSimilarity(None, settings.bertscore_model)
    norms = {d.id: normalise(d.question) for d in survivors}
    answers = {d.id: {normalise(a) for a in d.answers} for d in survivors}

    def same_fact(a: Draft, b: Draft) -> bool:
        if a.answerable != b.answerable or a.family == b.family:
            return False
        if a.answerable:
            return bool(set(a.sources) & set(b.sources) or answers[a.id] & answers[b.id])
        return fuzz.token_set_ratio(norms[a.id], norms[b.id]) >= settings.bertscore_candidates

    for draft in survivors:
        peers = [k for k in outcome.kept if same_fact(draft, k)]
        lexical = [(k, fuzz.token_sort_ratio(norms[draft.id], norms[k.id])) for k in peers]
        duplicate = next(((k, s) for k, s in lexical if s >= settings.fuzzy_threshold), None)
        if duplicate is not None:
            outcome.rejected.append(
                Rejection(
                    draft,
                    "near_duplicate",
                    f"token-sort ratio {duplicate[1]:.0f} with {duplicate[0].id}: {duplicate[0].question!r}",
                )
            )
            continue
        if settings.bertscore and similarity is not None and peers:
            scores = list(similarity(draft.question, [k.question for k in peers]))
            best = max(zip(scores, peers, strict=True), key=lambda pair: pair[0])
            if best[0] >= settings.bertscore_threshold:
                outcome.rejected.append(
                    Rejection(
                        draft,
                        "near_duplicate",
                        f"BERTScore F1 {best[0]:.3f} with {best[1].id}: {best[1].question!r}",
                    )
                )
                continue
        outcome.kept.append(draft)
    return outcome
