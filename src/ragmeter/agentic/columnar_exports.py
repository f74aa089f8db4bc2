"""Trace files the fast reader does not take directly, on the columnar fast path all the same.

An export (OTLP, OpenAI Agents, LangSmith), a native JSON document or a compressed file is read
and its traces built and validated one at a time as on the record-at-a-time path
(:func:`~ragmeter.agentic.load.iter_traces`); each validated trace is written as one native JSON
line to a temporary file, which :func:`~ragmeter.agentic.columnar.evaluate_columnar` then
scores. Each trace's place is then the export's own (``otel.jsonl:3``, not the temporary
file's line). The result is the reference path's, value for value: the traces written are the
ones it would score, and the fast path equals the reference on native traces (a test compares
the two engines on every export format).
"""

from __future__ import annotations

import dataclasses
import operator
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from ragmeter.agentic.columnar import ColumnarRun, evaluate_columnar
from ragmeter.agentic.labels import Label
from ragmeter.agentic.load import counted
from ragmeter.agentic.validate import LoadedTrace
from ragmeter.dedup.policy import DedupPolicy


def evaluate_loaded_columnar(
    loaded: Iterator[LoadedTrace],
    labels: Mapping[str, Sequence[Label]],
    *,
    folder: Path,
    policy: DedupPolicy,
    good_threshold: float,
    progress: Callable[[int, int], None] | None = None,
    prepare_progress: Callable[[int, int], None] | None = None,
    keys_progress: Callable[[int, int], None] | None = None,
) -> ColumnarRun:
    """Score ``loaded`` (validated traces, each with its place) on the columnar fast path.

    The native file is written in ``folder`` (:func:`temporary_folder`'s, which removes it).
    ``prepare_progress(done, total)`` hears of the traces written, when their number is known
    (``operator.length_hint``); ``progress`` of the scoring and ``keys_progress`` of the keys,
    as :func:`evaluate_columnar` says.
    """
    total = operator.length_hint(loaded)
    wheres: list[str] = []
    native = folder / "traces.jsonl"
    with native.open("wb") as out:
        for trace in counted(loaded, total, prepare_progress if total else None):
            out.write(trace.trace.model_dump_json(exclude_none=True).encode() + b"\n")
            wheres.append(trace.where)
    run = evaluate_columnar(
        native,
        labels,
        policy=policy,
        good_threshold=good_threshold,
        progress=progress,
        keys_progress=keys_progress,
    )
    return ColumnarRun(
        [dataclasses.replace(p, where=w) for p, w in zip(run.prepared, wheres, strict=True)],
        [s.model_copy(update={"where": w}) for s, w in zip(run.scores, wheres, strict=True)],
        run.sha256,
        run.boilerplate_keys,
    )


def temporary_folder() -> tempfile.TemporaryDirectory[str] | None:
    """A new temporary folder (removed when its ``with`` block ends), or ``None`` when none can be made.

    Then the record-at-a-time path is taken.

    >>> with temporary_folder() as folder:
    ...     Path(folder).is_dir()
    True
    """
    try:
        return tempfile.TemporaryDirectory(prefix="ragmeter-traces-")
    except OSError:  # no usable temporary folder, or one that cannot be written to
        return None
