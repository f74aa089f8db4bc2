"""Splitting a TREC qrels or run file by topic into partitions, streaming, without a Python object per line.

The file is read in blocks of raw bytes; each line goes to the partition of its topic (a hash
of the topic's bytes), with numpy over the block. Partition bytes are handed to ``share`` as
they fill up (an executor ships them to its object store), so the caller holds about one
block per partition, never the file. The SHA-256 of the file is computed on the way.

Used by :mod:`ragmeter.partitioned_trec`. Lines end at ``\\n`` and words at ASCII blanks, exactly
where the readers (:mod:`ragmeter.io.trec_exact`) cut them; a compressed file raises
:class:`NotSplittable` (it is evaluated in one piece).

>>> parts = split_block(b"q1 0 a 1\\nq2 0 b 1\\nq1 0 c 0\\n", 4).line_parts.tolist()
>>> parts[0] == parts[2], len(parts)
(True, 3)
"""

from __future__ import annotations

import hashlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import NDArray

from ragmeter.io.docnos import concat_ranges
from ragmeter.io.text_files import compression_of

if TYPE_CHECKING:
    from ragmeter.executors.base import Shared

BLOCK_BYTES = 8 << 20
"""Bytes read (and split) at a time."""
FLUSH_BYTES = 32 << 20
"""A partition's bytes are shipped once this many have gathered."""
TOPIC_KEY_BYTES = 32
"""Topics are hashed on their first bytes and their length (equal topics, equal partitions)."""

_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[[9, 10, 11, 12, 13, 32]] = True
_MIX = np.uint64(0x9E3779B97F4A7C15)
_FMIX_1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX_2 = np.uint64(0xC4CEB9FE1A85EC53)


class NotSplittable(Exception):
    """A file whose split could not reproduce what the readers make of the whole file (the message says why)."""


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
    """The file in blocks of whole lines (the last one given its newline); ``digest`` sees every byte.

    A leading UTF-8 byte-order mark is dropped (the readers drop it too).
    """
    carry = b""
    with path.open("rb") as handle:
        first = True
        while True:
            chunk = handle.read(block_bytes)
            digest.update(chunk)
            if not chunk:
                if carry:
                    yield carry if carry.endswith(b"\n") else carry + b"\n"
                return
            data = carry + chunk if carry else chunk
            if first:
                data, first = data.removeprefix(b"\xef\xbb\xbf"), False
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
    if compression_of(Path(path)) is not None:
        raise NotSplittable("a compressed file")
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
