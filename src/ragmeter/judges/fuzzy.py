"""Fuzzy fact inclusion (the QA document's "Fuzzy Match"): is an expected answer in the answer.

Both texts are NFKC-normalised, case-folded, stripped of punctuation and
whitespace-collapsed. When the expected answer is no longer than the answer,
the score is rapidfuzz's ``partial_ratio`` (best alignment of the expected text
inside the answer); when it is longer, the plain ``ratio`` (so a short answer
is not rewarded for being a fragment of a long expected answer). A match is a
score >= ``threshold`` (0-100, default 90) for any acceptable answer.

>>> fuzzy_match("The capital of France is Paris.", ["paris"]).matched
True
>>> fuzzy_match("Paris", ["Paris, the capital and largest city of France"]).matched
False
>>> round(fuzzy_match("It grew 4.2% in 2023", ["4.2%"]).score, 1)
100.0
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

_PUNCT = re.compile(r"[^\w\s.,]|(?<!\d)[.,]|[.,](?!\d)")
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, case-fold, punctuation to spaces (except inside numbers), collapse whitespace.

    >>> normalise("  Ça   VA, 4.2%! ")
    'ça va 4.2'
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    text = _PUNCT.sub(" ", text)
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True)
class FuzzyResult:
    """Best score over the acceptable answers, whether it passes, and which answer it was."""

    matched: bool
    score: float
    best_expected: str | None
    threshold: float


def fuzzy_match(answer: str, expected: Sequence[str], *, threshold: float = 90.0) -> FuzzyResult:
    """Match ``answer`` against each acceptable answer in ``expected``; see the module docs."""
    from rapidfuzz import fuzz

    needle_answer = normalise(answer)
    best_score, best = 0.0, None
    for candidate in expected:
        norm = normalise(candidate)
        if not norm or not needle_answer:
            continue
        if len(norm) <= len(needle_answer):
            score = float(fuzz.partial_ratio(norm, needle_answer))
        else:
            score = float(fuzz.ratio(norm, needle_answer))
        if score > best_score:
            best_score, best = score, candidate
    return FuzzyResult(
        matched=best_score >= threshold, score=best_score, best_expected=best, threshold=threshold
    )
