"""Answer containment@k: whether an expected answer appears in the text of a top-k item.

Texts and answers are compared after Unicode NFKC, case-folding and collapsing
whitespace. An item without text is an input error for this metric, not a miss.

>>> normalize_text("  Refund\\u00a0WINDOW \\n is 30 days ")
'refund window is 30 days'
>>> contains_answer(["Our refund window is 30 days."], ["30 DAYS"])
True
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from ragmeter.errors import MissingFieldError
from ragmeter.metrics.inputs import ScoringInput
from ragmeter.metrics.relevance import FloatArray, Int64Array

_SPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """NFKC, case-fold, and collapse runs of whitespace to one space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def contains_answer(texts: Sequence[str], answers: Sequence[str]) -> bool:
    """True when any normalised answer is a substring of any normalised text."""
    wanted = [normalize_text(a) for a in answers if normalize_text(a)]
    return any(a in normalize_text(t) for t in texts for a in wanted)


def containment(inp: ScoringInput, k: Int64Array | None) -> FloatArray:
    """Per query: 1.0 if an expected answer is contained in a top-k item's text, else 0.0."""
    out = np.zeros(len(inp.query_ids), dtype=np.float64)
    if inp.texts is None or inp.answers is None:
        return out
    for q, (qid, texts, answers) in enumerate(zip(inp.query_ids, inp.texts, inp.answers, strict=True)):
        if not answers:
            continue
        depth = len(texts) if k is None else min(int(k[q]), len(texts))
        top: list[str] = []
        for rank, text in enumerate(texts[:depth], start=1):
            if text is None:
                raise MissingFieldError(
                    f"retrieved item at rank {rank} has no 'text', which containment@k needs",
                    where=f"sample {qid!r}",
                )
            top.append(text)
        out[q] = 1.0 if contains_answer(top, answers) else 0.0
    return out
