"""The first topics of qrels, and a run cut to the same topics: what ``--limit N`` evaluates.

>>> from ragmeter.io.run_tables import RowNames, qrels_from_columns, run_from_columns
>>> q = qrels_from_columns(["q2", "q1", "q3"], ["a", "b", "c"], [1, 1, 1], rows=RowNames("q"))
>>> head_topics(q, 2).topics
['q2', 'q1']
>>> r = run_from_columns(["q3", "q1", "q2"], ["c", "b", "a"], [1.0, 1.0, 1.0], rows=RowNames("r"))
>>> cut = only_topics(r, ["q2", "q1"])
>>> cut.topics, cut.docnos()
(['q1', 'q2'], ['b', 'a'])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from ragmeter.io.trec_tables import TrecQrels, TrecRun


def _take(docno: pa.Array | pa.ChunkedArray, mask: np.ndarray) -> pa.Array | pa.ChunkedArray:
    return docno.filter(pa.array(mask))


def head_topics(qrels: TrecQrels, n: int) -> TrecQrels:
    """The judgments of the first ``n`` topics (in the order they first appear)."""
    if n >= len(qrels.topics):
        return qrels
    mask = qrels.topic_code < n
    return TrecQrels(
        qrels.path, qrels.topics[:n], qrels.topic_code[mask], _take(qrels.docno, mask), qrels.rel[mask]
    )


def only_topics(run: TrecRun, topics: Sequence[str]) -> TrecRun:
    """The lines of ``run`` whose topic is one of ``topics`` (topic order: as they first appear in the run)."""
    wanted = set(topics)
    keep = np.array([topic in wanted for topic in run.topics], dtype=bool)
    if keep.all():
        return run
    mask = keep[run.topic_code]
    renumber = np.cumsum(keep, dtype=np.int32) - 1
    return TrecRun(
        run.path,
        [t for t, k in zip(run.topics, keep.tolist(), strict=True) if k],
        renumber[run.topic_code[mask]],
        _take(run.docno, mask),
        run.score[mask],
        list(run.notes),
        unique_pairs=run.unique_pairs,
    )
