"""Docnos (and other Arrow string columns) as numpy sees them: hashes, byte words, keys.

A TREC run holds millions of docnos. Hashing them into pyarrow dictionaries
(``dictionary_encode``, ``index_in``, ``count_distinct``) is slow for that many
distinct strings, so ragmeter hashes the bytes itself, 8 at a time, straight
from the Arrow buffers; a (topic, docno) pair then has one 64-bit key. Equal
strings always have equal hashes; the converse is only almost always true, so
whoever relies on equal keys confirms on the bytes (:func:`docno_words`).

pyarrow's own ``to_numpy`` and ``pa.array`` import pandas when it is installed
(a third of a second); the helpers here build and read Arrow buffers directly.

>>> import numpy as np
>>> names = string_array(["doc-1", "doc-22", "doc-1"])
>>> h = docno_hashes(names)
>>> bool(h[0] == h[2]), bool(h[0] == h[1])
(True, False)
>>> words, lengths = docno_words(names, np.array([1, 0]))
>>> lengths.tolist(), bool(words[0, 0] > words[1, 0])   # "doc-22" > "doc-1" byte by byte
([6, 5], True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

try:
    from ragmeter import _trec_scan
except ImportError:  # built without a C compiler: numpy hashes
    _trec_scan = None  # type: ignore[assignment]

Docnos: TypeAlias = "pa.Array | pa.ChunkedArray"
"""Docnos stay Arrow strings (chunked for large files: no copy into one buffer)."""

_MIX = np.uint64(0x9E3779B97F4A7C15)
_BATCH = 1 << 20
_TOPIC_MIX = np.uint64(0xD6E8FEB86659FD93)
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


def numpy_view(values: pa.Array | pa.ChunkedArray | list[pa.Array], dtype: type[np.generic]) -> NDArray[Any]:
    """A null-free fixed-width Arrow array (or chunks) as numpy (a view for one chunk, else a copy)."""
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else values
    if isinstance(chunks, pa.Array):
        chunks = [chunks]
    width = np.dtype(dtype).itemsize
    parts = []
    for chunk in chunks:
        if chunk.null_count:
            raise ValueError("numpy_view needs an array without nulls")
        if len(chunk):
            parts.append(np.frombuffer(chunk.buffers()[1], dtype, len(chunk), chunk.offset * width))
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.zeros(0, dtype)


def string_array(values: Sequence[str]) -> pa.Array:
    """Python strings as an Arrow string array (built from its buffers, without ``pa.array``)."""
    encoded = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    kind, width = (pa.string(), np.int32) if offsets[-1] < 2**31 else (pa.large_string(), np.int64)
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(kind, len(encoded), [None, pa.py_buffer(offsets.astype(width)), data])


def chunk_list(docno: Docnos) -> list[pa.Array]:
    """The chunks of a (possibly chunked) array."""
    return list(docno.chunks) if isinstance(docno, pa.ChunkedArray) else [docno]


def string_bounds(chunk: pa.Array) -> NDArray[np.signedinteger[Any]]:
    """The ``len + 1`` offsets of a string/binary chunk into its data buffer."""
    wide = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
    dtype = np.int64 if wide else np.int32
    width = 8 if wide else 4
    return np.frombuffer(chunk.buffers()[1], dtype, len(chunk) + 1, chunk.offset * width)


def strings_at(chunk: pa.Array, rows: NDArray[np.signedinteger[Any]]) -> list[str]:
    """Some strings of a string chunk as Python strings (without ``take``, which may import pandas).

    >>> strings_at(string_array(["a", "bc", "d"]), np.array([2, 1]))
    ['d', 'bc']
    """
    bounds = string_bounds(chunk)
    data = chunk.buffers()[2]
    raw = memoryview(data) if data is not None else memoryview(b"")
    return [
        str(raw[a:b], "utf-8") for a, b in zip(bounds[rows].tolist(), bounds[rows + 1].tolist(), strict=True)
    ]


def _data(chunk: pa.Array) -> NDArray[np.uint8]:
    data = chunk.buffers()[2]
    return np.zeros(0, np.uint8) if data is None else np.frombuffer(data, np.uint8)


def docno_words(
    docno: Docnos, rows: NDArray[np.int64], width: int = 0
) -> tuple[NDArray[np.uint64], NDArray[np.int64]]:
    """The bytes of some docnos as big-endian 64-bit words, zero-padded, and their lengths.

    Row ``i`` is ``words[i]`` (at least ``width`` bytes' worth): comparing rows
    word by word, then by length, orders docnos byte by byte, as ``strcmp`` does.
    """
    chunks = chunk_list(docno)
    sizes = np.array([len(chunk) for chunk in chunks], dtype=np.int64)
    first = np.concatenate(([0], np.cumsum(sizes)))
    which = np.searchsorted(first, rows, side="right") - 1
    by_chunk = np.argsort(which, kind="stable")
    groups = np.split(by_chunk, np.cumsum(np.bincount(which, minlength=len(chunks)))[:-1])
    starts = np.zeros(len(rows), dtype=np.int64)
    lengths = np.zeros(len(rows), dtype=np.int64)
    for chunk, at, base in zip(chunks, groups, first[:-1], strict=True):
        if len(at):
            bounds = string_bounds(chunk)
            local = rows[at] - base
            starts[at] = bounds[local]
            lengths[at] = bounds[local + 1] - bounds[local]
    width = -(-max(width, int(lengths.max(initial=0)), 1) // 8) * 8
    words = np.zeros((len(rows), width // 8), dtype=np.uint64)
    column = np.arange(width, dtype=np.int64)
    for chunk, at in zip(chunks, groups, strict=True):
        data = _data(chunk)
        for batch in np.array_split(at, max(1, len(at) * width // (1 << 22))):
            if len(batch) == 0 or len(data) == 0:
                continue
            index = starts[batch, None] + column
            np.minimum(index, len(data) - 1, out=index)
            block = data[index]
            block[column >= lengths[batch, None]] = 0
            words[batch] = block.view(">u8")
    return words, lengths


def docno_hashes(docno: Docnos, *, into: NDArray[np.uint64] | None = None) -> NDArray[np.uint64]:
    """A 64-bit hash of each docno's bytes (equal docnos, equal hashes).

    With ``into``, the hashes are XORed into that array (no second array).
    """
    out = np.zeros(len(docno), dtype=np.uint64) if into is None else into
    done = 0
    for chunk in chunk_list(docno):
        if len(chunk):
            _xor_chunk_hashes(chunk, out[done : done + len(chunk)])
            done += len(chunk)
    return out


def _xor_chunk_hashes(chunk: pa.Array, out: NDArray[np.uint64]) -> None:
    """XOR the hashes of a chunk's strings into ``out``: in C when it was built (one pass), else numpy."""
    if _trec_scan is None:
        out ^= _chunk_hashes(chunk)
        return
    data = chunk.buffers()[2]
    wide = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
    _trec_scan.xor_docno_hashes(string_bounds(chunk), wide, b"" if data is None else data, out)


def _chunk_hashes(chunk: pa.Array) -> NDArray[np.uint64]:
    n = len(chunk)
    bounds = string_bounds(chunk)
    lo, hi = int(bounds[0]), int(bounds[-1])
    length = np.diff(bounds)
    longest = int(length.max())
    # Zero padding after the data, so every 8-byte read below stays inside the buffer.
    padded = np.zeros(hi - lo + longest + 8, dtype=np.uint8)
    if hi > lo:
        padded[: hi - lo] = _data(chunk)[lo:hi]
    # Every 8-byte window of the data, read as one little-endian integer.
    windows = np.ndarray(shape=(hi - lo + longest + 1,), dtype="<u8", buffer=padded, strides=(1,))
    h = length.astype(np.uint64)
    h *= _MIX
    shortest = int(length.min())
    starts = bounds[:-1] - lo
    # One mixing round per 8 bytes of the docno itself (not of the longest docno).
    for at in range(0, longest, 8):
        if shortest == longest:  # docnos of one length (usual): a strided view, no gather
            word = windows[at : at + n * longest : longest]
            if longest - at < 8:  # keep the docno's own bytes only
                word = word & (_ALL_ONES >> np.uint64(64 - 8 * (longest - at)))
            h = _mix(h, word)
            continue
        rows = None if at < shortest else np.flatnonzero(length > at)
        size = length if rows is None else length[rows]
        word = windows[(starts if rows is None else starts[rows]) + at]
        shift = np.clip(64 + 8 * at - 8 * size.astype(np.int64), 0, 64).view(np.uint64)
        word <<= shift  # keep the docno's own bytes only
        word >>= shift
        if rows is None:
            h = _mix(h, word)
        else:
            h[rows] = _mix(h[rows], word)
    return h


def _mix(h: NDArray[np.uint64], word: NDArray[np.uint64]) -> NDArray[np.uint64]:
    h ^= word
    h *= _MIX
    h ^= h >> np.uint64(29)
    return h


def topic_keys(topics: Sequence[str]) -> NDArray[np.uint64]:
    """The topic's part of a (topic, docno) key, per topic: XOR in :func:`docno_hashes`."""
    keys = docno_hashes(string_array(topics))
    keys *= _TOPIC_MIX
    keys ^= keys >> np.uint64(31)
    return keys


def pair_keys(
    docno: Docnos, topic_key: NDArray[np.uint64], codes: NDArray[np.integer[Any]]
) -> NDArray[np.uint64]:
    """One 64-bit key per (topic, docno) line.

    ``topic_key`` is :func:`topic_keys` of the topics, ``codes`` each line's index
    into it. Equal pairs have equal keys (a hash, so not conversely).
    """
    return docno_hashes(docno, into=topic_key[codes])


def paired_words(
    a: Docnos, a_rows: NDArray[np.int64], b: Docnos, b_rows: NDArray[np.signedinteger[Any]]
) -> tuple[NDArray[np.uint64], NDArray[np.int64], NDArray[np.uint64], NDArray[np.int64]]:
    """:func:`docno_words` of two sets of docnos, at one width."""
    a_words, a_length = docno_words(a, a_rows)
    b_words, b_length = docno_words(b, b_rows.astype(np.int64, copy=False), a_words.shape[1] * 8)
    if b_words.shape[1] > a_words.shape[1]:
        a_words, a_length = docno_words(a, a_rows, b_words.shape[1] * 8)
    return a_words, a_length, b_words, b_length


class KeyIndex:
    """An open-addressing hash table of uint64 keys, built and probed with numpy.

    Used to look up a run's (topic, docno) keys among the judgments' keys: with
    the table at most 1/8 full, nearly every probe ends at its first slot. A
    byte per 16 keys' worth of slots, small enough to stay in the CPU's cache,
    turns away 95% of absent keys before they reach the table.

    >>> index = KeyIndex(np.array([7, 3, 9], dtype=np.uint64))
    >>> [a.tolist() for a in index.find(np.array([9, 1, 7, 7], dtype=np.uint64))]
    [[0, 2, 3], [2, 0, 0]]
    """

    def __init__(self, keys: NDArray[np.uint64]) -> None:
        self.keys = keys
        self.bits = max(4, int(len(keys) * 8 - 1).bit_length())
        self.mask = (1 << self.bits) - 1
        self.slots: NDArray[np.signedinteger[Any]] = np.full(
            1 << self.bits, -1, dtype=np.int32 if len(keys) < 2**31 else np.int64
        )
        self.filter = np.zeros(2 << self.bits, dtype=bool)
        self.filter[self._spread(keys)] = True
        # Two equal keys would make a lookup ambiguous: then find() sorts instead.
        ordered = np.sort(keys)
        self.distinct = not bool(np.any(ordered[1:] == ordered[:-1]))
        pending = np.arange(len(keys), dtype=np.int64) if self.distinct else np.zeros(0, dtype=np.int64)
        at = self._home(keys[pending])
        while len(pending):  # linear probing, all pending keys at once
            free = self.slots[at] == -1
            self.slots[at[free]] = pending[free]
            placed = np.zeros(len(pending), dtype=bool)
            placed[free] = self.slots[at[free]] == pending[free]
            pending, at = pending[~placed], (at[~placed] + 1) & self.mask

    def _home(self, keys: NDArray[np.uint64]) -> NDArray[np.int64]:
        home = keys * _MIX
        home >>= np.uint64(64 - self.bits)
        return home.view(np.int64)

    def _spread(self, keys: NDArray[np.uint64]) -> NDArray[np.int64]:
        """Positions in :attr:`filter` (the home slot is their top :attr:`bits` bits)."""
        spread = keys * _MIX
        spread >>= np.uint64(63 - self.bits)
        return spread.view(np.int64)

    def find(self, keys: NDArray[np.uint64]) -> tuple[NDArray[np.int64], NDArray[np.signedinteger[Any]]]:
        """Positions in ``keys`` whose key is in the table, and the index of that key."""
        if not self.distinct:
            return self._find_by_sorting(keys)
        found_at: list[NDArray[np.int64]] = []
        found_entry: list[NDArray[np.signedinteger[Any]]] = []
        for start in range(0, len(keys), _BATCH):  # batches: small temporaries
            batch = keys[start : start + _BATCH]
            spread = self._spread(batch)
            active = np.flatnonzero(self.filter[spread])  # the rest are surely not in the table
            at = spread[active] >> 1
            entry = self.slots[at]
            going = entry >= 0  # the rest hit an empty slot: not in the table
            active, at, entry = active[going], at[going], entry[going]
            while len(active):
                hit = self.keys[entry] == batch[active]
                found_at.append(active[hit] + start)
                found_entry.append(entry[hit])
                active, at = active[~hit], (at[~hit] + 1) & self.mask
                entry = self.slots[at]
                going = entry >= 0
                active, at, entry = active[going], at[going], entry[going]
        if not found_at:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        positions, entries = np.concatenate(found_at), np.concatenate(found_entry)
        if len(found_at) == 1:  # one batch, every key found at its first probe: in order already
            return positions, entries
        order = np.argsort(positions)
        return positions[order], entries[order]

    def _find_by_sorting(
        self, keys: NDArray[np.uint64]
    ) -> tuple[NDArray[np.int64], NDArray[np.signedinteger[Any]]]:
        # Every (position, table key) pair with equal keys; the caller confirms which are real.
        by_key = np.argsort(self.keys, kind="stable")
        ordered = self.keys[by_key]
        lo = np.searchsorted(ordered, keys, side="left")
        hi = np.searchsorted(ordered, keys, side="right")
        count = hi - lo
        positions = np.repeat(np.arange(len(keys), dtype=np.int64), count)
        starts = np.repeat(lo - np.concatenate(([0], np.cumsum(count)[:-1])), count)
        entries = by_key[np.arange(len(positions), dtype=np.int64) + starts]
        return positions, entries


def concat_ranges(starts: NDArray[np.int64], ends: NDArray[np.int64]) -> NDArray[np.int64]:
    """``concatenate([arange(s, e) for s, e in zip(starts, ends)])`` without the Python loop."""
    lengths = ends - starts
    before = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1], out=before[1:])
    out: NDArray[np.int64] = np.arange(int(lengths.sum()), dtype=np.int64)
    out += np.repeat(starts - before, lengths)
    return out
