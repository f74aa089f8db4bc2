"""Failure analysis: why a search system missed the documents that empirically matter.

A *miss* is a YES document of a pair that is not in the system's top k (ids counted once, at
their first rank). Each miss gets exactly one bucket, by the first rule that fires:

1. ``vocabulary_mismatch`` — the gold document shares few of the query's content terms:
   ``overlap(query, gold) < vocabulary_threshold`` (default 0.25), where overlap is the share of
   the query's content terms found in the gold document's id and text. *Fix: vector search.*
2. ``distractor_overlap`` — a document the mining verified irrelevant (verdict NO) is ranked
   above the gold document (or inside the top k when the gold one is not) and shares at least
   one of the query's content terms (the first such document is the culprit; the shared terms
   are listed). *Fix: reranking / contrastive training.*
3. ``specificity_gap`` — the query is vague: fewer than ``min_specific_terms`` (default 2) of
   its content terms are specific (found in at most ``specific_df`` = 10% of the dataset's
   documents). *Fix: query expansion.*
4. ``other`` — none of the above (e.g. ranked just below k despite good overlap).

A pair with YES documents but no recorded output counts every YES document as a
``no_output`` miss (a failure of the system, never dropped). Pairs without YES documents have
nothing to miss; they are counted as skipped.

Content terms: lower-cased words split at non-letters, camelCase and underscores, English
stop words and one-letter words removed, a final plural ``s`` dropped.

>>> terms("How do I pretty-print JSON with sorted keys?")
['pretty', 'print', 'json', 'sorted', 'key']
>>> terms("json.JSONEncoder(sort_keys=False)")
['json', 'json', 'encoder', 'sort', 'key', 'false']
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.mining.dataset import MinedPair, load_mined_dataset

BUCKETS = ("vocabulary_mismatch", "distractor_overlap", "specificity_gap", "other", "no_output")

_STOPWORD_TEXT = """
a about an and any are as at be by can could do does for from get give gives how i if in into is it
its me my of on one or should so than that the their them then there these this to use used using
want was what when where which while who why will with would you your we our us
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def terms(text: str) -> list[str]:
    """Content terms of a text (see the module docstring), in order, with repeats."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", spaced)
    out: list[str] = []
    for word in re.findall(r"[a-z0-9]+", spaced.lower()):
        if len(word) < 2 or word in STOPWORDS or word.isdigit():
            continue
        if word.endswith("sses"):
            word = word[:-2]
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
        out.append(word)
    return out


def overlap(query_terms: set[str], doc_terms: set[str]) -> float:
    """Share of the query's content terms present in the document (0 for a query without terms).

    >>> overlap({"sort", "key"}, {"key", "json"})
    0.5
    """
    if not query_terms:
        return 0.0
    return len(query_terms & doc_terms) / len(query_terms)


@dataclass(frozen=True)
class Miss:
    """One YES document missing from a system's top k, with its bucket and the evidence."""

    pair_id: str
    query: str
    gold: str
    rank: int | None
    bucket: str
    gold_overlap: float
    specific_terms: list[str]
    culprit: str | None = None
    shared_terms: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """As printed by ``--json``."""
        return {
            "pair_id": self.pair_id,
            "query": self.query,
            "gold": self.gold,
            "rank": self.rank,
            "bucket": self.bucket,
            "gold_overlap": round(self.gold_overlap, 4),
            "specific_terms": self.specific_terms,
            "culprit": self.culprit,
            "shared_terms": self.shared_terms,
        }


@dataclass
class FailureReport:
    """Counts and examples per bucket, plus every miss."""

    k: int
    pairs: int
    scored: int
    skipped: int
    missing_output: int
    hits: int
    gold_documents: int
    misses: list[Miss]
    settings: dict[str, float]

    def counts(self) -> dict[str, int]:
        """Misses per bucket (every bucket listed, zeros included)."""
        out = dict.fromkeys(BUCKETS, 0)
        for miss in self.misses:
            out[miss.bucket] += 1
        return out

    def examples(self, per_bucket: int = 3) -> dict[str, list[Miss]]:
        """The first few misses of each bucket."""
        out: dict[str, list[Miss]] = {b: [] for b in BUCKETS}
        for miss in self.misses:
            if len(out[miss.bucket]) < per_bucket:
                out[miss.bucket].append(miss)
        return out

    def to_dict(self, per_bucket: int = 3) -> dict[str, Any]:
        """A JSON-ready summary."""
        counts = self.counts()
        total = len(self.misses)
        return {
            "k": self.k,
            "pairs": self.pairs,
            "scored_pairs": self.scored,
            "skipped_pairs_without_yes": self.skipped,
            "missing_output": self.missing_output,
            "gold_documents": self.gold_documents,
            "gold_found_in_top_k": self.hits,
            "misses": total,
            "settings": self.settings,
            "buckets": {
                name: {
                    "count": counts[name],
                    "share": round(counts[name] / total, 4) if total else None,
                    "examples": [m.to_dict() for m in self.examples(per_bucket)[name]],
                }
                for name in BUCKETS
            },
        }


def analyze_failures(
    pairs: Sequence[MinedPair],
    rankings: Mapping[str, Sequence[str]],
    *,
    k: int = 5,
    vocabulary_threshold: float = 0.25,
    specific_df: float = 0.10,
    min_specific_terms: int = 2,
) -> FailureReport:
    """Classify every miss of a system's rankings against a mined dataset's YES documents.

    ``rankings`` maps pair id to ranked document ids (best first).

    >>> from ragmeter.mining.dataset import MinedCandidate, MinedPair
    >>> pair = MinedPair("b:1", "run tasks concurrently", "IDENTIFIED", (
    ...     MinedCandidate("pool.ParallelAgent", "Executes sub-agents in parallel.", "YES"),
    ...     MinedCandidate("pool.TaskRunner", "Run tasks one by one.", "NO")))
    >>> report = analyze_failures([pair], {"b:1": ["pool.TaskRunner"]}, k=1)
    >>> [(m.gold, m.bucket) for m in report.misses]
    [('pool.ParallelAgent', 'vocabulary_mismatch')]
    """
    if k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k}")
    documents: dict[str, set[str]] = {}
    for pair in pairs:
        for cand in pair.candidates:
            documents.setdefault(cand.id, set(terms(cand.id)) | set(terms(cand.text)))
    n_docs = max(1, len(documents))
    df: dict[str, int] = {}
    for doc_terms in documents.values():
        for term in doc_terms:
            df[term] = df.get(term, 0) + 1
    limit = max(1, math.floor(specific_df * n_docs))
    misses: list[Miss] = []
    scored = skipped = missing = hits = gold_total = 0
    for pair in pairs:
        gold = pair.relevant
        if not gold:
            skipped += 1
            continue
        scored += 1
        gold_total += len(gold)
        q_terms = set(terms(pair.query))
        specific = sorted(t for t in q_terms if 0 < df.get(t, 0) <= limit)
        verdicts = {c.id: c.verdict for c in pair.candidates}
        if pair.id not in rankings:
            missing += 1
            for doc in gold:
                misses.append(Miss(pair.id, pair.query, doc, None, "no_output", 0.0, specific))
            continue
        ranked: list[str] = []
        for doc_id in rankings[pair.id]:
            if doc_id not in ranked:
                ranked.append(doc_id)
        for doc in gold:
            rank = ranked.index(doc) + 1 if doc in ranked else None
            if rank is not None and rank <= k:
                hits += 1
                continue
            g_overlap = overlap(q_terms, documents.get(doc, set()))
            if g_overlap < vocabulary_threshold:
                misses.append(
                    Miss(pair.id, pair.query, doc, rank, "vocabulary_mismatch", g_overlap, specific)
                )
                continue
            window = ranked[: (rank - 1) if rank is not None and rank <= k else k]
            culprit = None
            shared: list[str] = []
            for other in window:
                if verdicts.get(other) != "NO":
                    continue
                common = q_terms & documents.get(other, set())
                if common:
                    culprit, shared = other, sorted(common)
                    break
            if culprit is not None:
                misses.append(
                    Miss(
                        pair.id,
                        pair.query,
                        doc,
                        rank,
                        "distractor_overlap",
                        g_overlap,
                        specific,
                        culprit,
                        shared,
                    )
                )
            elif len(specific) < min_specific_terms:
                misses.append(Miss(pair.id, pair.query, doc, rank, "specificity_gap", g_overlap, specific))
            else:
                misses.append(Miss(pair.id, pair.query, doc, rank, "other", g_overlap, specific))
    return FailureReport(
        k=k,
        pairs=len(pairs),
        scored=scored,
        skipped=skipped,
        missing_output=missing,
        hits=hits,
        gold_documents=gold_total,
        misses=misses,
        settings={
            "vocabulary_threshold": vocabulary_threshold,
            "specific_df": specific_df,
            "min_specific_terms": min_specific_terms,
        },
    )


def analyze_files(dataset: str | Path, outputs: str | Path, *, k: int = 5, **options: float) -> FailureReport:
    """Failure analysis of an outputs file (JSONL ``{"id", "output"}``) against a mined dataset."""
    from ragmeter.io.outputs import load_outputs

    pairs = load_mined_dataset(dataset)
    loaded = load_outputs(outputs)
    rankings = {
        sid: [item.id for item in out.retrieved if item.id is not None] for sid, out in loaded.items()
    }
    return analyze_failures(
        pairs,
        rankings,
        k=k,
        vocabulary_threshold=float(options.get("vocabulary_threshold", 0.25)),
        specific_df=float(options.get("specific_df", 0.10)),
        min_specific_terms=int(options.get("min_specific_terms", 2)),
    )
