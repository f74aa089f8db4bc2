"""The reference path for single traces of the columnar fast path: its errors and its scores.

The fast path hands a line to the reference reader whenever it is not sure of it
(:func:`reference_trace`), so a bad line gets the reference's own one-line error; and it scores
with the reference the few traces it does not score itself (:func:`reference_scores`): those with
labels or known good results, and those where a dedup veto may have fired.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ragmeter.agentic.clusters import cluster_trace
from ragmeter.agentic.gains import resolve_gains
from ragmeter.agentic.labels import Label
from ragmeter.agentic.load import decode_line, native_trace
from ragmeter.agentic.prepare import prepare_trace
from ragmeter.agentic.scoring import TraceScore, score_trace
from ragmeter.agentic.trace import Trace
from ragmeter.dedup.keys import KeyMaker
from ragmeter.dedup.policy import DedupPolicy


def reference_trace(path: Path, lineno: int, raw: bytes) -> Trace | None:
    """Line ``lineno`` of ``path`` (its bytes ``raw``) read as the reference reader reads it.

    The steps of :mod:`ragmeter.agentic.load`'s native stream, the same functions: so the two
    paths accept and refuse the same lines, with the same messages.

    ``None`` for a blank line; an :class:`InputError` naming the line and field when it is bad.
    """
    line = decode_line(path, lineno, raw)
    if not line.strip():
        return None
    return native_trace(path, lineno, line).trace


def refuse_results(path: Path, lineno: int, raw: bytes) -> None:
    """Raise the reference's error for a line holding a result without any field."""
    trace = reference_trace(path, lineno, raw)
    if trace is not None:
        prepare_trace(trace, where=f"{path}:{lineno}", keys=KeyMaker())
    raise RuntimeError(f"{path}:{lineno}: the reference reader accepted a line the fast reader refused")


def reference_scores(
    path: Path,
    spans: Iterable[tuple[int, int, int]],
    *,
    labels: Mapping[str, Sequence[Label]],
    policy: DedupPolicy,
    boilerplate: frozenset[bytes],
    good_threshold: float,
) -> list[TraceScore]:
    """Score the traces on the given lines (number, byte offset, length) with the reference path."""
    keys = KeyMaker(policy)
    scores = []
    with path.open("rb") as handle:
        for lineno, offset, length in spans:
            handle.seek(offset)
            trace = reference_trace(path, lineno, handle.read(length))
            if trace is None:
                raise RuntimeError(f"{path}:{lineno}: a trace line read as blank the second time")
            prepared = prepare_trace(trace, where=f"{path}:{lineno}", keys=keys)
            clusters = cluster_trace(prepared, policy=policy, boilerplate=boilerplate)
            gains = resolve_gains(prepared, clusters, labels=labels.get(prepared.trace_id, ()))
            scores.append(score_trace(prepared, clusters, gains, good_threshold=good_threshold, keys=keys))
    return scores
