"""The batch normalisation of titles and snippets equals ``normalise_text`` text by text."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.dedup.conftest import any_texts, chunk_sizes, plain_texts, unifiable_texts

from ragmeter.dedup import text_batch
from ragmeter.dedup.content_key import normalise_text
from ragmeter.dedup.text_batch import normalise_texts


def _batch(texts: list[str], chunk_chars: int = 1 << 20) -> list[str]:
    out = list(texts)
    normalise_texts(out, chunk_chars=chunk_chars)
    return out


@given(st.lists(plain_texts, max_size=25), chunk_sizes)
def test_plain_texts_equal_the_reference(texts: list[str], chunk_chars: int) -> None:
    assert _batch(texts, chunk_chars) == [normalise_text(t) for t in texts]


@given(st.lists(any_texts, max_size=25), chunk_sizes)
def test_mixed_texts_equal_the_reference(texts: list[str], chunk_chars: int) -> None:
    assert _batch(texts, chunk_chars) == [normalise_text(t) for t in texts]


@given(st.lists(unifiable_texts, max_size=25), chunk_sizes)
def test_texts_that_are_plain_once_unified_equal_the_reference(texts: list[str], chunk_chars: int) -> None:
    assert _batch(texts, chunk_chars) == [normalise_text(t) for t in texts]


@given(st.lists(plain_texts, min_size=1, max_size=8), st.data())
def test_long_texts_across_chunk_boundaries(texts: list[str], data: st.DataObject) -> None:
    long_texts = [t * 40 for t in texts]
    chunk_chars = data.draw(st.integers(1, max(1, max(map(len, long_texts)))))
    assert _batch(long_texts, chunk_chars) == [normalise_text(t) for t in long_texts]


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("", ""),
        ("   ", ""),
        ("\x1c\x1d\x1e\x1fa\x1fb\x1c", "a b"),  # str.split() splits on \x1c-\x1f too
        ("\t Hello,\n\x0b\x0cWORLD!\r ", "hello world"),
        ("(see) [1] e.g. ...", "see 1 e.g"),
        ("...leading", "leading"),
        ("  ...(leading", "leading"),
        ("trailing?!)", "trailing"),
        ("in.side a--b x_y", "in.side a--b x_y"),
        ("-- ... !! ?", ""),  # words of punctuation alone disappear
        ("C++ C# 10% @me $5 a=b", "c++ c# 10% @me $5 a=b"),
        ("\x01 \x7f.", "\x01 \x7f"),  # control characters are neither space nor punctuation
        ("a\x00b  c", "a\x00b c"),  # NUL is a character like any other
        ("fish &amp; chips", "fish & chips"),
        ("<b>Bold</b>!", "bold"),
        ("«Bonjour» — C’est", "bonjour c'est"),
        ("a\u3000b", "a b"),  # non-ASCII whitespace
    ],
)
def test_hand_examples(text: str, normalised: str) -> None:
    assert normalise_text(text) == normalised
    for chunk_chars in (1, 5, 1 << 20):
        assert _batch(["x y", text, " Z. ", text], chunk_chars) == ["x y", normalised, "z", normalised]


def test_more_texts_than_one_chunk_holds() -> None:
    texts = [f" Text {i}, ({i % 7})! " * (i % 3) for i in range(5000)]
    assert _batch(texts) == [normalise_text(t) for t in texts]


def test_plain_texts_do_not_go_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    reference: Callable[[str], str] = normalise_text

    def one_by_one(text: str) -> str:
        seen.append(text)
        return reference(text)

    monkeypatch.setattr(text_batch, "normalise_text", one_by_one)
    texts = ["Plain, text.", "café", "a &amp; b", "plain (too)", "x\x00y", "<i>t</i>"]
    assert _batch(texts) == ["plain text", "café", "a & b", "plain too", "x\x00y", "t"]
    assert seen == ["café", "a &amp; b", "x\x00y", "<i>t</i>"]
    seen.clear()
    assert _batch(["Only plain", "texts here."]) == ["only plain", "texts here"]
    assert seen == []


def test_non_ascii_text_that_unifies_to_plain_goes_the_plain_way(monkeypatch: pytest.MonkeyPatch) -> None:
    """Curly quotes, dashes, fullwidth letters: plain once unified; fullwidth < > & and other scripts: not."""
    import ragmeter.dedup.text_batch as text_batch
    from ragmeter.dedup.content_key import normalise_text

    texts = [
        "What\u2019s NEW \u2014 ok\u2026",
        "\uff21\uff22 \u2024x",
        "\uff1cb\uff1ex\uff1c/b\uff1e",
        "\uff21\uff06\uff22",
        "caf\u00e9",
    ]
    expected = [normalise_text(t) for t in texts]
    assert expected == ["what's new ok", "ab x", "<b>x</b>", "a&b", "café"]
    referenced: list[str] = []

    def counted(text: str) -> str:
        referenced.append(text)
        return normalise_text(text)

    monkeypatch.setattr(text_batch, "normalise_text", counted)
    got = list(texts)
    text_batch.normalise_texts(got)
    assert got == expected
    assert referenced == texts[2:]  # the first two went the plain way
    referenced.clear()
    got = [texts[0], "plain", texts[1]]  # a chunk with no "<", "&" or NUL as written: unified, then plain
    text_batch.normalise_texts(got)
    assert got == [expected[0], "plain", expected[1]] and referenced == []


@given(
    st.text(
        alphabet=st.sampled_from(
            [
                *"aZ .-'\"\x00",
                *"\u2018\u2019\u201a\u201b\u2032\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u2026\uff21\ufb01\u00e9\u2024",
            ]
        ),
        max_size=40,
    )
)
def test_unified_text_is_nfkc_then_every_listed_character_as_ascii(text: str) -> None:
    """The regular expression does what ``str.translate`` with the table did, character by character."""
    import unicodedata

    from ragmeter.dedup.content_key import _UNIFIED, nfkc_unified

    assert nfkc_unified(text) == unicodedata.normalize("NFKC", text).translate(str.maketrans(_UNIFIED))
    assert len(_UNIFIED) == 20 and all(v.isascii() for v in _UNIFIED.values())


@given(
    st.lists(
        st.text(
            alphabet=st.sampled_from(
                [
                    *"aZ .'\x00",
                    *"\u0301\u0327\u1100\u1161\u11a8\uac00\u2019\u2014\u2026\ufb01\uff21\u00bd\u2126\u212b\u030a\u00e9\u3000",
                ]
            ),
            max_size=12,
        ),
        max_size=12,
    )
)
def test_texts_unified_together_equal_each_unified_alone(texts: list[str]) -> None:
    """NUL keeps the joined texts apart: combining marks and Hangul jamo at a text's edge compose with nothing across it."""
    from ragmeter.dedup.content_key import nfkc_unified, nfkc_unified_all

    assert nfkc_unified_all(texts) == [nfkc_unified(t) for t in texts]


def _bounds_by_hand(texts: list[str], chunk_chars: int, most: int) -> list[tuple[int, int]]:
    """Chunks as the rule says: up to ``most`` texts, the longest run whose lengths fit, at least one text."""
    out, start = [], 0
    while start < len(texts):
        stop, used = start, 0
        while stop < min(start + most, len(texts)) and (
            stop == start or used + len(texts[stop]) <= chunk_chars
        ):
            used += len(texts[stop])
            stop += 1
        out.append((start, stop))
        start = stop
    return out


@given(st.lists(st.text(alphabet="ab", max_size=9), max_size=30), st.integers(1, 20), st.integers(1, 5))
def test_chunk_bounds_follow_the_rule(texts: list[str], chunk_chars: int, most: int) -> None:
    import ragmeter.dedup.text_batch as text_batch

    old, text_batch._CHUNK_TEXTS = text_batch._CHUNK_TEXTS, most
    try:
        assert list(text_batch.chunk_bounds(texts, chunk_chars)) == _bounds_by_hand(texts, chunk_chars, most)
    finally:
        text_batch._CHUNK_TEXTS = old
