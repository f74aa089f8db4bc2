"""Many titles and snippets normalised and coded at once: equal normalised texts get equal codes.

:func:`normalised_codes` is :func:`~ragmeter.dedup.content_key.normalise_text` over a list, with
the batch normalisation of :mod:`~ragmeter.dedup.text_batch`, but it keeps the normalised texts
as one UTF-8 buffer (a :class:`TextTable`) instead of a Python string each: the code of each text
(``pyarrow``'s dictionary encoding of the buffer), and per distinct normalised text its length in
characters and its count of spaces (with one space between words: the word count less one). For
a chunk of plain texts these come from the normalised bytes with numpy (a plain text is ASCII:
one byte, one character); a chunk with any other text counts text by text. :func:`prefix_codes`
codes the first characters of chosen distinct texts the same way.

Texts are encoded with ``surrogatepass``, so two texts have equal bytes exactly when they are
equal, even with a lone surrogate in them.

>>> coded = normalised_codes(["The END.", "the end", "", "Café  au lait"])
>>> coded.codes.tolist(), list(coded.distinct)
([0, 0, 1, 2], ['the end', '', 'café au lait'])
>>> coded.lengths.tolist(), coded.spaces.tolist()
([7, 0, 12], [1, 0, 2])
>>> prefix_codes(coded, np.array([0, 2]), 3).tolist()
[0, 2]
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ragmeter.dedup.text_batch import CHUNK_CHARS, chunk_bounds, is_plain, normalise_chunk, normalised_plain

Ints = npt.NDArray[np.int64]

_ENCODING = ("utf-8", "surrogatepass")

BINARY_LIMIT = 1 << 31
"""Buffers this long or longer need arrow's ``large_binary`` (64-bit offsets)."""


class TextTable(Sequence[str]):
    """Texts held as one UTF-8 buffer in which each text is followed by a NUL; each is decoded when read.

    ``offsets[i]`` is where text ``i`` starts and ``offsets[i + 1] - 1`` where its NUL is. (The
    NUL lets a chunk's normalised buffer, where a NUL follows each text, be used as it is; a
    text may hold a NUL of its own.)

    >>> table = TextTable("ab\\0\\0cdé\\0".encode(), np.array([0, 3, 4, 9]))
    >>> len(table), table[0], table[1], table[-1], list(table)
    (3, 'ab', '', 'cdé', ['ab', '', 'cdé'])
    """

    def __init__(self, data: bytes | bytearray | memoryview, offsets: Ints) -> None:
        self._data = memoryview(data)
        self._offsets = offsets
        self._bounds = offsets.tolist()

    @property
    def offsets(self) -> Ints:
        """Where each text starts in the buffer, and where the last one's NUL ends."""
        return self._offsets

    def __len__(self) -> int:
        return len(self._bounds) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        i = range(len(self))[index]  # negative indices count from the end; out of range raises
        return str(self._data[self._bounds[i] : self._bounds[i + 1] - 1], *_ENCODING)

    def __iter__(self) -> Iterator[str]:
        return map(self.__getitem__, range(len(self)))

    def arrow(self) -> pa.Array:
        """Each text and its NUL as an arrow array of bytes (see :func:`_binary`)."""
        return _binary(self._data, self._offsets)

    @classmethod
    def of(cls, array: pa.Array) -> TextTable:
        """The texts of an arrow array of bytes, each with its NUL (``binary`` or ``large_binary``; not copied)."""
        _, offsets, data = array.buffers()
        width = np.int32 if array.type == pa.binary() else np.int64
        bounds = np.frombuffer(offsets, width)[array.offset : array.offset + len(array) + 1].astype(np.int64)
        return cls(memoryview(data), bounds)


def _binary(data: bytes | bytearray | memoryview, offsets: Ints, *, large: bool = False) -> pa.Array:
    """An arrow array of the bytes ``data[offsets[i]:offsets[i + 1]]`` (no copy of ``data``).

    32-bit offsets unless ``large`` (or they do not fit): arrow hashes ``binary`` several times
    faster than ``large_binary``.
    """
    if large or offsets[-1] >= BINARY_LIMIT:
        kind, bounds = pa.large_binary(), offsets.astype(np.int64)
    else:
        kind, bounds = pa.binary(), offsets.astype(np.int32)
    return pa.Array.from_buffers(kind, len(offsets) - 1, [None, pa.py_buffer(bounds), pa.py_buffer(data)])


@dataclass(frozen=True)
class NormalisedCodes:
    """Per text, the code of its normalised text; per code, that text, its length and its spaces."""

    codes: Ints
    distinct: TextTable
    lengths: Ints
    spaces: Ints


@dataclass(frozen=True)
class _Chunk:
    """A chunk's normalised texts, each followed by a NUL, and per text its length and spaces."""

    data: bytes | bytearray
    offsets: Ints
    lengths: Ints
    spaces: Ints


def normalised_codes(texts: list[str], *, chunk_chars: int = CHUNK_CHARS) -> NormalisedCodes:
    """Code the :func:`~ragmeter.dedup.content_key.normalise_text` of each text; ``texts`` is emptied.

    Codes are numbered in order of first appearance. Each text is replaced by ``""`` once its
    chunk (:func:`~ragmeter.dedup.text_batch.chunk_bounds`) is done, so the originals are
    freed as the normalised buffers grow.

    >>> texts = ["A b", "a, B!", "...", "b a"]
    >>> coded = normalised_codes(texts, chunk_chars=2)
    >>> coded.codes.tolist(), list(coded.distinct), texts
    ([0, 0, 1, 2], ['a b', '', 'b a'], ['', '', '', ''])
    """
    chunks = []
    for start, stop in chunk_bounds(texts, chunk_chars):
        chunks.append(_chunk(texts[start:stop]))
        texts[start:stop] = itertools.repeat("", stop - start)
    large = any(chunk.offsets[-1] >= BINARY_LIMIT for chunk in chunks)
    every = pa.chunked_array([_binary(c.data, c.offsets, large=large) for c in chunks], _KINDS[large])
    encoded = pc.dictionary_encode(every)
    codes = np.concatenate([np.zeros(0, np.int64), *(c.indices.to_numpy() for c in encoded.chunks)])
    codes = codes.astype(np.int64)
    firsts = _firsts(codes)
    distinct = encoded.chunks[0].dictionary if encoded.num_chunks else pa.array([], _KINDS[large])
    return NormalisedCodes(
        codes=codes,
        distinct=TextTable.of(distinct),
        lengths=np.concatenate([np.zeros(0, np.int64), *(c.lengths for c in chunks)])[firsts],
        spaces=np.concatenate([np.zeros(0, np.int64), *(c.spaces for c in chunks)])[firsts],
    )


_KINDS = {False: pa.binary(), True: pa.large_binary()}


def _firsts(codes: Ints) -> Ints:
    """Where each code first occurs (codes numbered in order of first appearance)."""
    new = np.empty(len(codes), bool)
    new[:1] = True
    new[1:] = codes[1:] > np.maximum.accumulate(codes[:-1])
    return np.flatnonzero(new)


def _chunk(texts: list[str]) -> _Chunk:
    """One chunk's normalised texts: a plain chunk from its bytes, any other text by text."""
    joined = "\x00".join(["", *texts, ""])
    if is_plain(joined):
        normalised = normalised_plain(joined)  # a NUL, then each text and a NUL
        ends = np.flatnonzero(np.frombuffer(normalised, np.uint8) == 0)
        if len(ends) == len(texts) + 1:  # else a text holds a NUL
            spaces = np.add.reduceat(
                np.frombuffer(normalised, np.uint8) == ord(" "), ends[:-1], dtype=np.int64
            )
            return _Chunk(normalised, ends + 1, np.diff(ends) - 1, spaces)
    out = normalise_chunk(texts)
    data = "".join([text + "\x00" for text in out]).encode(*_ENCODING)
    sizes = [len(text.encode(*_ENCODING)) + 1 for text in out]
    return _Chunk(
        data,
        np.cumsum([0, *sizes], dtype=np.int64),
        np.fromiter(map(len, out), np.int64, len(out)),
        np.fromiter(map(str.count, out, itertools.repeat(" ")), np.int64, len(out)),
    )


def prefix_codes(coded: NormalisedCodes, rows: Ints, prefix_chars: int) -> Ints:
    """Per distinct text of ``coded`` in ``rows``: a code of its first ``prefix_chars`` characters.

    Every text in ``rows`` must be at least ``prefix_chars`` characters long. Equal prefixes get
    equal codes, different ones different codes: the first ``prefix_chars`` bytes of each text
    are coded at once (of an ASCII text they are its characters); the prefixes of the other texts
    are cut text by text.

    >>> coded = normalised_codes(["abc", "abd", "xyz", "ééa", "ééb", "abé"])
    >>> prefix_codes(coded, np.array([0, 1, 2, 3, 4, 5]), 2).tolist()
    [0, 0, 1, 3, 3, 0]
    """
    if np.any(coded.lengths[rows] < prefix_chars):
        raise ValueError(f"prefix_codes: a text in rows is shorter than {prefix_chars} characters")
    table = coded.distinct
    cut = pc.binary_slice(table.arrow(), 0, prefix_chars)
    other = rows[coded.lengths[rows] != np.diff(table.offsets)[rows] - 1]  # not ASCII
    cut_others = [table[i][:prefix_chars].encode(*_ENCODING) for i in other.tolist()]
    both = pa.concat_arrays([cut, pa.array(cut_others, cut.type)])
    codes: Ints = pc.dictionary_encode(both).indices.to_numpy().astype(np.int64)
    codes[other] = codes[len(table) :]
    return codes[rows]
