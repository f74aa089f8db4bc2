"""Normalised text of many titles and snippets at once: :func:`normalise_text` over a list, vectorised.

Most titles and snippets are *plain*: ASCII, without ``<`` (no tags), ``&`` (no entities) or NUL.
For plain text :func:`~ragmeter.dedup.content_key.normalise_text` is casefold (= lower),
``str.split()`` (on the ASCII whitespace ``\\t \\n \\x0b \\x0c \\r \\x1c-\\x1f`` and space), edge
punctuation stripped from each word, empty words dropped, one space between words. Here a chunk
of plain texts is joined with NUL and that is done on its bytes with numpy, in a few passes
whatever the number of words:

- a run of edge punctuation is kept only when a non-punctuation byte of the same word touches it
  on both sides (it lies inside the word); any other run is at an edge of its word (or is the
  whole word) and becomes whitespace;
- of each whitespace run only the last byte is kept, as a space, when a word follows it and the
  run does not open its text (start right after the text's NUL);
- one ``bytes.translate`` lowers the case, turns whitespace into spaces and deletes what goes.

Non-ASCII text without tags or entities is first unified as ``normalise_text`` does
(:func:`~ragmeter.dedup.content_key.nfkc_unified`: NFKC, curly quotes and dashes made ASCII),
all the chunk's at once; when that makes it plain it goes the plain way. Any other text (tags,
entities, NUL, text still non-ASCII) goes through ``normalise_text`` itself. The outputs equal ``normalise_text``'s for
every input (a property test compares them).

>>> texts = ["  The END…  ", "C++ (and C#)!", "...", "<b>Python&nbsp;3.11</b>"]
>>> normalise_texts(texts)
>>> texts
['the end', 'c++ and c#', '', 'python 3.11']
"""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from ragmeter.dedup.content_key import EDGE_PUNCTUATION, nfkc_unified_all, normalise_text

_SEP, _SPACE, _PUNCT, _SOLID = 0, 1, 2, 3
"""Byte classes: the NUL between texts, whitespace, edge punctuation, anything else."""

_DROP = 0xFF
"""Marks a byte to delete (plain text is ASCII, so no byte of it is 0xFF)."""


def _tables() -> tuple[bytes, bytes]:
    """The class of each byte, and each byte as it is written out (lower case, whitespace → space)."""
    classes = bytearray([_SOLID]) * 256
    written = bytearray(bytes(range(256)).lower())
    for byte in range(1, 128):
        if chr(byte).isspace():
            classes[byte] = _SPACE
            written[byte] = ord(" ")
        elif chr(byte) in EDGE_PUNCTUATION:
            classes[byte] = _PUNCT
    classes[0] = _SEP
    return bytes(classes), bytes(written)


_CLASSES, _WRITTEN = _tables()
_CHUNK_TEXTS = 2048
CHUNK_CHARS = 1 << 20


def chunk_bounds(texts: list[str], chunk_chars: int = CHUNK_CHARS) -> Iterator[tuple[int, int]]:
    """The ``(start, stop)`` of each chunk of ``texts``, to bound the memory of the numpy passes.

    A chunk holds up to 2,048 texts of at most ``chunk_chars`` characters together, or one longer text.

    >>> list(chunk_bounds(["ab", "cd", "efgh", "i"], chunk_chars=4))
    [(0, 2), (2, 3), (3, 4)]
    """
    start = 0
    while start < len(texts):
        stop = min(start + _CHUNK_TEXTS, len(texts))
        sizes = list(itertools.accumulate(map(len, texts[start:stop])))
        if sizes[-1] > chunk_chars:
            stop = start + max(1, bisect.bisect_right(sizes, chunk_chars))
        yield start, stop
        start = stop


def normalise_texts(texts: list[str], *, chunk_chars: int = CHUNK_CHARS) -> None:
    """Replace each text of ``texts`` by its :func:`normalise_text`, in place, a chunk at a time.

    In place, so the originals are freed as their normalised forms arrive. Chunks
    (:func:`chunk_bounds`) bound the memory of the numpy passes.

    >>> texts = ["Hello, World!", "  a -- b  ", ""]
    >>> normalise_texts(texts, chunk_chars=4)
    >>> texts
    ['hello world', 'a b', '']
    """
    for start, stop in chunk_bounds(texts, chunk_chars):
        texts[start:stop] = normalise_chunk(texts[start:stop])


def normalise_chunk(texts: list[str]) -> list[str]:
    """``normalise_text`` of each text: plain ones together, the others one by one.

    >>> normalise_chunk(["A, b.", "Café!"])
    ['a b', 'café']
    """
    unified, others = unified_chunk(texts)
    done = plain_chunk(texts, unified, others)
    if done is not None:
        return done[0]
    # An ASCII text with a "<", "&" or NUL goes one by one too; the plain ones still go together.
    plain = [is_plain(t) and "\x00" not in t for t in unified]
    for i in others:
        plain[i] = False
    joined = "\x00".join(["", *itertools.compress(unified, plain), ""])
    normalised = iter(normalised_plain(joined).decode("ascii").split("\x00")[1:-1])
    return [next(normalised) if p else normalise_text(t) for t, p in zip(texts, plain, strict=True)]


def plain_chunk(
    texts: list[str], unified: list[str], others: list[int]
) -> tuple[list[str], bytearray] | None:
    """The chunk normalised the plain way (and ``others`` by ``normalise_text``), with its normalised bytes.

    ``unified`` and ``others``: :func:`unified_chunk`'s. The bytes are a NUL, then each text and
    a NUL (the texts of ``others`` empty there). ``None`` when an ASCII text holds a ``<``, ``&`` or
    NUL: not plain.

    >>> texts = ["A — B.", "Café"]
    >>> plain_chunk(texts, *unified_chunk(texts))
    (['a b', 'café'], bytearray(b'\\x00a b\\x00\\x00'))
    """
    joined = "\x00".join(["", *unified, ""])
    if not is_plain(joined):
        return None
    normalised = normalised_plain(joined)
    out = normalised.decode("ascii").split("\x00")[1:-1]
    if len(out) != len(texts):  # a text holds a NUL
        return None
    for i in others:
        out[i] = normalise_text(texts[i])
    return out, normalised


def unified_chunk(texts: list[str]) -> tuple[list[str], list[int]]:
    """The texts with each non-ASCII one unified, and the indices of those still not plain (left empty).

    A non-ASCII text is unified as :func:`~ragmeter.dedup.content_key.normalise_text` first
    does (:func:`~ragmeter.dedup.content_key.nfkc_unified`), all at once; one that is still not
    plain then (non-ASCII, or unified into a ``<`` or ``&``), or that has a ``<``, ``&`` or NUL as
    written (its tags and entities are read before unifying), is left empty and its index listed:
    ``normalise_text`` does those one by one. ASCII texts are left as they are (a ``<``, ``&`` or
    NUL in one is the caller's to see). All ASCII: the list itself, and no index.

    >>> unified_chunk(["It’s", "ok", "Ω", "﹤b", "a&é"])
    (["It's", 'ok', '', '', ''], [2, 3, 4])
    """
    if all(map(str.isascii, texts)):
        return texts, []
    where = list(itertools.compress(range(len(texts)), map(operator.not_, map(str.isascii, texts))))
    out = list(texts)
    others = []
    for i, text in zip(where, nfkc_unified_all([texts[i] for i in where]), strict=True):
        written = texts[i]
        if is_plain(text) and "<" not in written and "&" not in written and "\x00" not in written:
            out[i] = text
        else:
            out[i] = ""
            others.append(i)
    return out, others


def is_plain(text: str) -> bool:
    """Whether ``text`` is ASCII without ``<`` or ``&`` (a NUL in it is the caller's to check).

    >>> is_plain("C++ & C"), is_plain("café"), is_plain("a.b")
    (False, False, True)
    """
    return text.isascii() and "<" not in text and "&" not in text


def normalised_plain(joined: str) -> bytearray:
    """The normalised texts of ``joined`` (plain texts, each after a NUL, and a NUL at the end), alike.

    >>> normalised_plain("\\x00 A, b. \\x00...\\x00Hi!\\x00")
    bytearray(b'\\x00a b\\x00\\x00hi\\x00')
    """
    raw = bytearray(joined.encode("ascii"))
    data: npt.NDArray[np.uint8] = np.frombuffer(raw, np.uint8)
    cls: npt.NDArray[np.uint8] = np.frombuffer(bytearray(raw.translate(_CLASSES)), np.uint8)
    punct = cls == _PUNCT
    edges = np.flatnonzero(punct[1:] != punct[:-1])  # the first and last byte are NULs: edges pair up
    first, last = edges[0::2] + 1, edges[1::2]  # of each run of punctuation
    at_edge = (cls[first - 1] != _SOLID) | (cls[last + 1] != _SOLID)
    first, last = first[at_edge], last[at_edge]
    lengths = last - first + 1
    where = np.repeat(first - (np.cumsum(lengths) - lengths), lengths) + np.arange(lengths.sum())
    cls[where] = _SPACE
    data[where] = ord(" ")
    here, after = cls[:-1], cls[1:]
    data[:-1][(here == _SPACE) & (after < _PUNCT)] = _DROP
    opening = np.flatnonzero((here == _SEP) & (after == _SPACE)) + 1
    if len(opening):  # the byte that ends each opening run goes too
        not_space = np.flatnonzero(cls != _SPACE)
        ends = not_space[np.searchsorted(not_space, opening)]
        data[ends - 1] = _DROP
    return raw.translate(_WRITTEN, bytes([_DROP]))
