"""Extractive answers: the best-matching sentences of the top chunks, with the chunks they came from.

Each chunk's text is cut into sentences (after ``.``, ``!`` and ``?``; a
wrapped paragraph is rejoined, each list item and quote line stands alone;
list markers, quote marks and code-fence lines are dropped). A sentence scores
the IDF-weighted share of the question's distinct terms it covers::

    score(s) = sum(w(t) * idf(t) for t in Q) / sum(idf(t) for t in Q)

with ``w(t) = 1`` when the sentence contains ``t``, ``0.5`` when only the
chunk's heading path or file name does (context the sentence inherits), and 0
otherwise. The best sentence is the answer; up to ``max_sentences - 1`` more
are added, best first, when each scores at least ``ratio`` times the best and
either covers a question term the answer does not yet cover or comes from a
note the answer does not yet quote (so two notes that disagree both surface).
Ties go to the higher ranked chunk, then the earlier sentence. No sentence with
a score above 0 means no answer.

>>> idf = {"escalation": 2.0, "minute": 1.0}.get
>>> source = AnswerSource("a.md", "Escalation", "Page them. Wait 15 minutes.")
>>> ans = extract_answer(["escalation", "minute"], [source], lambda t: idf(t, 1.0))
>>> ans.sentences, ans.sources, round(ans.score, 3)
(['Wait 15 minutes.'], [0], 0.667)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragmeter.pipeline.tokenizer import terms

ABSTAIN_ANSWER = "I could not find this in the notes."
CONTEXT_WEIGHT = 0.5

_BREAK = re.compile(r"(?<=[.!?])\s+")
_MARKER = re.compile(r"^\s*(?:>\s*)*(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+)?")
_FENCE = re.compile(r"^\s*(?:`{3,}|~{3,})")


@dataclass(frozen=True)
class AnswerSource:
    """One retrieved chunk as the answerer sees it: its note, its context (file name, headings), its text."""

    note: str
    context: str
    text: str


@dataclass(frozen=True)
class ExtractedAnswer:
    """The chosen sentences, the index (in the given chunk list) each came from, the best score."""

    sentences: list[str]
    sources: list[int]
    score: float

    @property
    def text(self) -> str:
        """The answer: the sentences joined by spaces."""
        return " ".join(self.sentences)


def split_sentences(text: str) -> list[str]:
    """Sentences of a chunk's text: wrapped lines rejoined, list items and quotes apart, fences dropped.

    >>> split_sentences("- First item. Second\\n  one!\\n```\\n1. Third\\n> quoted")
    ['First item.', 'Second one!', 'Third', 'quoted']
    """
    blocks: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        marker = _MARKER.match(line)
        starts_item = bool(marker and marker.group(0).strip())
        if _FENCE.match(line) or not line.strip() or starts_item:
            if current:
                blocks.append(" ".join(current))
            current = []
        if _FENCE.match(line) or not line.strip():
            continue
        current.append(_MARKER.sub("", line, count=1).strip())
    if current:
        blocks.append(" ".join(current))
    return [s.strip() for block in blocks for s in _BREAK.split(block) if s.strip()]


def extract_answer(
    question_terms: Sequence[str],
    chunks: Sequence[AnswerSource],
    idf: Callable[[str], float],
    *,
    max_sentences: int = 2,
    ratio: float = 0.5,
) -> ExtractedAnswer | None:
    """Pick answer sentences from ``chunks`` (best ranked first); ``None`` when no sentence matches.

    >>> extract_answer(["zebra"], [AnswerSource("a.md", "Setup", "Install it.")], lambda t: 1.0) is None
    True
    """
    wanted = list(dict.fromkeys(question_terms))
    total = sum(idf(t) for t in wanted)
    if not wanted or total <= 0.0:
        return None
    scored: list[tuple[float, int, int, str, frozenset[str]]] = []
    for c, source in enumerate(chunks):
        inherited = set(terms(source.context))
        for s, sentence in enumerate(split_sentences(source.text)):
            own = frozenset(terms(sentence))
            gain = sum(
                idf(t) * (1.0 if t in own else CONTEXT_WEIGHT if t in inherited else 0.0) for t in wanted
            )
            scored.append((gain / total, c, s, sentence, own))
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    if not scored or scored[0][0] <= 0.0:
        return None
    best, chunk, _, sentence, own = scored[0]
    sentences, sources, covered = [sentence], [chunk], set(own)
    notes = {chunks[chunk].note}
    for score, chunk, _, sentence, own in scored[1:]:
        if len(sentences) >= max_sentences or score < ratio * best:
            break
        new_term = any(t in own and t not in covered for t in wanted)
        if (new_term or chunks[chunk].note not in notes) and sentence not in sentences:
            sentences.append(sentence)
            sources.append(chunk)
            covered |= own
            notes.add(chunks[chunk].note)
    return ExtractedAnswer(sentences, sources, best)
