from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from w3lib.url import canonicalize_url

from ragmeter.dedup.url_key import url_key, url_keys

BASE = "https://www.example.com/guide/"


@pytest.mark.parametrize(
    "variant",
    [
        "http://www.example.com/guide/",  # scheme
        "https://example.com/guide/",  # www.
        "https://www.example.com/guide",  # trailing slash
        "https://www.example.com/guide/?utm_source=news&utm_medium=email",  # utm params
        "https://www.example.com/guide/#install",  # fragment
        "HTTPS://WWW.EXAMPLE.COM:443/guide/",  # host case, default port
        "https://www.example.com./guide/",  # trailing host dot
        "https://user:pw@www.example.com/guide/",  # user info
        "https://www.example.com/a/../guide/",  # dot segments
        "https://www.example.com//guide//",  # duplicate slashes
        "https://www.example.com/guide/?fbclid=abc&gclid=1&_ga=2&mc_eid=3",  # exact-name trackers
        "https://www.example.com/%67uide/",  # escaped unreserved character
        "www.example.com/guide",  # no scheme
    ],
)
def test_same_resource_same_key(variant: str) -> None:
    assert url_key(variant) == url_key(BASE) == "example.com/guide"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("https://github.com/o/r/blob/x?ref=main", "https://github.com/o/r/blob/x?ref=dev"),
        ("https://example.com/Guide", "https://example.com/guide"),  # path case is kept
        ("https://example.com/p?id=5", "https://example.com/p?id=6"),
        ("https://example.com/p?source=books", "https://example.com/p"),  # no substring matching
        ("https://example.com/p?refresh=1", "https://example.com/p"),
        ("https://example.com/a%2Fb", "https://example.com/a/b"),  # %2F keeps its meaning
        ("https://example.com:8080/p", "https://example.com/p"),  # non-default port
        ("https://m.example.com/p", "https://example.com/p"),  # m. is another host
        ("https://example.com/#!/route/1", "https://example.com/#!/route/2"),  # hash-bang routes
        ("ftp://example.com/p", "https://example.com/p"),  # only http/https lose the scheme
    ],
)
def test_different_resources_different_keys(a: str, b: str) -> None:
    assert url_key(a) != url_key(b)


def test_query_normalisation() -> None:
    assert url_key("https://e.com/s?b=2&a=1&a=0") == "e.com/s?a=0&a=1&b=2"
    assert url_key("https://e.com/s?q=a+b") == url_key("https://e.com/s?q=a%20b") == "e.com/s?q=a+b"
    assert url_key("https://e.com/s?q=a%2Bb") == "e.com/s?q=a%2Bb"
    assert url_key("https://e.com/s?flag") == url_key("https://e.com/s?flag=")
    assert url_key("https://e.com/s?x=a%26b") == "e.com/s?x=a%26b"  # an escaped & stays inside the value
    assert url_key("https://e.com/s?UTM_Source=x&Pk_campaign=y&k=1") == "e.com/s?k=1"


def test_host_forms() -> None:
    assert url_key("https://bücher.de/") == "xn--bcher-kva.de/"
    assert url_key("http://[::0:1]/x") == "[::1]/x"
    assert url_key("https://www.com/") == "www.com/"  # a bare "www." host keeps it
    assert url_key("") is None
    assert url_key("mailto:a@b.org") == "mailto:a@b.org"


# --- w3lib as the oracle: whatever w3lib calls the same URL, url_key must too -------------------

GOLDEN = [
    "http://www.example.com/do?c=3&b=5&b=2&a=50",
    "http://www.example.com/r\u00e9sum\u00e9",
    "http://www.example.com/a%7eb/%2f/%3F?q=%7e",
    "https://example.com/a b/c?d=e f&g=h+i",
    "https://example.com/a/./b/../c",
    "https://example.com/p;params?x=1;y=2",
    "https://example.com/%41%42%c3%a9?%41=%42",
    "https://example.com/Dia%25",
    "https://example.com/?",
    "https://example.com?a=1",
    "https://EXAMPLE.com/Case/Path",
    "https://example.com/#frag",
]


@pytest.mark.parametrize("url", GOLDEN)
def test_w3lib_golden(url: str) -> None:
    assert url_key(url) == url_key(canonicalize_url(url))


_segment = st.text(alphabet="abcAB09-._~%!$&'()*+,;=:@ é/", min_size=0, max_size=8)
_param = st.text(alphabet="abcXY01-._~%+ é=;/?", min_size=0, max_size=6)


@st.composite
def urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https"]))
    host = draw(st.sampled_from(["example.com", "www.example.com", "Example.ORG", "a.b.example.net"]))
    port = draw(st.sampled_from(["", ":80", ":443", ":8080"]))
    path = "/".join(draw(st.lists(_segment, max_size=4)))
    query = "&".join(f"{draw(_param)}={draw(_param)}" for _ in range(draw(st.integers(0, 3))))
    fragment = draw(
        st.sampled_from(["", "#top", "#a/b"])
    )  # never "#!": url_key keeps those, w3lib drops them
    return f"{scheme}://{host}{port}/{path}" + (f"?{query}" if query else "") + fragment


@settings(max_examples=300, deadline=None)
@given(urls())
def test_w3lib_equivalence_is_respected(url: str) -> None:
    assert url_key(url) == url_key(canonicalize_url(url))


@settings(max_examples=200, deadline=None)
@given(urls())
def test_url_key_is_stable_under_itself(url: str) -> None:
    key = url_key(url)
    assert key is not None
    assert url_key("https://" + key) == key


@settings(max_examples=300, deadline=None)
@given(urls())
def test_fast_path_agrees_with_the_general_path(url: str) -> None:
    from ragmeter.dedup.url_key import (
        TRACKING_PARAM_NAMES,
        TRACKING_PARAM_PREFIXES,
        _general_key,
        _normalise_query,
    )

    def query_key(query: str) -> str:
        return _normalise_query(query, TRACKING_PARAM_NAMES, TRACKING_PARAM_PREFIXES)

    assert url_key(url) == _general_key(url.strip(), query_key)


ODD_URLS = [
    None,
    "",
    "   ",
    " https://a.org/x?utm_source=1&b=2 ",
    "https://a.org/\ud800?b=1",  # a lone surrogate: the text is its own key
    "https://a.org/p?q=\udfff",
    " https://a.org/\ud800/x ",  # its key is the text, stripped
    "https://[::1/broken",
    "example.com/a?fbclid=1&b=2",
    "mailto:a@b.org?subject=hi",
    "https://user@a.org:8443/x?utm_medium=a&b=2#!/r",
    "HTTPS://WWW.A.ORG./A/./B/../C//?B=2&a=1#top",
]


@given(st.lists(st.one_of(urls(), st.sampled_from(ODD_URLS), st.text(max_size=12)), max_size=30))
@settings(max_examples=150)
def test_url_keys_equals_url_key_one_by_one(batch: list[str | None]) -> None:
    """The batch form keeps each query's key once per call: the same keys as url_key, in place."""
    expected = [None if u is None else url_key(u) for u in batch]
    keys = list(batch)
    url_keys(keys)
    assert keys == expected
    names, prefixes = frozenset({"b"}), ("a",)  # other denylists: the cached queries follow them
    expected = [
        None if u is None else url_key(u, tracking_names=names, tracking_prefixes=prefixes) for u in batch
    ]
    keys = list(batch)
    url_keys(keys, tracking_names=names, tracking_prefixes=prefixes)
    assert keys == expected


def test_url_keys_on_repeated_queries_and_odd_urls() -> None:
    batch = ODD_URLS + ["https://a.org/x?utm_source=1&b=2", "https://c.org/?b=2&utm_source=1"] * 2
    keys = list(batch)
    url_keys(keys)
    assert keys == [None if u is None else url_key(u) for u in batch]
    assert keys[-4:] == ["a.org/x?b=2", "c.org/?b=2"] * 2
    assert keys[4] == "https://a.org/\ud800?b=1"
