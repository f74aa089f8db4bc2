"""Docnos as numpy sees them: equal bytes give equal hashes and words wherever they sit in Arrow."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.io.docnos import (
    KeyIndex,
    docno_hashes,
    docno_words,
    numpy_view,
    pair_keys,
    paired_words,
    string_array,
    string_bounds,
    strings_at,
    topic_keys,
)

names = st.lists(st.text(alphabet="ab01é-", max_size=20), min_size=1, max_size=30)


def as_arrow(values: list[str], how: str) -> pa.Array | pa.ChunkedArray:
    """The same strings as a plain, a sliced (offset), a large-string or a chunked Arrow array."""
    if how == "plain":
        return string_array(values)
    if how == "offset":
        return string_array(["pad", "padding!", *values, "tail"]).slice(2, len(values))
    if how == "large":
        return pa.array(values, type=pa.large_string())
    cut = len(values) // 2
    return pa.chunked_array([string_array(values[:cut]), string_array([]), string_array(values[cut:])])


@settings(max_examples=60, deadline=None)
@given(names, st.sampled_from(["plain", "offset", "large", "chunked"]))
def test_equal_docnos_hash_equal_wherever_they_sit(values: list[str], how: str) -> None:
    hashes = docno_hashes(as_arrow(values, how))
    alone = [int(docno_hashes(string_array([v]))[0]) for v in values]
    assert hashes.tolist() == alone
    for i, a in enumerate(values):
        for j, b in enumerate(values):
            if a == b:
                assert hashes[i] == hashes[j]


def test_distinct_docnos_get_distinct_hashes() -> None:
    values = [f"doc-{i}" for i in range(20_000)] + [
        "",
        "a",
        "a\x00",
        "ab",
        "ba",
        "x" * 8,
        "x" * 9,
        "x" * 16,
        "x" * 17,
    ]
    hashes = docno_hashes(string_array(values))
    assert len(set(hashes.tolist())) == len(values)
    keys = pair_keys(string_array(["d1", "d1", "d2"]), topic_keys(["q1", "q2"]), np.array([0, 1, 0]))
    assert len(set(keys.tolist())) == 3  # the topic is part of the key


def test_hashes_xor_into_a_given_array() -> None:
    values = string_array(["a", "bb", "ccc"])
    base = np.array([1, 2, 3], dtype=np.uint64)
    out = docno_hashes(values, into=base.copy())
    assert (out ^ base).tolist() == docno_hashes(values).tolist()


@settings(max_examples=60, deadline=None)
@given(names, st.sampled_from(["plain", "offset", "large", "chunked"]))
def test_words_order_docnos_byte_by_byte(values: list[str], how: str) -> None:
    rows = np.arange(len(values), dtype=np.int64)[::-1].copy()
    words, lengths = docno_words(as_arrow(values, how), rows)
    encoded = [values[r].encode() for r in rows]
    assert lengths.tolist() == [len(e) for e in encoded]
    assert words.shape[1] * 8 >= max(max(lengths.tolist()), 1)
    as_bytes = [bytes(w.astype(">u8").tobytes())[: int(n)] for w, n in zip(words, lengths, strict=True)]
    assert as_bytes == encoded
    padding = [bytes(w.astype(">u8").tobytes())[int(n) :] for w, n in zip(words, lengths, strict=True)]
    assert all(set(p) <= {0} for p in padding)


def test_paired_words_share_one_width() -> None:
    a, b = string_array(["short"]), string_array(["a much longer docno"])
    aw, al, bw, bl = paired_words(a, np.array([0]), b, np.array([0]))
    assert aw.shape == bw.shape == (1, 3) and (al.tolist(), bl.tolist()) == ([5], [19])
    bw2, _, aw2, _ = paired_words(b, np.array([0]), a, np.array([0]))
    assert bw2.shape == aw2.shape == (1, 3)
    assert docno_words(a, np.array([0]), width=17)[0].shape == (1, 3)


def test_bounds_and_strings_of_plain_sliced_and_large_arrays() -> None:
    plain = string_array(["a", "bcd", ""])
    assert string_bounds(plain).tolist() == [0, 1, 4, 4]
    sliced = plain.slice(1, 2)
    assert string_bounds(sliced).tolist() == [1, 4, 4]
    assert strings_at(sliced, np.array([1, 0])) == ["", "bcd"]
    large = pa.array(["xy", "z"], type=pa.large_string())
    assert string_bounds(large).dtype == np.int64 and string_bounds(large).tolist() == [0, 2, 3]
    assert strings_at(string_array(["", ""]), np.array([0, 1])) == ["", ""]


def test_numpy_view_of_plain_sliced_and_chunked_arrays() -> None:
    values = pa.array([1.5, 2.5, 3.5])
    assert numpy_view(values, np.float64).tolist() == [1.5, 2.5, 3.5]
    assert numpy_view(values.slice(1), np.float64).tolist() == [2.5, 3.5]
    chunked = pa.chunked_array([pa.array([1.0]), pa.array([], pa.float64()), pa.array([2.0, 3.0])])
    assert numpy_view(chunked, np.float64).tolist() == [1.0, 2.0, 3.0]
    assert numpy_view(pa.chunked_array([], pa.float64()), np.float64).tolist() == []
    with pytest.raises(ValueError, match="without nulls"):
        numpy_view(pa.array([1.0, None]), np.float64)


def test_string_array_round_trips() -> None:
    values = ["", "é", "doc-1", "a b"]
    arr = string_array(values)
    assert arr.type == pa.string() and arr.to_pylist() == values
    assert string_array([]).to_pylist() == []


@pytest.mark.parametrize("size", [1, 7, 8, 9, 1000])
def test_key_index_finds_present_keys_and_only_those(size: int) -> None:
    keys = np.arange(size, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    index = KeyIndex(keys)
    probe = np.concatenate([keys[::-1], keys + np.uint64(1)])
    at, entry = index.find(probe)
    assert at.tolist() == list(range(size))
    assert entry.tolist() == list(range(size))[::-1]
