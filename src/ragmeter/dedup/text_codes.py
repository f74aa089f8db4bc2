"""Many titles and snippets normalised and coded at once: equal normalised texts get equal codes.

:func:`normalised_codes` is :func:`~ragmeter.dedup.content_key.normalise_text` over a list, done
in place by the batch normalisation of :mod:`~ragmeter.dedup.text_batch`, which also gives the
code of each text (codes numbered in order of first appearance) and, per distinct normalised
text, its length in characters and its count of spaces (one space between words: the word count
less one). For a chunk of texts that are plain, once its non-ASCII ones are unified (curly
quotes, dashes: :func:`~ragmeter.dedup.text_batch.unified_chunk`), the lengths and spaces come
from the chunk's normalised bytes with numpy (a plain text is ASCII: one byte, one character); a
chunk with any other text counts text by text.

>>> texts = ["The END.", "the end", "", "Café  au lait"]
>>> coded = normalised_codes(texts)
>>> texts, coded.codes.tolist(), coded.distinct
(['the end', 'the end', '', 'café au lait'], [0, 0, 1, 2], ['the end', '', 'café au lait'])
>>> coded.lengths.tolist(), coded.spaces.tolist()
([7, 0, 12], [1, 0, 2])
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragmeter.dedup.text_batch import (
    CHUNK_CHARS,
    chunk_bounds,
    normalise_chunk,
    plain_chunk,
    unified_chunk,
)
from ragmeter.dedup.vector_dedup import code_firsts
from ragmeter.interning import first_seen_codes

Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class NormalisedCodes:
    """Per text, the code of its normalised text; per code, that text, its length and its spaces."""

    codes: Ints
    distinct: list[str]
    lengths: Ints
    spaces: Ints


def normalised_codes(
    texts: list[str], *, chunk_chars: int = CHUNK_CHARS, progress: Callable[[int], None] | None = None
) -> NormalisedCodes:
    """Replace each text by its :func:`~ragmeter.dedup.content_key.normalise_text`, and code them.

    In place, a chunk at a time (:func:`~ragmeter.dedup.text_batch.chunk_bounds`), so the
    originals are freed as their normalised forms arrive; ``progress(texts)`` hears of each chunk done.

    >>> texts = ["A b", "a, B!", "...", "b a"]
    >>> coded = normalised_codes(texts, chunk_chars=2)
    >>> texts, coded.codes.tolist(), coded.distinct, coded.spaces.tolist()
    (['a b', 'a b', '', 'b a'], [0, 0, 1, 2], ['a b', '', 'b a'], [1, 0, 1])
    """
    lengths, spaces = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for start, stop in chunk_bounds(texts, chunk_chars):
        texts[start:stop], chunk_lengths, chunk_spaces = _chunk(texts[start:stop])
        lengths.append(chunk_lengths)
        spaces.append(chunk_spaces)
        if progress is not None:
            progress(stop - start)
    codes, distinct = first_seen_codes(texts)
    firsts = code_firsts(codes)
    return NormalisedCodes(codes, distinct, np.concatenate(lengths)[firsts], np.concatenate(spaces)[firsts])


def _chunk(texts: list[str]) -> tuple[list[str], Ints, Ints]:
    """One chunk's normalised texts, and per text its length and spaces: a plain chunk from its bytes."""
    unified, others = unified_chunk(texts)
    done = plain_chunk(texts, unified, others)
    if done is not None:
        out, normalised = done
        buffer = np.frombuffer(normalised, np.uint8)
        ends = np.flatnonzero(buffer == 0)
        spaces = np.add.reduceat(buffer == ord(" "), ends[:-1], dtype=np.int64)
        lengths = np.diff(ends) - 1
        for i in others:  # normalise_text's, not in the bytes
            lengths[i], spaces[i] = len(out[i]), out[i].count(" ")
        return out, lengths, spaces
    out = normalise_chunk(texts)
    n = len(out)
    lengths = np.fromiter(map(len, out), np.int64, n)
    return out, lengths, np.fromiter(map(str.count, out, itertools.repeat(" ")), np.int64, n)
