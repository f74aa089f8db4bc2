"""The batch URL key codes equal ``url_key`` URL by URL; each rule of the sliced fast path is pinned."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.agentic.test_dedup_url_key import ODD_URLS, urls

from ragmeter.dedup.url_batch import _sliceable, url_key_codes
from ragmeter.dedup.url_key import (
    TRACKING_PARAM_NAMES,
    TRACKING_PARAM_PREFIXES,
    _key,
    _normalise_query,
    url_key,
)

DENYLISTS: list[tuple[Collection[str], tuple[str, ...]]] = [
    (TRACKING_PARAM_NAMES, TRACKING_PARAM_PREFIXES),
    (frozenset({"b"}), ("a",)),
    (frozenset(), ()),
]
"""The default denylists, others, and none: the cached query keys follow each."""


def keys_of(
    batch: Sequence[str | None],
    names: Collection[str] = TRACKING_PARAM_NAMES,
    prefixes: tuple[str, ...] = TRACKING_PARAM_PREFIXES,
    chunk: int = 1 << 16,
) -> list[str | None]:
    """The keys by way of the codes; checks that equal keys have equal codes and the other way round."""
    coded = url_key_codes(batch, tracking_names=names, tracking_prefixes=prefixes, chunk=chunk)
    keys = list(coded.keys)
    assert len(set(keys)) == len(keys) == len(coded.keys)  # one code per key
    assert keys == [coded.keys[i] for i in range(len(keys))]
    assert sorted(set(coded.codes.tolist()) - {-1}) == list(range(len(keys)))  # every key is used
    return [None if code < 0 else coded.keys[code] for code in coded.codes.tolist()]


def reference(
    batch: Sequence[str | None],
    names: Collection[str] = TRACKING_PARAM_NAMES,
    prefixes: tuple[str, ...] = TRACKING_PARAM_PREFIXES,
) -> list[str | None]:
    return [
        None if u is None else url_key(u, tracking_names=names, tracking_prefixes=prefixes) for u in batch
    ]


def sliced(batch: Sequence[str | None]) -> list[str | None]:
    """The key of each URL that the fast path slices, else ``None``."""

    def query_key(query: str) -> str:
        return _normalise_query(query, TRACKING_PARAM_NAMES, TRACKING_PARAM_PREFIXES)

    keys, where = _sliceable(batch, query_key)
    out: list[str | None] = [None] * len(batch)
    for i, key in zip(where.tolist(), keys.to_pylist(), strict=True):
        out[i] = key.decode("ascii")
    return out


ODD_PIECES = [
    *"/aB09-._~!$&'()*+,=:@%;?#\"<>|^`{}\\[]",
    "//",
    "/.",
    "/..",
    "./",
    "%41",
    "%2F",
    ";p",
    "www.",
    "WWW.",
    ":80",
    ":x",
    "u@",
    "é",
    "\ud800",
    "?utm_source=x",
    "?b=1",
    "&fbclid=1",
    "#",
    "#!",
    "ftp://",
    "HTTP://",
    *" \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f\x00\x01\x7f\x85\xa0\u3000\u2028",
]
"""Every ASCII byte class of the fast path, whitespace (``\\x1c-\\x1f`` too), NUL, Unicode spaces."""


@st.composite
def plain_urls(draw: st.DrawFn) -> str:
    """URLs of the common shape: most are sliceable."""
    scheme = draw(st.sampled_from(["https://", "http://", "HTTPS://", "hTtP://"]))
    host = draw(
        st.sampled_from(
            [
                "a.org",
                "www.a.org",
                "a-1.b0.org",
                "www.a",
                "www.a.",
                "www..a",
                "www.",
                "WWW.A.ORG.",
                "A.org",
                "a",
            ]
        )
    )
    segments = draw(st.lists(st.sampled_from(["x", "a.b", "~u", "!$&'()*+,=:@", "X-_", ""]), max_size=4))
    path = draw(st.sampled_from(["/", "/", "/", ""])) + "/".join(segments)
    query = draw(
        st.sampled_from(
            [
                "",
                "",
                "?utm_source=x",
                "?",
                "?utm_source=x&b=1",
                "?b",
                "?a=1&b=2",
                "?b=2&a=1",
                "?q=x+y",
                "?b=",
                "?a&a",
            ]
        )
    )
    fragment = draw(st.sampled_from(["", "", "#x", "#", "#!x", "#?!"]))
    return scheme + host + path + query + fragment


@st.composite
def near_urls(draw: st.DrawFn) -> str:
    """A common URL with up to three odd pieces put anywhere: URLs that are just sliceable or just not."""
    url = draw(plain_urls())
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(url)))
        url = url[:at] + draw(st.sampled_from(ODD_PIECES)) + url[at:]
    return url


any_url = st.one_of(
    urls(),
    plain_urls(),
    near_urls(),
    st.sampled_from(ODD_URLS),
    st.text(max_size=12),
    st.text(alphabet=st.characters(max_codepoint=127), max_size=30),
    st.none(),
)


@settings(max_examples=400)
@given(st.lists(any_url, max_size=40), st.sampled_from(DENYLISTS), st.integers(1, 9))
def test_codes_equal_url_key_one_by_one(
    batch: list[str | None], denylists: tuple[Collection[str], tuple[str, ...]], chunk: int
) -> None:
    names, prefixes = denylists
    assert keys_of(batch, names, prefixes, chunk) == reference(batch, names, prefixes)


@settings(max_examples=150)
@given(st.lists(plain_urls(), min_size=1, max_size=40), st.integers(1, 50))
def test_batches_of_common_urls(batch: list[str | None], chunk: int) -> None:
    assert keys_of(batch, chunk=chunk) == reference(batch)


@settings(max_examples=50)
@given(st.lists(st.text(alphabet="/ab.", max_size=5), min_size=1, max_size=20), st.integers(100, 3000))
def test_long_urls(segments: list[str], repeat: int) -> None:
    batch = ["https://www.a.org/" + s * repeat + "?utm_source=" + "x" * repeat for s in segments]
    assert keys_of(batch, chunk=3) == reference(batch)


def test_all_some_and_none_of_a_batch_sliceable() -> None:
    fast = [f"https://a{i}.org/p/{i}/" for i in range(50)]
    slow = [f"https://A{i}.org/p/{i}/" for i in range(50)]
    mixed = [u for pair in zip(fast, slow, strict=True) for u in pair]
    for batch in (fast, slow, mixed, [], [None], ["", " "], [*fast, None], [None, *slow]):
        assert keys_of(batch, chunk=7) == reference(batch)
    assert keys_of(mixed) == [f"a{i}.org/p/{i}" for i in range(50) for _ in range(2)]
    assert None not in sliced([*fast])
    assert set(sliced([*slow])) == {None}


def test_only_the_urls_that_are_not_sliced_go_through_url_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragmeter.dedup import url_batch

    seen: list[str] = []

    def recorded(url: str, query_key: Callable[[str], str]) -> str | None:
        seen.append(url)
        return _key(url, query_key)

    monkeypatch.setattr(url_batch, "_key", recorded)
    slow = ["https://A.org/x", "", "a.org/x?b=1", "https://a.org/x?b=1&a=2"]
    batch = [None, "https://a.org/x", slow[0], "http://www.a.org/x/", slow[1], slow[2], slow[3], None]
    assert keys_of(batch, chunk=3) == reference(batch)
    assert seen == slow  # each once, in order


def test_equal_keys_share_a_code_across_chunks_and_paths() -> None:
    batch = ["https://a.org/x", "http://A.org/x/", None, "HTTP://www.a.org/x#y", "https://a.org:443/x", "  "]
    coded = url_key_codes(batch, chunk=2)
    assert coded.codes.tolist() == [0, 0, -1, 0, 0, -1]
    assert list(coded.keys) == ["a.org/x"]


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://a.org/x", "a.org/x"),
        ("http://a.org/x", "a.org/x"),
        ("HTTPS://a.org/x", "a.org/x"),
        ("hTtP://a.org/x", "a.org/x"),
        ("https://a.org/", "a.org/"),
        ("https://a.org/x/", "a.org/x"),
        ("https://a.org/x/?utm_source=1", "a.org/x"),
        ("https://a.org/x/#top", "a.org/x"),
        ("https://a.org/x?", "a.org/x"),
        ("https://a.org/x#", "a.org/x"),
        ("https://a.org/x?utm_source=1&fbclid=2#top", "a.org/x"),
        ("https://a.org/x?#top", "a.org/x"),
        ("https://www.a.org/x", "a.org/x"),
        ("https://www.a/x", "www.a/x"),  # no "." after "www.": kept
        ("https://www..a/x", ".a/x"),
        ("https://www.a.b.c/x", "a.b.c/x"),
        ("https://wwwa.org/x", "wwwa.org/x"),
        ("https://ww.a.org/x", "ww.a.org/x"),
        ("https://a.www.org/x", "a.www.org/x"),
        ("https://a-0.b9.org/~u/!$&'()*+,=:@/x", "a-0.b9.org/~u/!$&'()*+,=:@/x"),
        ("https://a.org/a.b/c.", "a.org/a.b/c."),
        ("https://a.org/a/b./c", "a.org/a/b./c"),
        ("https://a/x", "a/x"),
        ("https://-/x", "-/x"),
        ("https://a.org/Path/CASE", "a.org/Path/CASE"),
    ],
)
def test_sliced_keys(url: str, key: str) -> None:
    assert url_key(url) == key
    assert sliced([url]) == [key]
    assert sliced(["ftp://x/", url, "https://a.org"]) == [None, key, None]
    assert keys_of([url]) == [key]


@pytest.mark.parametrize(
    "url",
    [
        "https://A.org/x",  # upper-case host
        "https://a.Org/x",
        "https://a.org./x",  # trailing dot
        "https://www./x",
        "https://a.org",  # no path
        "https://a.org?x=1",
        "https://a.org#!x",
        "https://a.org:443/x",  # port
        "https://u@a.org/x",  # user info
        "https://a_b.org/x",
        "https:///x",  # empty host
        "https:/a.org/x",
        "https//a.org/x",
        "ftp://a.org/x",
        "httpss://a.org/x",
        "htt://a.org/x",
        "a.org/x",
        " https://a.org/x",  # whitespace
        "https://a.org/x ",
        "https://a.org/x y",
        "https://a.org/x?a b",
        "https://a.org/x#a b",
        "https://a.org/x\t",
        "https://a.org/x\x0b",
        "https://a.org/x\x1c",
        "https://a.org/x?\x1f",
        "https://a.org/x#\x7f",
        "https://a.org/x#\x01",
        "https://a.org/x\u3000",
        "https://a.org/x\xa0",
        "https://a.org/é",  # non-ASCII
        "https://a.org/x#é",
        "https://a.org/x?q=é",
        "https://a.org/\ud800",
        "https://a.org//x",  # "//" or "/." in the path
        "https://a.org/x//",
        "https://a.org/./x",
        "https://a.org/x/.",
        "https://a.org/x/..",
        "https://a.org/.x",
        "https://a.org/%41",  # not a plain path character
        "https://a.org/x;p",
        'https://a.org/x"',
        "https://a.org/x|",
        "https://a.org/x?b=1&a=2",  # a kept query not as written: sorted, tracking dropped, escapes
        "https://a.org/x?b=1&utm_source=2",
        "https://a.org/x?q=%41",
        "https://a.org/x/?b=1",  # a kept query after a trailing "/"
        "https://a.org/x?utm_source=1&b",
        "https://a.org/x#!",  # a #! route
        "https://a.org/x#!/r",
        "https://a.org/x?utm_source=1#!r",
        "https://a.org/x?#!",
    ],
)
def test_urls_the_reference_keys(url: str) -> None:
    assert sliced([url]) == [None]
    assert sliced(["https://a.org/y", url, "https://a.org/z"]) == ["a.org/y", None, "a.org/z"]
    assert keys_of([url, url.upper(), "https://a.org/y"]) == reference([url, url.upper(), "https://a.org/y"])


def test_a_url_is_read_up_to_its_own_end() -> None:
    # the next URL's bytes never complete or spoil this one's scheme, host, path or fragment
    batch = ["http", "://a.org/x", "https://a.org", "/x", "https://a.org/x", "!r", "https://a.org/x/", "/y"]
    assert sliced(batch) == [None, None, None, None, "a.org/x", None, "a.org/x", None]
    assert sliced(["https://a.org/x?utm_source=1", "#!r"]) == ["a.org/x", None]
    assert sliced(["https://a.org/x", "", "h", "http:"]) == ["a.org/x", None, None, None]
    assert keys_of(batch) == reference(batch)


@pytest.mark.parametrize(
    "batch",
    [
        [None, "https://a.org/x", None],
        ["https://a.org/x", "https://b.org/\x00y", "https://c.org/z"],
        ["https://a.org/x\x00", "https://c.org/z"],
        ["\x00", "https://c.org/z"],
    ],
)
def test_none_and_nul_in_a_chunk(batch: list[str | None]) -> None:
    expected = [None if u is None or "\x00" in u else url_key(u) for u in batch]
    assert sliced(batch) == expected
    assert keys_of(batch) == reference(batch)


def test_queries_are_normalised_once_each_with_the_given_denylists() -> None:
    batch = ["https://a.org/x?b=1&utm_source=2", "https://a.org/y?utm_source=2", "https://a.org/z?b=1"]
    assert keys_of(batch) == ["a.org/x?b=1", "a.org/y", "a.org/z?b=1"]
    assert keys_of(batch, frozenset({"b"}), ()) == ["a.org/x?utm_source=2", "a.org/y?utm_source=2", "a.org/z"]
    assert keys_of(batch, frozenset(), ("b", "utm_")) == ["a.org/x", "a.org/y", "a.org/z"]
    assert sliced(batch) == [None, "a.org/y", "a.org/z?b=1"]


@pytest.mark.parametrize(
    "url",
    [
        "https://a.org/x?b=1",
        "http://www.a.org/x?a=1&b=2#top",
        "https://a.org/?b=1",
        "https://a.org/x?b=",
        "https://a.org/x?ref=main&source=x",
        "https://a.org/x?b=1#",
        "https://a.org/x?q=a+b",
    ],
)
def test_a_query_kept_as_written_is_sliced_with_it(url: str) -> None:
    assert "?" in url_key(url)  # type: ignore[operator]
    assert sliced([url]) == [url_key(url)]
    assert keys_of([url, "https://a.org/y?b=1&a=2"]) == reference([url, "https://a.org/y?b=1&a=2"])
