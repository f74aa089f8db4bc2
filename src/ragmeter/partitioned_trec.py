"""Large TREC evaluations split by topic across an executor's workers and merged exactly.

1. **Split** (:func:`~ragmeter.io.trec_split.split_by_topic`): the qrels and the run are read
   in blocks of raw bytes; each line goes to the partition of its topic (a hash of the topic's
   bytes), with numpy over the block — no Python object per line. Partition bytes are shipped
   as they fill up (to Ray's object store), so the driver holds about one block per partition,
   never the file. The SHA-256 of each file is computed on the way (for the provenance).
2. **Evaluate**: each worker reads its partition with ragmeter's own readers and scores it
   with the same matching and kernels as :func:`ragmeter.api.evaluate_trec`.
3. **Merge**: a topic's lines are all in one partition, so per-query values are exactly the
   local ones. They are put back in the qrels' topic order and the aggregates are computed
   from them, as the local evaluation does, so the result is identical bit for bit (a
   count-weighted mean of partition means would differ in the last bits). Warnings are
   merged by adding up their counts and naming the original files.

Anything a partition cannot settle exactly — a malformed file (whose error must name the
original file and line), or a compressed one — sends the evaluation to
:func:`ragmeter.api.evaluate_trec` in this process instead.

>>> import tempfile, pathlib
>>> from ragmeter.executors.local import LocalExecutor
>>> from ragmeter.api import evaluate_trec
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "qrels").write_text("q1 0 a 1\\nq2 0 b 1\\nq3 0 c 2\\n")
>>> _ = (d / "run").write_text("q1 Q0 a 1 2.0 r\\nq2 Q0 x 1 1.0 r\\nq2 Q0 b 2 0.5 r\\nq3 Q0 c 1 1.0 r\\n")
>>> split = evaluate_trec_partitioned(d / "qrels", d / "run", executor=LocalExecutor(), partitions=2)
>>> split.per_query == evaluate_trec(d / "qrels", d / "run").per_query
True
>>> import shutil; shutil.rmtree(d)
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ragmeter.api import evaluate_trec
from ragmeter.config import RagmeterConfig
from ragmeter.errors import RagmeterError
from ragmeter.evaluation.arguments import (
    DEFAULT_TREC_METRICS,
    check_k,
    check_level,
    k_source_of,
    load_settings,
    resolve_metrics,
)
from ragmeter.evaluation.assemble import assemble_result, base_provenance
from ragmeter.executors.base import Executor, Shared
from ragmeter.executors.factory import make_executor
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.io.trec_split import NotSplittable, split_by_topic
from ragmeter.matching.trec import match_trec
from ragmeter.metrics.inputs import ScoringInput
from ragmeter.metrics.registry import ResolvedMetric
from ragmeter.metrics.scoring import ScoredMetric, score_metrics
from ragmeter.results import EvalResult


@dataclass(frozen=True)
class PartitionTask:
    """One partition to evaluate on a worker (never without qrels lines or run lines)."""

    qrels: list[Shared[bytes]]
    run: list[Shared[bytes]]
    qrels_name: str
    run_name: str
    metrics: list[ResolvedMetric]
    relevance_level: float | None
    default_k: int
    complete: bool
    trec_compat: bool
    k_source: str = "the default"


@dataclass
class PartitionResult:
    """What a worker sends back: per-query values in its order and where each topic first appears."""

    query_ids: list[str]
    first_rows: NDArray[np.int64]
    scored: list[ScoredMetric]
    warnings: list[str]
    n_missing: int
    error: RagmeterError | None = None


def _write(chunks: Sequence[Shared[bytes]], path: Path) -> None:
    with path.open("wb") as handle:
        for chunk in chunks:
            handle.write(chunk.get())


def evaluate_partition(task: PartitionTask) -> PartitionResult:
    """Read, match and score one partition (on a worker); a user error comes back as a value."""
    with tempfile.TemporaryDirectory(prefix="ragmeter-trec-") as tmp:
        qrels_path, run_path = Path(tmp) / "part.qrels", Path(tmp) / "part.run"
        _write(task.qrels, qrels_path)
        _write(task.run, run_path)
        try:
            qrels = read_qrels(qrels_path, trec_compat=task.trec_compat)
            run = read_run(run_path, qrels=qrels)
            matched = match_trec(qrels, run, complete=task.complete)
            inp = ScoringInput.from_table(matched.table, relevance_level=task.relevance_level)
            scored = score_metrics(
                task.metrics,
                inp,
                default_k=task.default_k,
                trec_compat=task.trec_compat,
                k_source=task.k_source,
            )
        except RagmeterError as exc:
            return PartitionResult([], np.zeros(0, np.int64), [], [], 0, error=exc)
        names = {str(qrels_path): task.qrels_name, str(run_path): task.run_name}
        warnings = [_rename(w, names) for w in matched.warnings]
    first = np.zeros(len(qrels.topics), dtype=np.int64)
    if len(qrels.topics):
        codes, at = np.unique(qrels.topic_code, return_index=True)
        first[codes] = at
    index = {topic: i for i, topic in enumerate(qrels.topics)}
    query_ids = list(matched.table.query_ids)
    rows = first[[index[q] for q in query_ids]] if query_ids else np.zeros(0, np.int64)
    return PartitionResult(query_ids, rows, scored, warnings, len(matched.missing_topics))


def _rename(text: str, names: dict[str, str]) -> str:
    for temporary, original in names.items():
        text = text.replace(temporary, original)
    return text


_COUNTED = re.compile(r"^(?:(?P<prefix>.*?): )?(?P<count>\d+) (?P<rest>.*)$", re.DOTALL)


def merge_warnings(parts: Sequence[Sequence[str]]) -> list[str]:
    """The warnings of the whole evaluation from its partitions' warnings.

    ``"<file>: <n> <what>"`` and ``"<n> <what>"`` warnings of the same kind are one warning
    with the counts added up; the order is the order every partition emits them in.

    >>> merge_warnings([["r: 2 lines x", "1 topic y"], ["r: 3 lines x"], ["1 topic y"]])
    ['r: 5 lines x', '2 topic y']
    """
    totals: dict[tuple[str | None, str], int | None] = {}
    sequences: list[list[tuple[str | None, str]]] = []
    for warnings in parts:
        sequence = []
        for text in warnings:
            found = _COUNTED.match(text)
            key: tuple[str | None, str]
            if found is None:
                key = (None, "\0" + text)
                totals[key] = None
            else:
                key = (found.group("prefix"), found.group("rest"))
                totals[key] = (totals.get(key) or 0) + int(found.group("count"))
            if key not in sequence:
                sequence.append(key)
        sequences.append(sequence)
    out = []
    for key in _merge_orders(sequences):
        prefix, rest = key
        count = totals[key]
        if count is None:
            out.append(rest[1:])
        else:
            out.append(f"{prefix}: {count} {rest}" if prefix is not None else f"{count} {rest}")
    return out


def _merge_orders(sequences: Sequence[Sequence[Any]]) -> list[Any]:
    """One order consistent with every sequence (each a subsequence of one order); ties by first seen."""
    seen: list[Any] = []
    after: dict[Any, set[Any]] = {}
    for sequence in sequences:
        for i, key in enumerate(sequence):
            if key not in after:
                after[key] = set()
                seen.append(key)
            after[key].update(sequence[:i])
    out: list[Any] = []
    placed: set[Any] = set()
    while len(out) < len(seen):
        ready = [k for k in seen if k not in placed and after[k] <= placed]
        key = ready[0] if ready else next(k for k in seen if k not in placed)  # a cycle cannot happen
        out.append(key)
        placed.add(key)
    return out


def _merge_scored(results: Sequence[PartitionResult], order: NDArray[np.int64]) -> list[ScoredMetric]:
    merged = []
    for j, first in enumerate(results[0].scored):
        values = np.concatenate([r.scored[j].values for r in results])[order]
        scored = np.concatenate([r.scored[j].scored for r in results])[order]
        reasons: tuple[str, ...] | None = None
        skip_reason = first.skip_reason
        if first.reasons is not None:
            flat = [reason for r in results for reason in (r.scored[j].reasons or ())]
            reasons = tuple(flat[i] for i in order.tolist())
            counts: dict[str, int] = {}
            for reason in reasons:  # as score_metrics counts them: the most common, first seen wins ties
                if reason:
                    counts[reason] = counts.get(reason, 0) + 1
            skip_reason = max(counts, key=lambda r: counts[r]) if counts else ""
        merged.append(
            dataclasses.replace(first, values=values, scored=scored, skip_reason=skip_reason, reasons=reasons)
        )
    return merged


def _groups(qrels_lines: Sequence[int], run_lines: Sequence[int]) -> list[list[int]]:
    """Partitions to evaluate together, as lists of partition numbers.

    A partition with only judgments (or only results) joins the first one with both, as the
    readers refuse an empty file.

    >>> _groups([3, 0, 2, 1], [5, 4, 0, 1])
    [[0, 1, 2], [3]]
    """
    both = [p for p in range(len(qrels_lines)) if qrels_lines[p] and run_lines[p]]
    if not both:
        return []
    groups = {p: [p] for p in both}
    for p in range(len(qrels_lines)):
        if p not in groups and (qrels_lines[p] or run_lines[p]):
            groups[both[0]].append(p)
    return [sorted(groups[p]) for p in both]


def evaluate_trec_partitioned(
    qrels: str | Path,
    run: str | Path,
    *,
    metrics: Sequence[str] | None = None,
    k: int | None = None,
    relevance_level: float | None = None,
    complete: bool = False,
    trec_compat: bool = False,
    config: RagmeterConfig | str | Path | None = None,
    executor: Executor | str = "ray",
    partitions: int | None = None,
) -> EvalResult:
    """:func:`ragmeter.api.evaluate_trec`, with the topics split across ``executor``'s workers.

    Same arguments and the same result, bit for bit (timings aside). ``executor`` is an
    executor or its kind (``"ray"``: started here, stopped after); ``partitions`` defaults
    to the executor's CPUs. With the local executor and no ``partitions`` nothing is split.

    On a remote executor the provenance gains ``executor``: its :meth:`~Executor.describe`,
    the number of ``partitions`` evaluated on workers and, when the files were evaluated in
    one piece here instead, ``in_one_piece`` (why). A local executor adds nothing, so the
    result is exactly :func:`~ragmeter.api.evaluate_trec`'s.
    """
    options = _TrecOptions(metrics, k, relevance_level, complete, trec_compat, config)
    owned = isinstance(executor, str)
    runner = make_executor(executor) if isinstance(executor, str) else executor
    try:
        spread: int | str
        if not runner.remote and partitions is None:
            result, spread = _evaluate_here(qrels, run, options, "not split")
        else:
            result, spread = _evaluate_split(qrels, run, options, runner=runner, partitions=partitions)
        if runner.remote:
            where: dict[str, Any] = {
                **runner.describe(),
                "partitions": spread if isinstance(spread, int) else 0,
            }
            if isinstance(spread, str):
                where["in_one_piece"] = spread
            result.provenance["executor"] = where
        return result
    finally:
        if owned:
            runner.close()


@dataclass(frozen=True)
class _TrecOptions:
    """The keyword arguments of :func:`ragmeter.api.evaluate_trec`, passed on as one."""

    metrics: Sequence[str] | None
    k: int | None
    relevance_level: float | None
    complete: bool
    trec_compat: bool
    config: RagmeterConfig | str | Path | None


def _evaluate_here(
    qrels: str | Path, run: str | Path, options: _TrecOptions, reason: str
) -> tuple[EvalResult, str]:
    """:func:`ragmeter.api.evaluate_trec` in this process; ``reason`` says why."""
    return evaluate_trec(qrels, run, **vars(options)), reason


def _evaluate_split(
    qrels: str | Path,
    run: str | Path,
    options: _TrecOptions,
    *,
    runner: Executor,
    partitions: int | None,
) -> tuple[EvalResult, int | str]:
    """Split, evaluate on ``runner``, merge: the result and the number of partitions evaluated.

    Anything a partition cannot settle exactly is evaluated in this process instead; the
    second value is then the reason (a string).
    """

    def local(reason: str) -> tuple[EvalResult, str]:
        return _evaluate_here(qrels, run, options, reason)

    check_k(options.k)
    check_level(options.relevance_level)
    cfg, cfg_path = load_settings(options.config)
    resolved = resolve_metrics(options.metrics or cfg.metrics.retrieval.metrics or list(DEFAULT_TREC_METRICS))
    runner.start()  # before the clock: elapsed_seconds is the evaluation's, as for evaluate_trec
    started = time.perf_counter()
    level = (
        options.relevance_level
        if options.relevance_level is not None
        else cfg.metrics.retrieval.relevance_level
    )
    default_k = options.k if options.k is not None else cfg.metrics.retrieval.default_k
    parts = max(1, partitions if partitions is not None else runner.cpus())
    if not Path(qrels).is_file() or not Path(run).is_file():
        return local("not a file")  # the reader's own "file not found" / "is a directory"
    try:
        split_q = split_by_topic(qrels, parts, runner.share, keep_rows=True)
        split_r = split_by_topic(run, parts, runner.share)
    except NotSplittable as exc:
        return local(str(exc))
    if sum(split_q.lines) == 0 or sum(split_r.lines) == 0:
        return local("an empty file")  # the reader's "file is empty"
    groups = _groups(split_q.lines, split_r.lines)
    if not groups:
        return local("no topic has both judgments and results")
    tasks = [
        PartitionTask(
            [c for p in group for c in split_q.chunks[p]],
            [c for p in group for c in split_r.chunks[p]],
            str(Path(qrels)),
            str(Path(run)),
            resolved,
            level,
            default_k,
            options.complete,
            options.trec_compat,
            k_source_of(options.k, cfg),
        )
        for group in groups
    ]
    results: list[PartitionResult | None] = [None] * len(tasks)
    for index, result in runner.map_unordered(evaluate_partition, tasks):
        results[index] = result
    done = [r for r in results if r is not None]
    if len(done) != len(tasks) or any(r.error is not None for r in done):
        return local("an input error")  # the error, named as the whole files name it
    rows = np.concatenate(
        [
            np.concatenate([split_q.rows[p] for p in group])[r.first_rows]
            for group, r in zip(groups, done, strict=True)
        ]
    )
    order = np.argsort(rows, kind="stable")
    query_ids = [q for r in done for q in r.query_ids]
    provenance = base_provenance(
        cfg_path,
        k=options.k,
        default_k=default_k,
        relevance_level=level,
        complete=options.complete,
        trec_compat=options.trec_compat,
    ) | {
        "inputs": {
            "qrels": {"path": str(qrels), "sha256": split_q.sha256},
            "run": {"path": str(run), "sha256": split_r.sha256},
        },
        "elapsed_seconds": round(time.perf_counter() - started, 6),
    }
    merged = assemble_result(
        [query_ids[i] for i in order.tolist()],
        _merge_scored(done, order),
        warnings=merge_warnings([r.warnings for r in done]),
        provenance=provenance,
        n_missing_output=sum(r.n_missing for r in done) if options.complete else 0,
    )
    return merged, len(tasks)
