"""The tables the TREC readers return: judgments (:class:`TrecQrels`) and a run (:class:`TrecRun`).

Topics are dictionary-encoded (a list of names and a code per line); docnos stay an Arrow
string array. :func:`judged_lines` finds the run lines a qrels judges, exactly.

>>> index = {}
>>> name_codes(index, ["q2", "q1", "q2"]).tolist(), list(index)
([0, 1, 0], ['q2', 'q1'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmeter.io.docnos import Docnos, KeyIndex, pair_keys, paired_words, topic_keys


@dataclass(frozen=True)
class TrecQrels:
    """Judgments: one row per (topic, docno) with its relevance value."""

    path: str
    topics: list[str]
    topic_code: NDArray[np.int32]
    docno: Docnos
    rel: NDArray[np.float64]
    reader: str = "exact"
    """Which reader read the file: ``fast`` (pyarrow, columnar) or ``exact`` (line by line)."""
    reader_note: str = ""
    """How the fast reader read it (``in 4 slices``), or why the exact reader did (``a comment line``)."""

    def __len__(self) -> int:
        return len(self.rel)

    @cached_property
    def keys(self) -> NDArray[np.uint64]:
        """:func:`pair_keys` of every judgment."""
        return pair_keys(self.docno, topic_keys(self.topics), self.topic_code)

    @cached_property
    def index(self) -> KeyIndex:
        """A hash index of :attr:`keys` (see :func:`judged_lines`)."""
        return KeyIndex(self.keys)

    def topic_index(self, topics: Sequence[str]) -> NDArray[np.int32]:
        """Each of ``topics`` as an index into :attr:`topics` (-1: not judged)."""
        position = {t: i for i, t in enumerate(self.topics)}
        return np.array([position.get(t, -1) for t in topics], dtype=np.int32)


@dataclass(frozen=True)
class TrecRun:
    """A run: one row per retrieved (topic, docno) with its score, in file order."""

    path: str
    topics: list[str]
    topic_code: NDArray[np.int32]
    docno: Docnos
    score: NDArray[np.float64]
    notes: list[str] = field(default_factory=list)
    unique_pairs: bool = False
    """True when the reader made sure that no (topic, docno) pair repeats."""
    judged: tuple[TrecQrels, NDArray[np.int64], NDArray[np.signedinteger[Any]]] | None = field(
        default=None, repr=False
    )
    """With ``read_run(..., qrels=q)``: ``q``, and :func:`judged_lines` for it, found while reading."""
    reader: str = "exact"
    """Which reader read the file: ``fast`` (pyarrow, columnar) or ``exact`` (line by line)."""
    reader_note: str = ""
    """How the fast reader read it (``in 4 slices``), or why the exact reader did (``a comment line``)."""

    def __len__(self) -> int:
        return len(self.score)

    def docnos(self) -> list[str]:
        """The docnos as Python strings (for small runs and tests)."""
        return [str(x) for x in self.docno.to_pylist()]

    def pair_keys(self) -> NDArray[np.uint64]:
        """:func:`pair_keys` of every line (computed on each call)."""
        return pair_keys(self.docno, topic_keys(self.topics), self.topic_code)


def judged_lines(
    qrels: TrecQrels,
    keys: NDArray[np.uint64],
    codes: NDArray[np.int32],
    run_to_qrels: NDArray[np.int32],
    docno: Docnos,
) -> tuple[NDArray[np.int64], NDArray[np.signedinteger[Any]]]:
    """The run lines whose (topic, docno) ``qrels`` judge, and the judgment row of each.

    ``keys``, ``codes`` and ``docno`` describe the lines (:func:`pair_keys`, run
    topic codes, docnos); ``run_to_qrels`` maps run topic codes to qrels topics.
    A key match is confirmed on the topic and the docno's bytes, so the answer is
    exact even if two pairs ever share a key.
    """
    lines, judgment = qrels.index.find(keys)
    same = run_to_qrels[codes[lines]] == qrels.topic_code[judgment]
    lines, judgment = lines[same], judgment[same]
    if len(lines):
        mine, my_length, theirs, their_length = paired_words(docno, lines, qrels.docno, judgment)
        equal = (my_length == their_length) & np.all(mine == theirs, axis=1)
        lines, judgment = lines[equal], judgment[equal]
    return lines, judgment


def name_codes(index: dict[str, int], names: list[Any]) -> NDArray[np.int32]:
    """Each name's number in ``index``, adding new names at the end."""
    return np.array([index.setdefault(str(name), len(index)) for name in names], dtype=np.int32)
