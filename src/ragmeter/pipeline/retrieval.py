"""BM25 over the chunks (the ``bm25s`` package, Lucene variant) and a deterministic ranking.

Scores are normalised per question so one threshold fits every question::

    score(q, c) = (k1 + 1) * BM25(q, c) / sum(idf(t) for t in q)

over the question's distinct terms (stopwords removed), with the Lucene IDF
``ln(1 + (N - df + 0.5) / (df + 0.5))``; a term no chunk contains has
``df = 0`` and still counts in the denominator. A chunk that holds every
question term once and has the average length scores 1.0; a chunk that holds
none scores 0. Normalising by a per-question constant does not change the
ranking. Ties are broken by index order (notes sorted by path, chunks in note
order), so the same index and question always give the same list.

>>> scorer = Bm25Scorer.build([["alpha", "beta"], ["beta"], ["gamma"]], k1=1.5, b=0.75)
>>> [round(float(s), 3) for s in scorer.scores(["beta", "beta"])]
[0.816, 1.127, 0.0]
>>> rank(np.array([0.5, 0.9, 0.5, 0.0]), k=3)
[1, 0, 2]
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ragmeter.extras import import_optional

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_META_FILE = "bm25_meta.json"


def bm25s_version() -> str:
    """The installed ``bm25s`` version (imported lazily: it is an optional dependency).

    >>> bm25s_version().count(".") >= 1
    True
    """
    return str(_bm25s().__version__)


def _bm25s() -> Any:
    return import_optional("bm25s", needed_for="the reference pipeline")


def lucene_idf(df: int, n_docs: int) -> float:
    """Lucene's BM25 IDF (never negative).

    >>> round(lucene_idf(1, 3), 4), round(lucene_idf(0, 3), 4)
    (0.9808, 2.0794)
    """
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


class Bm25Scorer:
    """Scores every chunk for a question: ``bm25s`` for BM25, plus document frequencies for the IDF."""

    def __init__(self, retriever: Any, doc_freq: dict[str, int], n_docs: int, *, k1: float) -> None:
        self._retriever = retriever
        self.doc_freq = doc_freq
        self.n_docs = n_docs
        self.k1 = k1

    @classmethod
    def build(cls, corpus: Sequence[Sequence[str]], *, k1: float, b: float) -> Bm25Scorer:
        """Index tokenised chunks (one term list per chunk, in index order).

        >>> Bm25Scorer.build([], k1=1.5, b=0.75).scores(["x"]).shape
        (0,)
        """
        doc_freq: Counter[str] = Counter()
        for doc in corpus:
            doc_freq.update(set(doc))
        retriever = None
        if any(corpus):
            retriever = _bm25s().BM25(k1=k1, b=b, method="lucene")
            retriever.index([list(doc) for doc in corpus], show_progress=False)
        return cls(retriever, dict(sorted(doc_freq.items())), len(corpus), k1=k1)

    def save(self, folder: Path) -> None:
        """Write the index into ``folder`` (``bm25s``'s files plus ``bm25_meta.json``)."""
        folder.mkdir(parents=True, exist_ok=True)
        if self._retriever is not None:
            self._retriever.save(str(folder))
        meta = {
            "n_docs": self.n_docs,
            "k1": self.k1,
            "doc_freq": self.doc_freq,
            "empty": self._retriever is None,
        }
        (folder / _META_FILE).write_text(json.dumps(meta), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> Bm25Scorer:
        """Read an index written by :meth:`save`."""
        meta = json.loads((folder / _META_FILE).read_text(encoding="utf-8"))
        retriever = None if meta["empty"] else _bm25s().BM25.load(str(folder))
        return cls(
            retriever,
            {str(k): int(v) for k, v in meta["doc_freq"].items()},
            int(meta["n_docs"]),
            k1=float(meta["k1"]),
        )

    def idf(self, term: str) -> float:
        """IDF of a term over the indexed chunks (``df = 0`` for unknown terms)."""
        return lucene_idf(self.doc_freq.get(term, 0), self.n_docs)

    def scores(self, query_terms: Sequence[str]) -> FloatArray:
        """Normalised BM25 score of every chunk (see the module docstring); distinct terms only."""
        distinct = list(dict.fromkeys(query_terms))
        out = np.zeros(self.n_docs, dtype=np.float64)
        if not distinct or self._retriever is None:
            return out
        known = [t for t in distinct if t in self.doc_freq]
        if known:
            raw = np.asarray(self._retriever.get_scores(known), dtype=np.float64)
            out = raw * (self.k1 + 1.0) / sum(self.idf(t) for t in distinct)
        return out


def rank(scores: FloatArray, *, k: int, mask: BoolArray | None = None) -> list[int]:
    """Indices of the top ``k`` chunks with a score > 0: score descending, then index ascending.

    ``mask`` (optional) keeps only the chunks where it is true.

    >>> rank(np.array([0.2, 0.2, 0.7]), k=5, mask=np.array([True, True, False]))
    [0, 1]
    """
    candidates = scores > 0.0
    if mask is not None:
        candidates &= mask
    idx = np.flatnonzero(candidates)
    if idx.size == 0:
        return []
    order = np.lexsort((idx, -scores[idx]))
    return [int(i) for i in idx[order][:k]]
