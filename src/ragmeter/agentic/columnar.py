"""The columnar fast path of agentic evaluation, for native JSON Lines trace files.

The reference path (:mod:`ragmeter.agentic.load` → :mod:`~ragmeter.agentic.prepare` →
:mod:`~ragmeter.dedup.two_phase` → :mod:`~ragmeter.agentic.gains` →
:mod:`~ragmeter.agentic.scoring`) handles one result at a time in Python objects. This path reads
the file into columns (:mod:`~ragmeter.agentic.columnar_read`), computes dedup keys once per
distinct URL and text (:mod:`~ragmeter.agentic.columnar_keys`), deduplicates every trace at once
on integer codes (:mod:`ragmeter.dedup.vector_dedup`) and scores from the arrays
(:mod:`~ragmeter.agentic.columnar_score`). Traces it does not score itself — those with labels
or known good results, and those where a dedup veto may have fired — are scored by the
reference (:mod:`~ragmeter.agentic.columnar_reference`), and every bad line is refused with the
reference's own message. The outputs are the reference's, value for value; a property test
compares the two paths on random traces.

:func:`ragmeter.agentic.evaluate_agentic` takes this path when it applies
(:func:`columnar_applies`, no labeller, no ``details``).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragmeter.agentic.columnar_keys import run_keys
from ragmeter.agentic.columnar_read import read_columns
from ragmeter.agentic.columnar_reference import reference_scores
from ragmeter.agentic.columnar_score import fast_scores
from ragmeter.agentic.labels import Label
from ragmeter.agentic.load import first_record
from ragmeter.agentic.prepare import PreparedTrace
from ragmeter.agentic.scoring import TraceScore, unscorable
from ragmeter.dedup.policy import DedupPolicy
from ragmeter.dedup.vector_dedup import deduplicate_coded
from ragmeter.errors import InputError
from ragmeter.io.text_files import compression_of


def columnar_applies(path: Path, trace_format: str) -> bool:
    """Whether ``path`` is native JSON Lines: its first non-blank line alone is one native trace object.

    That line is read by the reference reader (:func:`~ragmeter.agentic.load.first_record`, strict
    JSON). Anything else — another format, one JSON document, a compressed file (read whole by the
    reference), a file that cannot be read or whose first line is refused — is left to the
    reference reader, which also gives the errors.
    """
    if trace_format not in ("auto", "native") or compression_of(path) is not None:
        return False
    try:
        first = first_record(path)
    except InputError:
        return False
    if first is None:
        return False
    value = first.value
    return isinstance(value, dict) and (
        trace_format == "native" or ("turns" in value and "trace_id" in value)
    )


@dataclass(frozen=True)
class ColumnarRun:
    """What the fast path found: per trace (in file order) its facts and score, and run-wide facts."""

    prepared: list[PreparedTrace]
    scores: list[TraceScore]
    sha256: str
    boilerplate_keys: int


def evaluate_columnar(
    path: Path,
    labels: Mapping[str, Sequence[Label]],
    *,
    policy: DedupPolicy,
    good_threshold: float,
    progress: Callable[[int, int], None] | None = None,
    read_progress: Callable[[int, int], None] | None = None,
    keys_progress: Callable[[int, int], None] | None = None,
) -> ColumnarRun:
    """Read, deduplicate and score a native JSON Lines trace file (see the module docstring).

    ``progress(done, total)`` hears of the traces once read (none scored) and once all are scored;
    ``read_progress(bytes read, file size)`` of the reading, every few MB; ``keys_progress(done,
    total)`` of the distinct URLs and texts keyed (:func:`run_keys`).
    """
    with collector_paused():
        return _evaluate_columnar(
            path, labels, policy, good_threshold, progress, read_progress, keys_progress
        )


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off inside, as it was after.

    The fast path makes millions of objects, none of them in a reference cycle; the collector
    would walk them again and again for nothing (0.1-0.2 s of a million results).

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _evaluate_columnar(
    path: Path,
    labels: Mapping[str, Sequence[Label]],
    policy: DedupPolicy,
    good_threshold: float,
    progress: Callable[[int, int], None] | None,
    read_progress: Callable[[int, int], None] | None,
    keys_progress: Callable[[int, int], None] | None,
) -> ColumnarRun:
    cols = read_columns(path, read_progress)
    keys = run_keys(cols, policy, keys_progress)
    if progress is not None:
        progress(0, len(cols.trace_ids))
    outcome = deduplicate_coded(keys.coded, prefix_chars=policy.prefix_chars)
    to_reference = set(outcome.conflicts.tolist())
    prepared = []
    fast: list[int] = []
    for t, tid in enumerate(cols.trace_ids):
        prepared.append(
            PreparedTrace(
                trace_id=tid,
                where=cols.wheres[t],
                task=None,
                status=cols.statuses[t],  # type: ignore[arg-type]
                reason=cols.reasons[t],
                iteration_sizes=tuple(cols.iteration_sizes[t]),
                results=(),
                keys=(),
                good_results=None,
                dropped_iterations=cols.dropped_iterations[t],
                earlier_turns=cols.earlier_turns[t],
            )
        )
        if cols.statuses[t] != "scored":
            continue
        if cols.has_good_results[t] or tid in labels:
            to_reference.add(t)
        elif t not in to_reference:
            fast.append(t)
    scored = fast_scores(cols, keys, outcome, fast, good_threshold=good_threshold)
    slow = sorted(to_reference)
    referenced = reference_scores(
        path,
        [cols.spans[t] for t in slow],
        labels=labels,
        policy=policy,
        boilerplate=keys.boilerplate,
        good_threshold=good_threshold,
    )
    scored.update(zip(slow, referenced, strict=True))
    scores = [scored[t] if t in scored else unscorable(p) for t, p in enumerate(prepared)]
    if progress is not None:
        progress(len(scores), len(scores))
    return ColumnarRun(prepared, scores, cols.sha256, len(keys.boilerplate))
