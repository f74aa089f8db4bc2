"""Join a TREC run with its qrels into gains per rank, in trec_eval 10.0's order.

Ranking within a topic: score descending (double precision), ties broken by
docno in descending byte order; the rank column is ignored. Topics in the run
but not in the qrels are ignored (as trec_eval does); qrels topics missing from
the run are scored as empty rankings only with ``complete=True`` (trec_eval's
``-c``), and reported either way. A docno repeated within one topic counts once,
at its first rank (trec_eval rejects such runs; ragmeter keeps going and says so).

Everything here is vectorised: no Python object per run line.

>>> import tempfile, pathlib
>>> from ragmeter.io.trec import read_qrels, read_run
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "qrels").write_text("q 0 a 1\\nq 0 b 2\\n")
>>> _ = (d / "run").write_text("q Q0 b 1 1.0 r\\nq Q0 a 2 1.0 r\\nq Q0 c 3 3.0 r\\n")
>>> m = match_trec(read_qrels(d / "qrels"), read_run(d / "run"))
>>> m.table.gains.tolist()   # c (3.0), then the tie b > a in descending docno order
[0.0, 2.0, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

from ragmeter.io.trec import TrecQrels, TrecRun
from ragmeter.metrics.relevance import RelevanceTable


@dataclass
class MatchedTrec:
    """The joined table plus what was left out or repaired on the way."""

    table: RelevanceTable
    n_run_topics_ignored: int = 0
    missing_topics: list[str] = field(default_factory=list)
    n_duplicates: int = 0
    warnings: list[str] = field(default_factory=list)


def _doc_ranks(dictionary: pa.Array) -> NDArray[np.int64]:
    """Rank of each dictionary entry in byte order (as strcmp orders docnos)."""
    order = pc.sort_indices(pc.cast(dictionary, pa.binary())).to_numpy()
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order), dtype=np.int64)
    return ranks


def _in_trec_order(topic: NDArray[np.int64], score: NDArray[np.float64], docno: pa.Array) -> bool:
    """Whether rows are grouped by topic and already sorted (score desc, docno desc on ties)."""
    if len(topic) < 2:
        return True
    same = topic[1:] == topic[:-1]
    if int(np.count_nonzero(~same)) != len(np.unique(topic)) - 1:
        return False
    if bool(np.any(same & (score[1:] > score[:-1]))):
        return False
    ties = np.flatnonzero(same & (score[1:] == score[:-1]))
    if len(ties) == 0:
        return True
    left = pc.cast(docno.take(pa.array(ties)), pa.binary())
    right = pc.cast(docno.take(pa.array(ties + 1)), pa.binary())
    return bool(pc.all(pc.greater(left, right)).as_py())


def match_trec(qrels: TrecQrels, run: TrecRun, *, complete: bool = False) -> MatchedTrec:
    """Join ``run`` with ``qrels`` into a :class:`RelevanceTable` over the evaluated topics."""
    warnings = list(run.notes)
    qrels_index = {t: i for i, t in enumerate(qrels.topics)}
    run_to_qrels = np.array([qrels_index.get(t, -1) for t in run.topics], dtype=np.int64)
    topic = run_to_qrels[run.topic_code] if len(run) else np.zeros(0, dtype=np.int64)
    n_ignored = int(np.count_nonzero(run_to_qrels < 0))
    if n_ignored:
        warnings.append(
            f"{run.path}: {n_ignored} run topic(s) have no judgments in the qrels and were ignored"
        )
    keep = topic >= 0
    docno: pa.Array = run.docno
    score = run.score
    if not bool(keep.all()):
        idx = np.flatnonzero(keep)
        topic, score, docno = topic[idx], score[idx], docno.take(pa.array(idx))

    # One dictionary over qrels and run docnos, so (topic, doc) becomes one exact int64 key.
    encoded = pc.dictionary_encode(pa.concat_arrays([qrels.docno.cast(pa.string()), docno.cast(pa.string())]))
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    n_docs = max(len(encoded.dictionary), 1)
    qrels_keys = qrels.topic_code.astype(np.int64) * n_docs + codes[: len(qrels)]
    doc_code = codes[len(qrels) :]

    if not _in_trec_order(topic, score, docno):
        doc_rank = _doc_ranks(encoded.dictionary)[doc_code]
        order = np.lexsort((-doc_rank, -score, topic))
        topic, score, doc_code = topic[order], score[order], doc_code[order]

    run_keys = topic * n_docs + doc_code
    n_dup = 0
    if len(run_keys) and pc.count_distinct(pa.array(run_keys)).as_py() != len(run_keys):
        _, first = np.unique(run_keys, return_index=True)
        first.sort()
        n_dup = len(run_keys) - len(first)
        topic, run_keys = topic[first], run_keys[first]
        warnings.append(
            f"{run.path}: {n_dup} repeated (topic, docno) line(s); each document counted once, at its first rank"
        )

    found = pc.index_in(pa.array(run_keys), value_set=pa.array(qrels_keys)).fill_null(-1)
    found_idx = found.to_numpy(zero_copy_only=False).astype(np.int64)
    gains = np.where(found_idx >= 0, qrels.rel[np.maximum(found_idx, 0)], 0.0)

    # Query set: topics present in the run (in qrels order), plus missing ones with complete=True.
    counts = np.bincount(topic, minlength=len(qrels.topics)).astype(np.int64)
    present = counts > 0
    missing = [qrels.topics[i] for i in np.flatnonzero(~present)]
    if missing:
        how = (
            "scored as empty rankings (--complete)"
            if complete
            else "left out (use --complete to count them as 0)"
        )
        warnings.append(f"{len(missing)} qrels topic(s) have no lines in the run: {how}")
    evaluated = np.arange(len(qrels.topics)) if complete else np.flatnonzero(present)

    # Rows are grouped by topic; order the groups by qrels topic index (a stable permutation of blocks).
    if len(topic) and bool(np.any(topic[1:] < topic[:-1])):
        perm = np.argsort(topic, kind="stable")
        topic, gains = topic[perm], gains[perm]
    offsets_all = np.zeros(len(qrels.topics) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets_all[1:])
    sel_counts = counts[evaluated]
    offsets = np.zeros(len(evaluated) + 1, dtype=np.int64)
    np.cumsum(sel_counts, out=offsets[1:])
    if len(evaluated) == len(qrels.topics):
        sel_gains = gains
    else:
        take = (
            np.concatenate([np.arange(offsets_all[t], offsets_all[t + 1]) for t in evaluated])
            if len(evaluated)
            else np.zeros(0, np.int64)
        )
        sel_gains = gains[take]

    ideal_offsets, ideal_gains = _ideal(qrels, evaluated)
    table = RelevanceTable(
        query_ids=[qrels.topics[i] for i in evaluated],
        offsets=offsets,
        gains=sel_gains.astype(np.float64),
        ideal_offsets=ideal_offsets,
        ideal_gains=ideal_gains,
    )
    return MatchedTrec(table, n_ignored, missing, n_dup, warnings)


def _ideal(qrels: TrecQrels, evaluated: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Positive judgments of the evaluated topics, sorted descending within each topic."""
    position = np.full(len(qrels.topics), -1, dtype=np.int64)
    position[evaluated] = np.arange(len(evaluated))
    row_q = position[qrels.topic_code]
    mask = (qrels.rel > 0) & (row_q >= 0)
    q, g = row_q[mask], qrels.rel[mask]
    order = np.lexsort((-g, q))
    q, g = q[order], g[order]
    offsets = np.zeros(len(evaluated) + 1, dtype=np.int64)
    np.cumsum(np.bincount(q, minlength=len(evaluated)), out=offsets[1:])
    return offsets, g.astype(np.float64)
