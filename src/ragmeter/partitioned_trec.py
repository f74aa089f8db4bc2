"""Large TREC evaluations split by topic across an executor's workers and merged exactly.

1. **Split** (:func:`split_by_topic`): the qrels and the run are read in blocks of raw bytes;
   each line goes to the partition of its topic (a hash of the topic's bytes), with numpy
   over the block — no Python object per line. Partition bytes are shipped as they fill up
   (to Ray's object store), so the driver holds about one block per partition, never the
   file. The SHA-256 of each file is computed on the way (for the provenance).
2. **Evaluate**: each worker reads its partition with ragmeter's own readers and scores it
   with the same matching and kernels as :func:`ragmeter.api.evaluate_trec`.
3. **Merge**: a topic's lines are all in one partition, so per-query values are exactly the
   local ones. They are put back in the qrels' topic order and the aggregates are computed
   from them, as the local evaluation does, so the result is identical bit for bit (a
   count-weighted mean of partition means would differ in the last bits). Warnings are
   merged by adding up their counts and naming the original files.

Anything a partition cannot settle exactly — a malformed file (whose error must name the
original file and line), or bytes the readers split lines or fields on besides newlines
and spaces (see :func:`_check_lines`) — sends the evaluation to
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

import hashlib
import re
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray

from ragmeter.config import RagmeterConfig
from ragmeter.errors import RagmeterError
from ragmeter.executors.base import Executor, Shared
from ragmeter.executors.factory import make_executor
from ragmeter.matching.trec import concat_ranges
from ragmeter.metrics.registry import ResolvedMetric
from ragmeter.metrics.scoring import ScoredMetric
from ragmeter.results import EvalResult

BLOCK_BYTES = 8 << 20
"""Bytes read (and split) at a time."""
FLUSH_BYTES = 32 << 20
"""A partition's bytes are shipped once this many have gathered."""
TOPIC_KEY_BYTES = 32
"""Topics are hashed on their first bytes and their length (equal topics, equal partitions)."""

_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True
_ODD_CONTROL = np.zeros(256, dtype=bool)
_ODD_CONTROL[[0x0B, 0x0C, 0x1C, 0x1D, 0x1E, 0x1F]] = True
_MIX = np.uint64(0x9E3779B97F4A7C15)
_FMIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX_2 = np.uint64(0xC4CEB9FE1A85EC53)


class _NeedsLocal(Exception):
    """A partition cannot reproduce the local evaluation exactly; evaluate in this process."""


@dataclass
class TopicSplit:
    """One file split by topic: per partition, its shipped chunks and line count."""

    chunks: list[list[Shared[bytes]]]
    lines: list[int]
    rows: list[NDArray[np.int64]] = field(default_factory=list)
    """Per partition, the file row (non-blank, non-comment line) of each of its lines (qrels only)."""
    sha256: str = ""


@dataclass
class BlockSplit:
    """Where a block's bytes go: contiguous byte ranges per partition, and its kept lines' partitions."""

    ranges: list[tuple[int, int, int]]
    """``(partition, start, end)`` byte ranges, in file order (blank and comment lines ride along)."""
    line_parts: NDArray[np.int64]
    """The partition of each kept line (not blank, not a ``#`` comment), in file order."""


def split_block(block: bytes, parts: int) -> BlockSplit:
    """Split a block of whole lines (ending with a newline) by topic.

    A line's topic is its first word; its partition is a hash of the word's first
    :data:`TOPIC_KEY_BYTES` bytes and its length, so a topic's lines always share a partition.
    Consecutive lines of one partition (a topic's block, in a usual run) are one byte range.

    >>> block = b"q1 Q0 a 1 1.0 r\\n\\n# note\\n  q1 Q0 b 2 0.5 r\\nq2 Q0 c 1 1.0 r\\n"
    >>> split = split_block(block, 1)
    >>> split.ranges == [(0, 0, len(block))], split.line_parts.tolist()  # 3 kept lines, one range
    (True, [0, 0, 0])
    """
    _check_lines(block)
    buf = np.frombuffer(block, dtype=np.uint8)
    newline = np.flatnonzero(buf == 10)
    starts = np.zeros(len(newline), dtype=np.int64)
    starts[1:] = newline[:-1] + 1
    token = starts.copy()
    indented = np.flatnonzero(_WHITESPACE[buf[starts]])  # blank lines, lines starting with blanks
    if len(indented):
        solid = np.flatnonzero(~_WHITESPACE[buf])
        at = np.searchsorted(solid, starts[indented])
        found = solid[np.minimum(at, len(solid) - 1)] if len(solid) else at
        token[indented] = np.where(at < len(solid), found, len(buf))
    kept = token < newline
    kept[kept] &= buf[token[kept]] != ord("#")
    where = np.flatnonzero(kept)
    if len(where) == 0:
        return BlockSplit([], np.zeros(0, dtype=np.int64))
    line_parts: NDArray[np.int64] = (_topic_hash(buf, token[where]) % np.uint64(parts)).astype(np.int64)
    # Every line (blank and comment lines too) in the partition of the kept line before it.
    owner = np.zeros(len(starts), dtype=np.int64)
    owner[where] = np.arange(len(where))
    np.maximum.accumulate(owner, out=owner)
    part_all = line_parts[owner]
    change = np.flatnonzero(part_all[1:] != part_all[:-1]) + 1
    if len(change) > max(1000, len(starts) // 8):  # interleaved topics: gather each partition's lines
        order = np.argsort(line_parts, kind="stable")
        line_start, line_end = starts[where], newline[where] + 1
        gathered = buf[concat_ranges(line_start[order], line_end[order])].tobytes()
        sizes = np.bincount(line_parts, weights=(line_end - line_start).astype(np.float64), minlength=parts)
        offsets = np.concatenate(([0], np.cumsum(sizes.astype(np.int64)))).tolist()
        ranges = [(p, offsets[p], offsets[p + 1]) for p in range(parts) if offsets[p + 1] > offsets[p]]
        return _Gathered(ranges, line_parts, gathered)
    run_start = np.concatenate(([0], change))
    run_end = np.concatenate((change, [len(starts)]))
    byte_start = starts[run_start]
    byte_start[0] = 0
    byte_end = newline[run_end - 1] + 1
    ranges = list(zip(part_all[run_start].tolist(), byte_start.tolist(), byte_end.tolist(), strict=True))
    return BlockSplit(ranges, line_parts)


@dataclass
class _Gathered(BlockSplit):
    """A :class:`BlockSplit` whose ranges index ``data`` (the lines regrouped by partition), not the block."""

    data: bytes = b""


_KEEP_BYTES = np.array([0] + [((1 << (8 * n)) - 1) << (8 * (8 - n)) for n in range(1, 9)], dtype=np.uint64)
"""``_KEEP_BYTES[n]`` keeps the first ``n`` bytes of a big-endian 8-byte word."""


def _words(buf: NDArray[np.uint8], at: NDArray[np.int64], width: int) -> NDArray[np.uint8]:
    """The ``width`` bytes from each position (zeros past the end of ``buf``)."""
    inside = at <= len(buf) - width
    out = np.zeros((len(at), width), dtype=np.uint8)
    if bool(inside.all()):
        return np.ascontiguousarray(sliding_window_view(buf, width)[at])
    out[inside] = sliding_window_view(buf, width)[at[inside]]
    for row in np.flatnonzero(~inside).tolist():  # the last line or two of the block
        tail = buf[at[row] :]
        out[row, : len(tail)] = tail
    return out


def _fmix(value: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """MurmurHash3's 64-bit finaliser, in place: every input bit reaches every output bit."""
    value ^= value >> np.uint64(33)
    value *= _FMIX_1
    value ^= value >> np.uint64(33)
    value *= _FMIX_2
    value ^= value >> np.uint64(33)
    return value


def _topic_hash(buf: NDArray[np.uint8], token: NDArray[np.int64]) -> NDArray[np.uint64]:
    """A 64-bit hash of each line's first word (its topic), from its first bytes and its length."""
    window = _words(buf, token, 8)
    blank = _WHITESPACE[window]
    short = blank.any(axis=1)
    length = np.where(short, blank.argmax(axis=1), 8).astype(np.int64)
    digest = window.view(">u8")[:, 0].astype(np.uint64) & _KEEP_BYTES[length]
    digest ^= length.astype(np.uint64) * _MIX
    long_ = np.flatnonzero(~short)
    if len(long_):  # topics of 8 bytes or more: their true length, and more of their bytes
        breaks = np.flatnonzero(_WHITESPACE[buf])
        full = breaks[np.searchsorted(breaks, token[long_])] - token[long_]
        wide = _words(buf, token[long_], TOPIC_KEY_BYTES)
        wide[np.arange(TOPIC_KEY_BYTES) >= full[:, None]] = 0
        extra = full.astype(np.uint64) * _MIX
        for column in wide.view(">u8").astype(np.uint64).T:
            extra = _fmix(extra ^ column)
        digest[long_] = extra
    return _fmix(digest)


def _check_lines(block: bytes) -> None:
    """Raise :class:`_NeedsLocal` when the readers could see other lines or words than newlines and blanks give.

    The exact reader splits lines with ``str.splitlines()`` and fields with ``str.split()``,
    which also break at a lone carriage return, vertical tab, form feed, ``\\x1c``-``\\x1f``
    and some non-ASCII characters (U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
    U+202F, U+205F, U+3000). Files with them are evaluated in one piece.
    """
    if len(block.translate(None, b"\x0b\x0c\x1c\x1d\x1e\x1f")) != len(block):
        raise _NeedsLocal("control characters the readers split on")
    returns = block.count(b"\r")
    if returns and returns != block.count(b"\r\n"):
        raise _NeedsLocal("a carriage return that is not part of a line end")
    if block.isascii():
        return
    buf = np.frombuffer(block, dtype=np.uint8)
    b0, b1, b2 = buf[:-2], buf[1:-1], buf[2:]
    odd = (b0 == 0xC2) & ((b1 == 0x85) | (b1 == 0xA0))
    odd |= (b0 == 0xE1) & (b1 == 0x9A) & (b2 == 0x80)
    odd |= (b0 == 0xE2) & (b1 == 0x80) & (((b2 >= 0x80) & (b2 <= 0x8A)) | np.isin(b2, (0xA8, 0xA9, 0xAF)))
    odd |= (b0 == 0xE2) & (b1 == 0x81) & (b2 == 0x9F)
    odd |= (b0 == 0xE3) & (b1 == 0x80) & (b2 == 0x80)
    if bool(odd.any()):
        raise _NeedsLocal("Unicode whitespace")


class _Sink:
    """Per partition: bytes gathered, shipped in chunks of :data:`FLUSH_BYTES`."""

    def __init__(self, parts: int, share: Callable[[bytes], Shared[bytes]]) -> None:
        self.share = share
        self.pending: list[list[bytes]] = [[] for _ in range(parts)]
        self.size = [0] * parts
        self.chunks: list[list[Shared[bytes]]] = [[] for _ in range(parts)]

    def add(self, part: int, data: bytes) -> None:
        self.pending[part].append(data)
        self.size[part] += len(data)
        if self.size[part] >= FLUSH_BYTES:
            self.flush(part)

    def flush(self, part: int) -> None:
        if self.pending[part]:
            self.chunks[part].append(self.share(b"".join(self.pending[part])))
            self.pending[part], self.size[part] = [], 0


def _blocks(path: Path, block_bytes: int, digest: Any) -> Iterator[bytes]:
    """The file in blocks of whole lines (the last one given its newline); ``digest`` sees every byte."""
    carry = b""
    with path.open("rb") as handle:
        while True:
            chunk = handle.read(block_bytes)
            digest.update(chunk)
            if not chunk:
                if carry:
                    yield carry if carry.endswith(b"\n") else carry + b"\n"
                return
            data = carry + chunk if carry else chunk
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            block, carry = (data, b"") if cut == len(data) else (data[:cut], data[cut:])
            yield block


def split_by_topic(
    path: str | Path,
    parts: int,
    share: Callable[[bytes], Shared[bytes]],
    *,
    keep_rows: bool = False,
    block_bytes: int = BLOCK_BYTES,
) -> TopicSplit:
    """Split a qrels or run file into ``parts`` partitions by topic, streaming (see the module docstring).

    ``share`` ships a partition's bytes (``executor.share``); ``keep_rows`` records each
    line's row in the whole file (the qrels: topic order is the order of first judgments).
    """
    digest = hashlib.sha256()
    sink = _Sink(parts, share)
    lines = [0] * parts
    rows: list[list[NDArray[np.int64]]] = [[] for _ in range(parts)]
    row_base = 0

    def take(block: bytes, split: BlockSplit) -> None:
        nonlocal row_base
        source = split.data if isinstance(split, _Gathered) else block
        for p, a, b in split.ranges:
            sink.add(p, source[a:b])
        counts = np.bincount(split.line_parts, minlength=parts)
        for p in np.flatnonzero(counts).tolist():
            lines[p] += int(counts[p])
        if keep_rows and len(split.line_parts):
            order = np.argsort(split.line_parts, kind="stable")
            bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
            for p in np.flatnonzero(counts).tolist():
                rows[p].append(row_base + order[bounds[p] : bounds[p + 1]])
        row_base += len(split.line_parts)

    # Blocks are split on two threads (numpy lets go of the GIL) and taken in file order.
    threads = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ragmeter-split")
    queued: deque[tuple[bytes, Future[BlockSplit]]] = deque()
    try:
        for block in _blocks(Path(path), block_bytes, digest):
            queued.append((block, threads.submit(split_block, block, parts)))
            while len(queued) > 2:
                done_block, future = queued.popleft()
                take(done_block, future.result())
        while queued:
            done_block, future = queued.popleft()
            take(done_block, future.result())
    finally:
        threads.shutdown(wait=True, cancel_futures=True)
    for p in range(parts):
        sink.flush(p)
    joined = [np.concatenate(r) if r else np.zeros(0, dtype=np.int64) for r in rows] if keep_rows else []
    return TopicSplit(sink.chunks, lines, joined, digest.hexdigest())


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
    from ragmeter.io.trec import read_qrels, read_run
    from ragmeter.matching.trec import match_trec
    from ragmeter.metrics.inputs import ScoringInput
    from ragmeter.metrics.scoring import score_metrics

    with tempfile.TemporaryDirectory(prefix="ragmeter-trec-") as tmp:
        qrels_path, run_path = Path(tmp) / "part.qrels", Path(tmp) / "part.run"
        _write(task.qrels, qrels_path)
        _write(task.run, run_path)
        try:
            qrels = read_qrels(qrels_path)
            run = read_run(run_path, qrels=qrels)
            matched = match_trec(qrels, run, complete=task.complete)
            inp = ScoringInput.from_table(matched.table, relevance_level=task.relevance_level)
            scored = score_metrics(task.metrics, inp, default_k=task.default_k, trec_compat=task.trec_compat)
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
            ScoredMetric(
                first.name, first.requested, values, scored, first.k, skip_reason, reasons, first.percentile
            )
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
    from ragmeter.api import evaluate_trec

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
    from ragmeter.api import (
        DEFAULT_TREC_METRICS,
        _assemble,
        _base_provenance,
        _check_k,
        _check_level,
        _resolve_all,
        _settings,
    )

    def local(reason: str) -> tuple[EvalResult, str]:
        return _evaluate_here(qrels, run, options, reason)

    _check_k(options.k)
    _check_level(options.relevance_level)
    cfg, cfg_path = _settings(options.config)
    resolved = _resolve_all(options.metrics or cfg.metrics.retrieval.metrics or list(DEFAULT_TREC_METRICS))
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
    except _NeedsLocal as exc:
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
    provenance = _base_provenance(
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
    merged = _assemble(
        [query_ids[i] for i in order.tolist()],
        _merge_scored(done, order),
        warnings=merge_warnings([r.warnings for r in done]),
        provenance=provenance,
        n_missing_output=sum(r.n_missing for r in done) if options.complete else 0,
    )
    return merged, len(tasks)
