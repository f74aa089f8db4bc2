"""Which chunks each question is made from: a pure function of the corpus, the counts and the seed.

- **factual** and **unanswerable**: one source chunk each, drawn (without repeats) from the
  chunks with at least ``min_source_tokens`` tokens, in a seeded order of their own;
- **multi_hop**: a chunk and a partner from *another* note found by BM25 over the first
  chunk's text that shares a *link term* with it (the rarest shared term: an entity or a
  name, more often than not);
- **recency**: two dated chunks of different notes and different dates that BM25 pairs (the
  same last heading, or a normalised score of at least :data:`RECENCY_MIN_SCORE`); the newer is
  the one with the later date;
- **paraphrase** / **adversarial**: variants of the factual and multi-hop questions kept by the
  first filters (planned after those are generated, see :func:`variant_tasks`).

Because the plan depends on nothing else, a resumed run plans the same tasks, and the ids
of the questions (``fact-0003``) stay the same.

>>> from pathlib import Path
>>> from ragmeter.synth.corpus import SynthCorpus
>>> from ragmeter.pipeline import Chunk
>>> from ragmeter.pipeline.retrieval import Bm25Scorer
>>> from ragmeter.pipeline.index import chunk_terms
>>> chunks = [Chunk(f"n{i}.md#A", f"n{i}.md", ("A",), f"Orion budget is {i} EUR for the team.", 8) for i in range(4)]
>>> corpus = SynthCorpus(Path("v"), "vault", chunks, Bm25Scorer.build([chunk_terms(c) for c in chunks], k1=1.5, b=0.75))
>>> [t.id for t in plan_tasks(corpus, {"factual": 2, "multi_hop": 1}, seed=1, min_source_tokens=4)]
['multi_hop:0', 'factual:0', 'factual:1']
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.pipeline.index import chunk_terms
from ragmeter.synth.corpus import SynthCorpus, format_date

RECENCY_MIN_SCORE = 0.5
"""Normalised BM25 score above which two dated chunks of different notes may state the same thing."""
PARTNERS_SEARCHED = 10
"""How many BM25 neighbours of a chunk are looked at for a multi-hop or recency partner."""
ID_PREFIX = {
    "factual": "fact",
    "multi_hop": "multi",
    "recency": "recency",
    "unanswerable": "unans",
    "paraphrase": "para",
    "adversarial": "adv",
}


@dataclass(frozen=True)
class Task:
    """One generation call: its category, number, prompt, the chunks it shows and any extra facts."""

    category: str
    index: int
    prompt: str
    chunks: tuple[str, ...]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """``category:index`` (also the key of its record in the generation log)."""
        return f"{self.category}:{self.index}"


def _rng(seed: int, salt: str) -> random.Random:
    digest = hashlib.sha256(f"ragmeter-synth:{seed}:{salt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def question_id(category: str, index: int) -> str:
    """The id of the question a task makes.

    >>> question_id("multi_hop", 3)
    'multi-0003'
    """
    return f"{ID_PREFIX[category]}-{index:04d}"


def _sources(corpus: SynthCorpus, min_tokens: int) -> list[str]:
    return [c.id for c in corpus.chunks if c.n_tokens >= min_tokens]


def _shuffled(items: Sequence[str], seed: int, salt: str) -> list[str]:
    out = list(items)
    _rng(seed, salt).shuffle(out)
    return out


def link_term(corpus: SynthCorpus, first: str, second: str) -> str | None:
    """The rarest term (highest IDF, then alphabetical) the two chunks share; digits-only terms skipped."""
    a = set(chunk_terms(corpus.by_id[first]))
    b = set(chunk_terms(corpus.by_id[second]))
    shared = [t for t in a & b if len(t) >= 3 and not t.isdigit()]
    if not shared:
        return None
    return min(shared, key=lambda t: (-corpus.scorer.idf(t), t))


def _multi_hop_pairs(corpus: SynthCorpus, sources: list[str], count: int, seed: int) -> list[Task]:
    tasks: list[Task] = []
    used: set[frozenset[str]] = set()
    eligible = set(sources)
    for first in _shuffled(sources, seed, "multi_hop"):
        if len(tasks) >= count:
            break
        chunk = corpus.by_id[first]
        for second in corpus.search(corpus.text_of(first), k=PARTNERS_SEARCHED, exclude={first}):
            if second not in eligible or corpus.by_id[second].rel_path == chunk.rel_path:
                continue
            pair = frozenset((first, second))
            term = link_term(corpus, first, second)
            if pair in used or term is None:
                continue
            used.add(pair)
            tasks.append(Task("multi_hop", len(tasks), "multi_hop", (first, second), {"link": term}))
            break
    return tasks


def _recency_pairs(corpus: SynthCorpus, sources: list[str], count: int, seed: int) -> list[Task]:
    tasks: list[Task] = []
    used: set[frozenset[str]] = set()
    dated = [s for s in sources if corpus.dates.get(s) is not None]
    eligible = set(dated)
    for first in _shuffled(dated, seed, "recency"):
        if len(tasks) >= count:
            break
        a = corpus.by_id[first]
        scores = corpus.scores_for(corpus.text_of(first))
        for second in corpus.search(corpus.text_of(first), k=PARTNERS_SEARCHED, exclude={first}):
            b = corpus.by_id[second]
            date_a, date_b = corpus.dates.get(first), corpus.dates.get(second)
            if second not in eligible or b.rel_path == a.rel_path or date_a == date_b:
                continue
            same_heading = bool(a.heading_path and b.heading_path) and (
                a.heading_path[-1].casefold() == b.heading_path[-1].casefold()
            )
            if not same_heading and scores.get(second, 0.0) < RECENCY_MIN_SCORE:
                continue
            pair = frozenset((first, second))
            if pair in used:
                continue
            used.add(pair)
            older, newer = sorted((first, second), key=lambda c: (corpus.dates[c], c))
            extra = {
                "older": older,
                "newer": newer,
                "older_date": format_date(corpus.dates[older]),
                "newer_date": format_date(corpus.dates[newer]),
            }
            tasks.append(Task("recency", len(tasks), "recency", (older, newer), extra))
            break
    return tasks


STAGE_ORDER = ("multi_hop", "recency", "factual", "unanswerable")
"""The order of the first-stage tasks (and so of their questions): of two near-duplicates the
filters keep the earlier, so the one claiming more source chunks wins (its verification can
tell which of them matter)."""


def plan_tasks(
    corpus: SynthCorpus, counts: Mapping[str, int], *, seed: int, min_source_tokens: int
) -> list[Task]:
    """The first-stage tasks (every category but the variants), in a fixed order."""
    sources = _sources(corpus, min_source_tokens)
    tasks: list[Task] = []
    for category in ("factual", "unanswerable"):
        picked = _shuffled(sources, seed, category)[: counts.get(category, 0)]
        tasks += [Task(category, i, category, (c,)) for i, c in enumerate(picked)]
    if counts.get("multi_hop", 0):
        tasks += _multi_hop_pairs(corpus, sources, counts["multi_hop"], seed)
    if counts.get("recency", 0):
        tasks += _recency_pairs(corpus, sources, counts["recency"], seed)
    return sorted(tasks, key=lambda t: (STAGE_ORDER.index(t.category), t.index))


def variant_tasks(parents: Sequence[tuple[str, tuple[str, ...]]], counts: Mapping[str, int]) -> list[Task]:
    """One ``variants`` call per parent question (its id and source chunks), enough for both kinds.

    >>> [t.extra for t in variant_tasks([("fact-0000", ("a",)), ("fact-0001", ("b",))], {"paraphrase": 2, "adversarial": 1})]
    [{'parent': 'fact-0000', 'make': ['paraphrase', 'adversarial']}, {'parent': 'fact-0001', 'make': ['paraphrase']}]
    """
    wanted = max(counts.get("paraphrase", 0), counts.get("adversarial", 0))
    tasks = []
    for index, (parent, chunks) in enumerate(parents[:wanted]):
        make = [k for k in ("paraphrase", "adversarial") if index < counts.get(k, 0)]
        tasks.append(Task("variants", index, "variants", chunks, {"parent": parent, "make": make}))
    return tasks


def shortfall(made: Mapping[str, int], counts: Mapping[str, int]) -> dict[str, int]:
    """Categories with fewer tasks (or questions) than asked for, and by how many.

    >>> shortfall({"factual": 3}, {"factual": 5, "recency": 0})
    {'factual': 2}
    """
    return {c: n - made.get(c, 0) for c, n in counts.items() if made.get(c, 0) < n}
