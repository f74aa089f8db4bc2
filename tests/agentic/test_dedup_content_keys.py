"""When text may propose a content duplicate: normalisation, length and word limits, prefix keys."""

from __future__ import annotations

import pytest

from ragmeter.dedup import DedupPolicy, KeyMaker, content_key, normalise_text
from ragmeter.dedup.content_key import FIELD_SEPARATOR, digest


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("<b>Bold</b> and <i>italic</i>", "bold and italic"),
        ("before <!-- a\ncomment --> after", "before after"),
        ("1<2 and 3>2", "1<2 and 3>2"),  # not tags: no letter after '<'
        ("fish &amp; chips &lt;3", "fish & chips <3"),
        ("«Bonjour» — C’est", "bonjour c'est"),
        ("ÀB Straße ﬁ", "àb strasse fi"),
        ("#tag 100% @me a&b", "#tag 100% @me a&b"),  # kept at the edges of words
        ("e.g. (see) [1] “quoted”...", "e.g see 1 quoted"),
        ("— ... !!", ""),  # words of punctuation alone disappear
        ("  many\t\nspaces  ", "many spaces"),
        ("Ünïcödé, ÜNÏCÖDÉ!", "ünïcödé ünïcödé"),
        ("日本語。テスト", "日本語。テスト"),  # punctuation inside a word stays
    ],
)
def test_normalise_text(text: str, normalised: str) -> None:
    assert normalise_text(text) == normalised


def test_content_keys_join_title_and_snippet_with_a_separator() -> None:
    assert content_key("ab", "c") != content_key("a", "bc")
    assert content_key("Ab", "C!") == digest("ab" + FIELD_SEPARATOR + "c")
    assert content_key(None, None) == digest(FIELD_SEPARATOR)
    assert len(content_key("a", "b")) == 16


def test_content_needs_a_snippet_forty_characters_and_six_words() -> None:
    m = KeyMaker()
    forty = "aaaa bbbb cccc dddd eeee ffff gggg hhhhh"  # 8 words, 40 characters
    assert len(normalise_text(forty)) == 40
    assert m.keys(snippet=forty).content_candidate
    assert not m.keys(snippet=forty[:-1]).content_candidate  # 39 characters
    # Title and snippet count together (the separator does not).
    assert m.keys(title="aaaa bbbb cccc", snippet="dddd eeee ffff gggg hhhhhh").content_candidate
    assert not m.keys(title="aaaa bbbb cccc", snippet="dddd eeee ffff gggg hhhhh").content_candidate
    # A title alone proposes nothing, however long.
    assert not m.keys(title=forty * 2).content_candidate
    six_words = "aaaaaaaaaa bbbbbbbbbb cccccccccc dddddddddd eeeeeeeeee ffffffffff"
    assert m.keys(snippet=six_words).content_candidate
    assert not m.keys(snippet=six_words.rsplit(" ", 1)[0] + "fffffffffff").content_candidate  # five words
    assert m.keys(
        title="aaaaaaaaaa", snippet="bbbbbbbbbb cccccccccc dddddddddd eeeeeeeeee ffffffffff"
    ).content_candidate


def test_policy_limits_move_the_boundaries() -> None:
    strict = KeyMaker(DedupPolicy(min_content_chars=41, min_content_words=10, prefix_chars=41))
    forty = "aaaa bbbb cccc dddd eeee ffff gggg hhhhh"
    assert not strict.keys(snippet=forty).content_candidate
    assert not strict.keys(snippet=forty + " ii").content_candidate  # 43 characters, but 9 words
    assert strict.keys(snippet=forty + " ii jj").content_candidate
    loose = KeyMaker(DedupPolicy(min_content_chars=5, min_content_words=2, prefix_chars=5))
    assert loose.keys(snippet="ab cd").content_candidate
    assert loose.keys(snippet="ab cd").prefix_key is not None


def test_a_prefix_key_needs_a_snippet_of_prefix_chars_and_covers_only_that_prefix() -> None:
    m = KeyMaker()
    fifty = "word " * 9 + "word."  # normalises to 49 characters: no prefix key
    assert len(normalise_text(fifty)) == 49 and m.keys(snippet=fifty).prefix_key is None
    long_a = m.keys(title="T", snippet="x" * 10 + " " + "y" * 39 + " and then one ending")
    long_b = m.keys(title="T", snippet="x" * 10 + " " + "y" * 39 + " but another ending")
    assert long_a.prefix_key is not None and long_a.prefix_key == long_b.prefix_key
    assert long_a.content_key != long_b.content_key
    other_title = m.keys(title="U", snippet="x" * 10 + " " + "y" * 39 + " and then one ending")
    assert other_title.prefix_key != long_a.prefix_key
    assert long_a.prefix_key == digest(
        "prefix" + FIELD_SEPARATOR + "t" + FIELD_SEPARATOR + "x" * 10 + " " + "y" * 39
    )


def test_keys_of_a_result() -> None:
    m = KeyMaker()
    k = m.keys(domain_id="doi:1", generic_id="g", url="https://www.a.org/x/", title="T", snippet="S")
    assert (k.domain_id, k.generic_id, k.url_key) == ("doi:1", None, "a.org/x")
    assert k.content_key == content_key("T", "S") and k.snippet == "s"
    assert m.keys(generic_id="g").generic_id == "g"
    assert m.keys().url_key is None
    assert m.url_key("https://www.a.org/x/") == "a.org/x" and m.url_key(None) is None
    assert m.keys(url="   ").url_key is None
    # Memoised: the same answers the second time, for URLs and texts.
    again = m.keys(domain_id="doi:1", url="https://www.a.org/x/", title="T", snippet="S")
    assert again == k
    assert m.of("doi:1", "g", "https://www.a.org/x/", "T", "S") == k


def test_tracking_parameters_come_from_the_policy() -> None:
    m = KeyMaker(DedupPolicy(tracking_names=frozenset({"session"}), tracking_prefixes=("x_",)))
    assert m.keys(url="https://a.org/p?session=1&x_id=2&utm_source=3").url_key == "a.org/p?utm_source=3"
