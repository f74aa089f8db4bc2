"""Many titles and snippets normalised and coded at once: equal normalised texts get equal codes.

:func:`normalised_codes` is :func:`~ragmeter.dedup.content_key.normalise_text` over a list, done
in place by the batch normalisation of :mod:`~ragmeter.dedup.text_batch`, which also gives the
code of each text (codes numbered in order of first appearance) and, per distinct normalised
text, its length in characters and its count of spaces (one space between words: the word count
less one). For a chunk of plain texts the lengths and spaces come from the chunk's normalised
bytes with numpy (a plain text is ASCII: one byte, one character); a chunk with any other text
counts text by text.

>>> texts = ["The END.", "the end", "", "Café  au lait"]
>>> coded = normalised_codes(texts)
>>> texts, coded.codes.tolist(), coded.distinct
(['the end', 'the end', '', 'café au lait'], [0, 0, 1, 2], ['the end', '', 'café au lait'])
>>> coded.lengths.tolist(), coded.spaces.tolist()
([7, 0, 12], [1, 0, 2])
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter.dedup.text_batch import CHUNK_CHARS, chunk_bounds, is_plain, normalise_chunk, normalised_plain
from ragmeter.dedup.vector_dedup import code_firsts, numpy_ints

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class NormalisedCodes:
    """Per text, the code of its normalised text; per code, that text, its length, its spaces and its prefix.

    ``prefixes``: per code, a code of the first ``prefix_chars`` characters of the text (equal
    prefixes, equal codes), or -1 for a shorter text.
    """

    codes: Ints
    distinct: list[str]
    lengths: Ints
    spaces: Ints
    prefixes: Ints


def normalised_codes(
    texts: list[str], *, prefix_chars: int = 50, chunk_chars: int = CHUNK_CHARS
) -> NormalisedCodes:
    """Replace each text by its :func:`~ragmeter.dedup.content_key.normalise_text`, and code them.

    In place, a chunk at a time (:func:`~ragmeter.dedup.text_batch.chunk_bounds`), so the
    originals are freed as their normalised forms arrive. The prefixes of ``prefix_chars`` (at
    least 1) characters are coded from their bytes (ASCII: one byte a character) as rows of a
    fixed width, without a Python string; a prefix with other characters cannot equal one of
    those, and is coded apart.

    >>> texts = ["A b", "a, B!", "...", "b a"]
    >>> coded = normalised_codes(texts, prefix_chars=2, chunk_chars=2)
    >>> texts, coded.codes.tolist(), coded.distinct, coded.spaces.tolist(), coded.prefixes.tolist()
    (['a b', 'a b', '', 'b a'], [0, 0, 1, 2], ['a b', '', 'b a'], [1, 0, 1], [0, -1, 1])
    """
    lengths, spaces = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    heads = _Heads(prefix_chars)
    for start, stop in chunk_bounds(texts, chunk_chars):
        texts[start:stop], chunk_lengths, chunk_spaces = _chunk(texts[start:stop], heads, start)
        lengths.append(chunk_lengths)
        spaces.append(chunk_spaces)
    index: defaultdict[str, int] = defaultdict(itertools.count().__next__)
    codes = np.fromiter(map(index.__getitem__, texts), np.int64, len(texts))
    firsts = code_firsts(codes)
    return NormalisedCodes(
        codes,
        list(index),
        np.concatenate(lengths)[firsts],
        np.concatenate(spaces)[firsts],
        heads.codes(len(texts))[firsts],
    )


class _Heads:
    """The first ``width`` characters of the long enough texts: ASCII ones as rows of bytes, the others as text."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.rows: list[bytes] = []
        self.where: list[Ints] = []
        self.others: list[str] = []
        self.other_where: list[int] = []

    def add_bytes(self, buffer: npt.NDArray[np.uint8], starts: Ints, where: Ints) -> None:
        """The heads of the texts ``where`` that start at ``starts`` in ``buffer`` (all long enough)."""
        self.rows.append(buffer[starts[:, None] + np.arange(self.width)].tobytes())
        self.where.append(where)

    def add_texts(self, texts: list[str], rows: Ints, at: int) -> None:
        """The heads of ``texts[rows]`` (all long enough), texts ``at`` + ``rows``."""
        ascii_rows = []
        for row in rows.tolist():
            head = texts[row][: self.width]
            if head.isascii():
                self.rows.append(head.encode("ascii"))
                ascii_rows.append(at + row)
            else:
                self.others.append(head)
                self.other_where.append(at + row)
        self.where.append(np.array(ascii_rows, np.int64))

    def codes(self, n: int) -> Ints:
        """Per text of ``n``: the code of its head, or -1."""
        out = np.full(n, -1, np.int64)
        where = np.concatenate([np.zeros(0, np.int64), *self.where])
        if len(where):
            fixed = pa.Array.from_buffers(
                pa.binary(self.width), len(where), [None, pa.py_buffer(b"".join(self.rows))]
            )
            encoded = fixed.dictionary_encode()
            out[where] = numpy_ints(encoded.indices)
            offset = len(encoded.dictionary)
        else:
            offset = 0
        index: defaultdict[str, int] = defaultdict(itertools.count(offset).__next__)
        out[self.other_where] = np.fromiter(map(index.__getitem__, self.others), np.int64, len(self.others))
        return out


def _chunk(texts: list[str], heads: _Heads, at: int) -> tuple[list[str], Ints, Ints]:
    """One chunk's normalised texts, and per text its length and spaces: a plain chunk from its bytes.

    The heads of its long enough texts go to ``heads`` (the chunk's texts are ``at`` + 0, 1, ...).
    """
    joined = "\x00".join(["", *texts, ""])
    if is_plain(joined):
        normalised = normalised_plain(joined)  # a NUL, then each text and a NUL
        buffer = np.frombuffer(normalised, np.uint8)
        ends = np.flatnonzero(buffer == 0)
        if len(ends) == len(texts) + 1:  # else a text holds a NUL
            spaces = np.add.reduceat(buffer == ord(" "), ends[:-1], dtype=np.int64)
            lengths = np.diff(ends) - 1
            long = np.flatnonzero(lengths >= heads.width)
            heads.add_bytes(buffer, ends[long] + 1, at + long)
            return normalised.decode("ascii").split("\x00")[1:-1], lengths, spaces
    out = normalise_chunk(texts)
    n = len(out)
    lengths = np.fromiter(map(len, out), np.int64, n)
    heads.add_texts(out, np.flatnonzero(lengths >= heads.width), at)
    return out, lengths, np.fromiter(map(str.count, out, itertools.repeat(" ")), np.int64, n)
