"""Join a TREC run with its qrels into gains per rank, in trec_eval 10.0's order.

Ranking within a topic: score descending (double precision), ties broken by
docno in descending byte order; the rank column is ignored. Topics in the run
but not in the qrels are ignored (as trec_eval does); qrels topics missing from
the run are scored as empty rankings only with ``complete=True`` (trec_eval's
``-c``), and reported either way. A docno repeated within one topic counts once,
at its first rank; a copy keeps its rank slot and scores 0, as a repeated id in a
recorded output does (trec_eval rejects such runs; ragmeter keeps going and says so).

Everything here is vectorised: no Python object per run line. Docnos are never
hashed into a pyarrow dictionary (slow for millions of distinct strings):
(topic, docno) pairs get 64-bit keys computed in numpy
(:func:`~ragmeter.io.docnos.pair_keys`), lines are joined with the judgments
through a small open-addressing table of the judgment keys
(:func:`~ragmeter.io.trec_tables.judged_lines`), repeats are found by sorting the
keys, and every key match is confirmed on the bytes, so the result is exact.
The reader does much of this on the way, on all cores: the keys, the check for
repeats (``TrecRun.unique_pairs``) and, given the qrels, the judged lines. A
run already in trec_eval's order (the usual case) is not sorted at all: only
its runs of tied scores are checked.

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
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmeter.io.docnos import Docnos, concat_ranges, docno_words, paired_words
from ragmeter.io.trec_tables import TrecQrels, TrecRun, judged_lines
from ragmeter.metrics.relevance import JUDGED, NOT_JUDGED, POOLED_UNJUDGED, JudgedArray, RelevanceTable


@dataclass
class MatchedTrec:
    """The joined table plus what was left out or repaired on the way."""

    table: RelevanceTable
    n_run_topics_ignored: int = 0
    missing_topics: list[str] = field(default_factory=list)
    n_duplicates: int = 0
    warnings: list[str] = field(default_factory=list)


def match_trec(qrels: TrecQrels, run: TrecRun, *, complete: bool = False) -> MatchedTrec:
    """Join ``run`` with ``qrels`` into a :class:`RelevanceTable` over the evaluated topics."""
    warnings = list(run.notes)
    run_to_qrels = qrels.topic_index(run.topics)
    n_ignored = int(np.count_nonzero(run_to_qrels < 0))
    if n_ignored:
        warnings.append(
            f"{run.path}: {n_ignored} run topic(s) have no judgments in the qrels and were ignored"
        )
    # Per line of the file: its judgment, and whether it has one.
    line_gain, line_judged = _judged_gains(qrels, run, run_to_qrels)

    # The evaluated lines in trec_eval's order, grouped by qrels topic.
    order = _trec_order(run, run_to_qrels, len(qrels.topics))
    gains = order.apply(line_gain, in_place=True)
    judged = order.apply(line_judged, in_place=True)
    counts = order.counts
    n_dup = 0
    if not run.unique_pairs:
        topic = order.apply(run_to_qrels[run.topic_code], in_place=True)
        first = _first_occurrences(run.docno, order.apply(run.pair_keys()), order, topic)
        if first is not None:
            n_dup = len(first) - int(np.count_nonzero(first))
            gains[~first] = 0.0  # the copy keeps its rank slot and scores nothing
            judged[~first] = NOT_JUDGED
            warnings.append(
                f"{run.path}: {n_dup} repeated (topic, docno) line(s); each document counted once, "
                "at its first rank (a copy keeps its rank slot and scores 0)"
            )

    # Query set: topics present in the run (in qrels order), plus missing ones with complete=True.
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
    # Every kept line belongs to a present topic: the rows already are the evaluated topics' rows.
    offsets = np.zeros(len(evaluated) + 1, dtype=np.int64)
    np.cumsum(counts[evaluated], out=offsets[1:])

    ideal_offsets, ideal_gains, judged_zero = _ideal(qrels, evaluated)
    table = RelevanceTable(
        query_ids=[qrels.topics[i] for i in evaluated],
        offsets=offsets,
        gains=gains,
        ideal_offsets=ideal_offsets,
        ideal_gains=ideal_gains,
        judged=judged,
        judged_zero=judged_zero,
    )
    return MatchedTrec(table, n_ignored, missing, n_dup, warnings)


def _judged_gains(
    qrels: TrecQrels, run: TrecRun, run_to_qrels: NDArray[np.int32]
) -> tuple[NDArray[np.float64], JudgedArray]:
    """Each run line's judgment (0 when unjudged or the topic is ignored) and judged status.

    The status is :attr:`~ragmeter.metrics.relevance.RelevanceTable.judged`'s.
    """
    gains = np.zeros(len(run), dtype=np.float64)
    if run.judged is not None and run.judged[0] is qrels:  # looked up while reading
        lines, judgment = run.judged[1], run.judged[2]
    else:
        lines, judgment = judged_lines(qrels, run.pair_keys(), run.topic_code, run_to_qrels, run.docno)
    gains[lines] = values = qrels.rel[judgment]
    judged = np.zeros(len(run), dtype=np.int8)
    judged[lines] = np.where(values < 0, POOLED_UNJUDGED, JUDGED)
    return gains, judged


@dataclass(frozen=True)
class _Order:
    """Which file line is at each position of the evaluated ranking.

    ``rows`` lists them (``None``: the file order, all lines kept); when only
    some runs of tied scores are out of order, the lines at positions ``moved``
    are replaced by those at ``source`` (cheaper than a full list of rows).
    """

    counts: NDArray[np.int64]
    """Lines per qrels topic."""
    rows: NDArray[np.int64] | None = None
    moved: NDArray[np.int64] | None = None
    source: NDArray[np.int64] | None = None

    def apply(self, values: NDArray[Any], *, in_place: bool = False) -> NDArray[Any]:
        """``values`` (one per file line) in this order; ``in_place`` may reuse ``values``."""
        out = values if self.rows is None else values[self.rows]
        if self.moved is not None and self.source is not None:
            if out is values and not in_place:
                out = out.copy()
            out[self.moved] = out[self.source]
        return out

    def lines(self, positions: NDArray[np.int64]) -> NDArray[np.int64]:
        """The file lines at some positions."""
        if self.moved is None or self.source is None:
            return positions if self.rows is None else self.rows[positions]
        at = np.minimum(np.searchsorted(self.moved, positions), len(self.moved) - 1)
        hit = self.moved[at] == positions
        out = positions.copy()
        out[hit] = self.source[at[hit]]
        return out


def _trec_order(run: TrecRun, run_to_qrels: NDArray[np.int32], n_topics: int) -> _Order:
    """The judged-topic lines in trec_eval's order, grouped by qrels topic.

    Usually that is the file order itself (a run written topic by topic in rank
    order, topics in qrels order), maybe with some runs of ties to reorder.
    """
    code, score = run.topic_code, run.score
    n = len(code)
    counts = np.zeros(n_topics, dtype=np.int64)
    rows: NDArray[np.int64] | None
    if n == 0:
        return _Order(counts)
    change = np.flatnonzero(code[1:] != code[:-1]) + 1
    rises = np.flatnonzero(score[1:] > score[:-1]) + 1
    if len(change) == len(run.topics) - 1 and bool(np.all(_members(rises, change))):
        # Each topic is one block already in score order: order the blocks, drop ignored ones.
        starts = np.concatenate(([0], change))
        ends = np.concatenate((change, [n]))
        block_topic = run_to_qrels[code[starts]]
        keep = np.flatnonzero(block_topic >= 0)
        counts[block_topic[keep]] = (ends - starts)[keep]
        if bool(np.all(block_topic[1:] > block_topic[:-1])) and block_topic[0] >= 0:
            rows = None
        else:
            keep = keep[np.argsort(block_topic[keep])]
            rows = concat_ranges(starts[keep], ends[keep])
    else:
        line_topic = run_to_qrels[code]
        kept = np.flatnonzero(line_topic >= 0)
        rows = kept[np.lexsort((-score[kept], line_topic[kept]))]
        counts += np.bincount(line_topic[kept], minlength=n_topics)
    fix = _tie_order(rows, code, score, run.docno)
    if fix is None:
        return _Order(counts, rows)
    moved, source = fix
    if rows is None:
        return _Order(counts, None, moved, source)
    rows[moved] = rows[source]
    return _Order(counts, rows)


def _members(values: NDArray[Any], ordered: NDArray[Any]) -> NDArray[np.bool_]:
    """``np.isin(values, ordered)`` for a sorted ``ordered`` (np.isin imports numpy.ma: 30 ms).

    >>> _members(np.array([3, 1, 4, 9]), np.array([1, 1, 4])).tolist()
    [False, True, True, False]
    """
    if len(ordered) == 0:
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(ordered, values), len(ordered) - 1)
    found: NDArray[np.bool_] = ordered[at] == values
    return found


def _tie_order(
    rows: NDArray[np.int64] | None, code: NDArray[np.int32], score: NDArray[np.float64], docno: Docnos
) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """Reorder lines with equal topic and score by descending docno bytes (trec_eval's tie-break).

    Returns ``(moved, source)``: position ``moved[i]`` takes the line at position
    ``source[i]``; ``None`` when the ties are already in order.
    """
    topic = code if rows is None else code[rows]
    ordered = score if rows is None else score[rows]
    tie = np.flatnonzero((topic[1:] == topic[:-1]) & (ordered[1:] == ordered[:-1]))
    if len(tie) == 0:
        return None
    line = tie if rows is None else rows[tie]
    following = tie + 1 if rows is None else rows[tie + 1]
    if bool(np.all(_greater(*paired_words(docno, line, docno, following)))):
        return None
    # Positions in a run of ties, numbered by run; sort each run by docno, descending.
    member = np.zeros(len(topic) + 1, dtype=bool)
    member[tie] = True
    member[tie + 1] = True
    at = np.flatnonzero(member)
    starts_run = np.ones(len(at), dtype=bool)
    starts_run[1:] = ~_members(at[1:] - 1, tie)
    group = np.cumsum(starts_run)
    words, length = docno_words(docno, at if rows is None else rows[at])
    # lexsort: the last key is the primary one; ~word and -length sort descending.
    keys: list[NDArray[Any]] = [-length, *(~words[:, i] for i in range(words.shape[1] - 1, -1, -1)), group]
    return at, at[np.lexsort(keys)]


def _greater(
    left: NDArray[np.uint64],
    left_length: NDArray[np.int64],
    right: NDArray[np.uint64],
    right_length: NDArray[np.int64],
) -> NDArray[np.bool_]:
    """Row-wise ``left > right`` in byte order (words of :func:`docno_words`, same width)."""
    differ = left != right
    first = np.argmax(differ, axis=1)
    rows = np.arange(len(left))
    any_differ = differ[rows, first]
    out: NDArray[np.bool_] = np.where(
        any_differ, left[rows, first] > right[rows, first], left_length > right_length
    )
    return out


def _first_occurrences(
    docno: Docnos, keys: NDArray[np.uint64], order: _Order, topic: NDArray[np.int32]
) -> NDArray[np.bool_] | None:
    """Mask of the ordered lines to keep (first copy of each (topic, docno)); None if none repeats.

    Equal pairs have equal keys, so a sort of the keys finds every repeat; the
    few candidates are then compared exactly. (Runs read by the fast reader
    usually come checked already: see ``TrecRun.unique_pairs``.)
    """
    if len(keys) < 2:
        return None
    ordered = np.sort(keys)
    equal = ordered[1:] == ordered[:-1]
    if not bool(equal.any()):
        return None
    repeated = ordered[1:][equal]
    del ordered
    candidate = np.flatnonzero(_members(keys, repeated))
    words, length = docno_words(docno, order.lines(candidate))
    # Same topic, same bytes, same length: a repeat; the first in rank order is kept.
    sort_keys: list[NDArray[Any]] = [candidate, length, *(words[:, i] for i in range(words.shape[1]))]
    by_pair = np.lexsort([*sort_keys, topic[candidate]])
    same = topic[candidate][by_pair[1:]] == topic[candidate][by_pair[:-1]]
    same &= length[by_pair[1:]] == length[by_pair[:-1]]
    same &= np.all(words[by_pair[1:]] == words[by_pair[:-1]], axis=1)
    repeat = np.zeros(len(candidate), dtype=bool)
    repeat[by_pair[1:]] = same
    if not bool(repeat.any()):
        return None
    keep = np.ones(len(keys), dtype=bool)
    keep[candidate[repeat]] = False
    return keep


def _ideal(
    qrels: TrecQrels, evaluated: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
    """Positive judgments of the evaluated topics, sorted descending within each topic.

    Also the number of judgments of 0 per topic.
    """
    position = np.full(len(qrels.topics), -1, dtype=np.int64)
    position[evaluated] = np.arange(len(evaluated))
    row_q = position[qrels.topic_code]
    zero = np.bincount(row_q[(qrels.rel == 0) & (row_q >= 0)], minlength=len(evaluated)).astype(np.int64)
    mask = (qrels.rel > 0) & (row_q >= 0)
    q, g = row_q[mask], qrels.rel[mask]
    order = np.lexsort((-g, q))
    q, g = q[order], g[order]
    offsets = np.zeros(len(evaluated) + 1, dtype=np.int64)
    np.cumsum(np.bincount(q, minlength=len(evaluated)), out=offsets[1:])
    return offsets, g.astype(np.float64), zero
