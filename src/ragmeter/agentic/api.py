"""``evaluate_agentic``: load → validate → dedup → gains → score → aggregate."""

from __future__ import annotations

import math
import operator
import platform
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ragmeter import __version__
from ragmeter.agentic.aggregate import aggregate_scores
from ragmeter.agentic.clusters import cluster_trace
from ragmeter.agentic.columnar import ColumnarRun, collector_paused, columnar_applies, evaluate_columnar
from ragmeter.agentic.columnar_exports import evaluate_loaded_columnar, temporary_folder
from ragmeter.agentic.gains import GainLabeller, LabellerMemo, resolve_gains
from ragmeter.agentic.labels import Label, label_from_record, load_labels
from ragmeter.agentic.load import counted, iter_traces
from ragmeter.agentic.metrics import GOOD_THRESHOLD, ITERATIONS_CAP
from ragmeter.agentic.prepare import PreparedTrace, prepare_trace
from ragmeter.agentic.result import AgenticResult
from ragmeter.agentic.scoring import TraceScore, score_trace, unscorable
from ragmeter.agentic.trace import Trace
from ragmeter.agentic.validate import KnownLength, LoadedTrace, unique_ids, validate_trace
from ragmeter.dedup.keys import KeyMaker
from ragmeter.dedup.policy import DedupPolicy
from ragmeter.dedup.two_phase import find_boilerplate
from ragmeter.errors import ConfigError
from ragmeter.io.records import file_sha256

TracesLike = str | Path | Sequence[Trace | Mapping[str, Any]]
LabelsLike = str | Path | Sequence[Mapping[str, Any]] | None


StepProgress = Callable[[str, int, int], None]
"""``(step, done, total)``: the steps between reading a trace file and scoring it (:data:`IMPORTING`, :data:`PREPARING`, :data:`KEYING`)."""
IMPORTING = "importing traces"
"""The records of an export (OTLP, OpenAI Agents, LangSmith) converted into traces."""
PREPARING = "preparing traces"
"""Each trace of known number built and validated, then keyed (record-at-a-time) or written for the fast path."""
KEYING = "keying URLs and texts"
"""The fast path's dedup keys, once per distinct URL, title and snippet (counted in strings)."""


def _one_step(step_progress: StepProgress | None, step: str) -> Callable[[int, int], None] | None:
    """``step_progress`` for one ``step``, as a ``(done, total)`` callback."""
    if step_progress is None:
        return None
    return lambda done, total: step_progress(step, done, total)


def _load(
    traces: TracesLike,
    trace_format: str,
    search_tools: Sequence[str] | None,
    read_progress: Callable[[int, int], None] | None = None,
    step_progress: StepProgress | None = None,
) -> tuple[Iterator[LoadedTrace], dict[str, Any]]:
    if isinstance(traces, (str, Path)):
        path = Path(traces)
        stream, fmt = iter_traces(
            path,
            trace_format=trace_format,
            search_tools=search_tools,
            read_progress=read_progress,
            import_progress=_one_step(step_progress, IMPORTING),
        )
        return stream, {"path": str(path), "sha256": file_sha256(path), "format": fmt}
    items = []
    for index, item in enumerate(traces):
        where = f"traces[{index}]"
        trace = item if isinstance(item, Trace) else validate_trace(item, where=where)
        items.append(LoadedTrace(trace, where))
    return KnownLength(unique_ids(items), len(items)), {
        "path": None,
        "format": "native",
        "n_traces": len(items),
    }


def _labels(labels: LabelsLike, keys: KeyMaker) -> tuple[dict[str, list[Label]], dict[str, Any] | None]:
    if labels is None:
        return {}, None
    if isinstance(labels, (str, Path)):
        path = Path(labels)
        return load_labels(path, keys=keys), {"path": str(path), "sha256": file_sha256(path)}
    by_trace: dict[str, list[Label]] = {}
    for index, value in enumerate(labels):
        label = label_from_record(value, where=f"labels[{index}]", keys=keys)
        by_trace.setdefault(label.trace_id, []).append(label)
    return by_trace, {"path": None}


def _first(items: Sequence[str], what: str) -> str:
    return f"{len(items)} {what} (first: {items[0]})"


def _warnings(
    prepared: Sequence[PreparedTrace], scores: Sequence[TraceScore], labels: Mapping[str, list[Label]]
) -> list[str]:
    out = []
    not_captured = [
        f"{p.trace_id!r} at {p.where}: {p.reason}" for p in prepared if p.status == "results_not_captured"
    ]
    if not_captured:
        out.append(_first(not_captured, "traces left out: results not captured"))
    no_search = [f"{p.trace_id!r} at {p.where}" for p in prepared if p.status == "no_search"]
    if no_search:
        out.append(_first(no_search, "traces left out: no search in the last turn"))
    known = {p.trace_id for p in prepared}
    stray = [lab.where for tid, labs in labels.items() if tid not in known for lab in labs]
    if stray:
        out.append(_first(stray, "labels name a trace_id that is not in the traces"))
    unscored = [f"{s.trace_id!r}: {s.unscored[0].key} ({s.unscored[0].reason})" for s in scores if s.unscored]
    if unscored:
        total = sum(s.n_unscored for s in scores)
        out.append(
            f"{total} unique results in {len(unscored)} traces have no gain and are unscored; gain metrics "
            f"of those traces are left out from the first such iteration (first: {unscored[0]})"
        )
    unmatched = sum(s.unmatched_labels for s in scores)
    if unmatched:
        out.append(f"{unmatched} labels do not match any result of their trace (ignored)")
    conflicts = sum(s.copies_with_other_gain for s in scores)
    if conflicts:
        out.append(
            f"{conflicts} duplicate copies carry a gain different from their cluster's; the first gain counts, once"
        )
    return out


def _reference(
    traces: TracesLike,
    labels: LabelsLike,
    trace_format: str,
    search_tools: Sequence[str] | None,
    keys: KeyMaker,
    policy: DedupPolicy,
    labeller: GainLabeller | None,
    good_threshold: float,
    details: bool,
    progress: Callable[[int, int], None] | None,
    read_progress: Callable[[int, int], None] | None,
    step_progress: StepProgress | None,
) -> tuple[
    list[PreparedTrace], list[TraceScore], dict[str, Any], dict[str, list[Label]], dict[str, Any] | None, int
]:
    """The record-at-a-time path: load → validate → prepare → dedup → gains → score, trace by trace."""
    loaded, trace_source = _load(traces, trace_format, search_tools, read_progress, step_progress)
    labels_by_trace, labels_source = _labels(labels, keys)
    prepared = _prepared(loaded, keys, step_progress)
    boilerplate = find_boilerplate((k for p in prepared for k in p.keys), min_urls=policy.boilerplate_urls)
    memo: LabellerMemo = {}
    scores: list[TraceScore] = []
    for p in prepared:
        if progress is not None:
            progress(len(scores), len(prepared))
        if p.status != "scored":
            scores.append(unscorable(p))
            continue
        clusters = cluster_trace(p, policy=policy, boilerplate=boilerplate)
        gains = resolve_gains(
            p, clusters, labels=labels_by_trace.get(p.trace_id, ()), labeller=labeller, memo=memo
        )
        scores.append(
            score_trace(p, clusters, gains, good_threshold=good_threshold, keys=keys, details=details)
        )
    if progress is not None:
        progress(len(scores), len(prepared))
    return prepared, scores, trace_source, labels_by_trace, labels_source, len(boilerplate)


def _prepared(
    loaded: Iterator[LoadedTrace], keys: KeyMaker, step_progress: StepProgress | None
) -> list[PreparedTrace]:
    """Each trace prepared (streams: the models are dropped), with progress when their number is known."""
    total = operator.length_hint(loaded)
    reported = counted(loaded, total, _one_step(step_progress, PREPARING) if total else None)
    return [prepare_trace(t.trace, where=t.where, keys=keys) for t in reported]


def evaluate_agentic(
    traces: TracesLike,
    labels: LabelsLike = None,
    *,
    trace_format: str = "auto",
    search_tools: Sequence[str] | None = None,
    labeller: GainLabeller | None = None,
    policy: DedupPolicy | None = None,
    good_threshold: float = GOOD_THRESHOLD,
    details: bool = False,
    progress: Callable[[int, int], None] | None = None,
    engine: Literal["auto", "reference"] = "auto",
    read_progress: Callable[[int, int], None] | None = None,
    step_progress: StepProgress | None = None,
) -> AgenticResult:
    """Score agentic search traces with the Retrieved Good Gain metrics.

    ``traces``: a trace file (native JSONL, OTLP JSON, OpenAI Agents SDK spans or LangSmith
    runs; ``trace_format`` ``auto`` detects which) or a list of native trace objects.
    ``labels``: a labels file or list of label objects (gains by trace id and result key).
    ``labeller`` labels the unique results that still lack a gain, once per (task, cluster).
    ``details`` adds the dedup record of every result to each trace. ``progress(done, total)``
    is called as traces are scored (with a labeller, each may wait on the judge);
    ``read_progress(bytes read, file size)`` as a trace file is read (native JSON Lines are also
    validated as they are read); ``step_progress(step, done, total)`` as an export's records are
    converted (:data:`IMPORTING`), as traces of known number are prepared (:data:`PREPARING`)
    and as the fast path keys the distinct URLs and texts (:data:`KEYING`). ``engine="auto"`` reads a
    native JSON Lines file on the columnar fast path (:mod:`ragmeter.agentic.columnar`) when no
    labeller and no ``details`` are asked for, and other traces (an export, a JSON document, a
    list) after building them one by one (:mod:`ragmeter.agentic.columnar_exports`);
    ``"reference"`` always takes the record-at-a-time path. Both give the same result.

    >>> result = evaluate_agentic([{"trace_id": "t1", "turns": [{"iterations": [
    ...     {"searches": [{"query": "q", "results": [{"url": "https://a.org/x", "gain": 3},
    ...                                              {"url": "http://www.a.org/x/", "gain": 3}]}]}]}]}])
    >>> result.aggregate.averages_at_n["CG"], result.aggregate.averages_at_n["SRR"]
    (3.0, 0.5)
    >>> result.aggregate.redundancy.by_key["url"]
    1
    """
    if isinstance(good_threshold, bool) or not math.isfinite(good_threshold) or not 0 < good_threshold <= 4:
        raise ConfigError(f"good_threshold must be a number in (0, 4], got {good_threshold!r}")
    policy = policy or DedupPolicy()
    keys = KeyMaker(policy)
    fast = engine == "auto" and labeller is None and not details
    run: ColumnarRun | None = None
    if fast and isinstance(traces, (str, Path)) and columnar_applies(Path(traces), trace_format):
        labels_by_trace, labels_source = _labels(labels, keys)
        run = evaluate_columnar(
            Path(traces),
            labels_by_trace,
            policy=policy,
            good_threshold=good_threshold,
            progress=progress,
            read_progress=read_progress,
            keys_progress=_one_step(step_progress, KEYING),
        )
        trace_source = {"path": str(Path(traces)), "sha256": run.sha256, "format": "native"}
    elif fast and (folder := temporary_folder()) is not None:  # an export, a JSON document, a list
        with folder:  # the traces, built one by one, are written there for the fast path
            loaded, trace_source = _load(traces, trace_format, search_tools, read_progress, step_progress)
            labels_by_trace, labels_source = _labels(labels, keys)
            run = evaluate_loaded_columnar(
                loaded,
                labels_by_trace,
                folder=Path(folder.name),
                policy=policy,
                good_threshold=good_threshold,
                progress=progress,
                prepare_progress=_one_step(step_progress, PREPARING),
                keys_progress=_one_step(step_progress, KEYING),
            )
    else:
        prepared, scores, trace_source, labels_by_trace, labels_source, n_boilerplate = _reference(
            traces,
            labels,
            trace_format,
            search_tools,
            keys,
            policy,
            labeller,
            good_threshold,
            details,
            progress,
            read_progress,
            step_progress,
        )
    if run is not None:
        prepared, scores, n_boilerplate = run.prepared, run.scores, run.boilerplate_keys

    provenance = {
        "ragmeter_version": __version__,
        "python": platform.python_version(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "traces": trace_source,
        "labels": labels_source,
        "labeller": None if labeller is None else labeller.name,
        "settings": {
            "good_threshold": good_threshold,
            "iterations_cap": ITERATIONS_CAP,
            "search_tools": list(search_tools) if search_tools else None,
            "dedup": policy.as_dict(),
            "dedup_fingerprint": policy.fingerprint(),
            "boilerplate_content_keys": n_boilerplate,
        },
    }
    with collector_paused():  # ten thousand traces' series: no cycle to collect
        return AgenticResult(
            aggregate=aggregate_scores(scores),
            traces=scores,
            warnings=_warnings(prepared, scores, labels_by_trace),
            provenance=provenance,
        )
