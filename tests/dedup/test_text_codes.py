"""Normalised texts coded in bulk equal the reference computed text by text: codes, lengths, spaces, prefixes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.dedup.conftest import any_texts, chunk_sizes, plain_texts

from ragmeter.dedup import text_codes
from ragmeter.dedup.content_key import normalise_text
from ragmeter.dedup.text_codes import NormalisedCodes, TextTable, normalised_codes, prefix_codes


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
    assert given_texts == [""] * len(texts)  # emptied
    return coded


def _check(texts: list[str], coded: NormalisedCodes) -> None:
    codes, distinct = _reference(texts)
    assert coded.codes.tolist() == codes
    assert list(coded.distinct) == distinct
    assert coded.lengths.tolist() == [len(t) for t in distinct]
    assert coded.spaces.tolist() == [t.count(" ") for t in distinct]
    assert coded.codes.dtype == coded.lengths.dtype == coded.spaces.dtype == np.int64


@given(batches(plain_texts), chunk_sizes)
def test_plain_texts_are_coded_as_the_reference(texts: list[str], chunk_chars: int) -> None:
    _check(texts, _coded(texts, chunk_chars))


@given(batches(), chunk_sizes)
def test_any_texts_are_coded_as_the_reference(texts: list[str], chunk_chars: int) -> None:
    _check(texts, _coded(texts, chunk_chars))


@given(st.lists(plain_texts, min_size=1, max_size=6), st.data())
def test_texts_longer_than_a_chunk(texts: list[str], data: st.DataObject) -> None:
    long_texts = [t * 30 for t in texts] + [t.upper() * 30 for t in texts]
    chunk_chars = data.draw(st.integers(1, max(1, max(map(len, long_texts)))))
    _check(long_texts, _coded(long_texts, chunk_chars))


@given(batches(), st.integers(1, 12), st.sampled_from([1, 7, 1 << 20]))
def test_prefix_codes_are_equal_exactly_when_prefixes_are(
    texts: list[str], prefix_chars: int, chunk: int
) -> None:
    coded = _coded(texts, chunk)
    distinct = list(coded.distinct)
    rows = np.array([i for i, t in enumerate(distinct) if len(t) >= prefix_chars], np.int64)
    codes = prefix_codes(coded, rows, prefix_chars).tolist()
    prefixes = [distinct[i][:prefix_chars] for i in rows.tolist()]
    assert len(codes) == len(rows)
    for a, b in zip(codes, prefixes, strict=True):
        for c, d in zip(codes, prefixes, strict=True):
            assert (a == c) == (b == d)


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
    assert list(coded.distinct) == ["café au lait", "日本 \U0001f600 x", "", "a\x00b", "a", "a\x00"]
    assert coded.lengths.tolist() == [12, 6, 0, 3, 1, 2]  # characters, not bytes
    assert coded.spaces.tolist() == [2, 2, 0, 0, 0, 0]
    assert len(coded.distinct) == 6


def test_spaces_are_counted_after_normalisation() -> None:
    coded = _coded(["  a\t\tb \n c  ", "a b c d e f g", "x"])
    assert coded.spaces.tolist() == [2, 6, 0]
    assert coded.lengths.tolist() == [5, 13, 1]


def test_nothing_to_code() -> None:
    coded = _coded([])
    assert coded.codes.tolist() == [] and list(coded.distinct) == []
    assert coded.lengths.tolist() == [] and coded.spaces.tolist() == []


def test_prefixes_of_hand_examples() -> None:
    texts = ["abcdef", "ABCxyz", "abcd", "ab\x00cd", "ab", "ébcdef", "ébcxyz", "abcé"]
    coded = _coded(texts)
    rows = np.array([0, 1, 2, 3, 5, 6, 7])
    codes = prefix_codes(coded, rows, 3).tolist()
    # abc abc abc ab\0 ébc ébc abc
    assert codes[0] == codes[1] == codes[2] == codes[6]
    assert codes[4] == codes[5]
    assert len({codes[0], codes[3], codes[4]}) == 3
    assert prefix_codes(coded, np.array([7, 5]), 4).tolist()[0] != prefix_codes(coded, np.array([7, 5]), 4)[1]
    assert prefix_codes(coded, np.zeros(0, np.int64), 3).tolist() == []


def test_a_prefix_longer_than_a_text_is_refused() -> None:
    coded = _coded(["abc", "abcdef"])
    with pytest.raises(ValueError, match="shorter than 4 characters"):
        prefix_codes(coded, np.array([1, 0]), 4)
    assert prefix_codes(coded, np.array([1, 0]), 3).tolist()[0] == prefix_codes(coded, np.array([1, 0]), 3)[1]


def test_large_offsets_give_the_same_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["Hello, World!", "hello world", "é ü", "a\x00", "", "Hello world again"] * 3
    small = _coded(texts)
    monkeypatch.setattr(text_codes, "BINARY_LIMIT", 8)  # 64-bit offsets from 8 bytes on
    large = _coded(texts)
    assert text_codes._binary(b"abcdefghij", np.array([0, 10])).type == pa.large_binary()
    _check(texts, large)
    assert large.codes.tolist() == small.codes.tolist()
    rows = np.array([0, 1, 2, 4])
    assert prefix_codes(large, rows, 2).tolist() == prefix_codes(small, rows, 2).tolist()


def test_text_table() -> None:
    table = TextTable("ab\x00\x00cdé\x00x\x00y\x00".encode(), np.array([0, 3, 4, 9, 13]))
    assert len(table) == 4
    assert table[0] == "ab" and table[1] == "" and table[2] == "cdé" and table[3] == "x\x00y"
    assert table[-1] == "x\x00y" and table[-4] == "ab"
    assert table[1:3] == ["", "cdé"] and table[::-2] == ["x\x00y", ""]
    assert list(table) == ["ab", "", "cdé", "x\x00y"]
    assert table.offsets.tolist() == [0, 3, 4, 9, 13]
    for bad in (4, -5):
        with pytest.raises(IndexError):
            table[bad]
    arrow = table.arrow()
    assert arrow.type == pa.binary() and arrow.to_pylist() == [
        b"ab\x00",
        b"\x00",
        "cdé\x00".encode(),
        b"x\x00y\x00",
    ]
    assert list(TextTable.of(arrow)) == list(table)
    assert list(TextTable.of(arrow.slice(1, 2))) == ["", "cdé"]
    assert list(TextTable.of(arrow.cast(pa.large_binary()))) == list(table)
