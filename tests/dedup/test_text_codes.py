"""Normalised texts coded in bulk equal the reference computed text by text: codes, lengths, spaces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.dedup.conftest import any_texts, chunk_sizes, plain_texts, unifiable_texts

from ragmeter.dedup.content_key import normalise_text
from ragmeter.dedup.text_codes import NormalisedCodes, normalised_codes


@st.composite
def batches(draw: st.DrawFn, texts: st.SearchStrategy[str] = any_texts) -> list[str]:
    """Texts with variants that normalise alike (case, edge punctuation, white space), shuffled."""
    base = draw(st.lists(texts, max_size=20))
    variants = [f"\t{t.upper()} ...\x1f" for t in base[: draw(st.integers(0, len(base)))]]
    return draw(
        st.permutations(base + variants + draw(st.lists(st.sampled_from(["", " ", "\x0b\r"]), max_size=3)))
    )


def _reference(texts: list[str]) -> tuple[list[int], list[str]]:
    """Codes in order of first appearance and the distinct normalised texts, text by text."""
    normalised = [normalise_text(t) for t in texts]
    distinct = list(dict.fromkeys(normalised))
    return [distinct.index(n) for n in normalised], distinct


def _coded(texts: list[str], chunk_chars: int = 1 << 20) -> NormalisedCodes:
    given_texts = list(texts)
    coded = normalised_codes(given_texts, chunk_chars=chunk_chars)
    assert given_texts == [normalise_text(t) for t in texts]  # in place
    return coded


def _check(texts: list[str], coded: NormalisedCodes) -> None:
    codes, distinct = _reference(texts)
    assert coded.codes.tolist() == codes
    assert coded.distinct == distinct
    assert coded.lengths.tolist() == [len(t) for t in distinct]
    assert coded.spaces.tolist() == [t.count(" ") for t in distinct]
    assert coded.codes.dtype == coded.lengths.dtype == coded.spaces.dtype == np.int64


@given(batches(plain_texts), chunk_sizes)
def test_plain_texts_are_coded_as_the_reference(texts: list[str], chunk_chars: int) -> None:
    _check(texts, _coded(texts, chunk_chars))


@given(batches(unifiable_texts), chunk_sizes)
def test_texts_plain_once_unified_are_coded_as_the_reference(texts: list[str], chunk_chars: int) -> None:
    _check(texts, _coded(texts, chunk_chars))


@given(batches(), chunk_sizes)
def test_any_texts_are_coded_as_the_reference(texts: list[str], chunk_chars: int) -> None:
    _check(texts, _coded(texts, chunk_chars))


@given(st.lists(plain_texts, min_size=1, max_size=6), st.data())
def test_texts_longer_than_a_chunk(texts: list[str], data: st.DataObject) -> None:
    long_texts = [t * 30 for t in texts] + [t.upper() * 30 for t in texts]
    chunk_chars = data.draw(st.integers(1, max(1, max(map(len, long_texts)))))
    _check(long_texts, _coded(long_texts, chunk_chars))


@pytest.mark.parametrize("chunk_chars", [1, 3, 1 << 20])
def test_hand_examples(chunk_chars: int) -> None:
    texts = [
        "Café,  au LAIT!",
        "café au lait",
        "日本 \U0001f600 x",
        "",
        "   ",
        "...",
        "a\x00b",
        "a",
        "a\x00",
        "A.",
    ]
    coded = _coded(texts, chunk_chars)
    assert coded.codes.tolist() == [0, 0, 1, 2, 2, 2, 3, 4, 5, 4]
    assert coded.distinct == ["café au lait", "日本 \U0001f600 x", "", "a\x00b", "a", "a\x00"]
    assert coded.lengths.tolist() == [12, 6, 0, 3, 1, 2]  # characters, not bytes
    assert coded.spaces.tolist() == [2, 2, 0, 0, 0, 0]
    assert len(coded.distinct) == 6


def test_spaces_are_counted_after_normalisation() -> None:
    coded = _coded(["  a\t\tb \n c  ", "a b c d e f g", "x"])
    assert coded.spaces.tolist() == [2, 6, 0]
    assert coded.lengths.tolist() == [5, 13, 1]


def test_nothing_to_code() -> None:
    coded = _coded([])
    assert coded.codes.tolist() == [] and coded.distinct == []
    assert coded.lengths.tolist() == [] and coded.spaces.tolist() == []


def test_counts_past_a_byte() -> None:
    """More than 255 spaces, or characters, in one plain text (the numpy counts do not wrap)."""
    texts = ["w " * 300, "x" * 70000, "Plain, again."]
    coded = _coded(texts)
    assert coded.spaces.tolist() == [299, 0, 1]
    assert coded.lengths.tolist() == [599, 70000, 11]


def test_plain_chunks_are_normalised_on_their_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a chunk with other texts goes text by text: the byte path is not skipped for plain ones."""
    import ragmeter.dedup.text_codes as text_codes

    def refuse(texts: list[str]) -> list[str]:
        raise AssertionError(f"a plain chunk went text by text: {texts!r}")

    monkeypatch.setattr(text_codes, "normalise_chunk", refuse)
    texts = ["The END.", "the end", "", "a  b"]
    coded = normalised_codes(texts)
    assert texts == ["the end", "the end", "", "a b"] and coded.lengths.tolist() == [7, 0, 3]
