"""URL keys on the general path (user info, ports, other schemes): routes, params, escapes, queries."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.dedup.url_key import url_key


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://user@a.org/app#!/route", "a.org/app#!/route"),  # a #! route names a page
        ("https://user@a.org/app#top", "a.org/app"),  # any other fragment does not
        ("https://a.org:8443/;", "a.org:8443/"),  # empty params at the root
        ("https://a.org:8443/a;/", "a.org:8443/a"),
        ("https://user@a.org/a%2fb%2F", "a.org/a%2Fb%2F"),  # a protected escape stays, upper-cased
        ("https://a.org:8443/x?utm_source=1&b=2", "a.org:8443/x?b=2"),
        ("mailto:a@b.org?subject=hi", "mailto:a@b.org?subject=hi"),  # other schemes keep their query
        ("mailto:a@b.org", "mailto:a@b.org"),
        ("https://a.org/a/;b", "a.org/a;b"),  # params of an empty last segment: the trailing / still goes
        ("https://a.org/b/.;/", "a.org/b"),  # a dot segment with empty params is a dot segment
        ("https://a.org/a/..;/", "a.org/"),
        ("https://a.org/x;;/", "a.org/x;;"),  # only an empty parameter list goes, not an empty parameter
        ("https://[fe80::1%25eth0]/x", "[fe80::1]/x"),  # an IPv6 zone names no other resource
        ("https://[FE80:0::1]:8443/x", "[fe80::1]:8443/x"),
        ("https://a.org:abc/x", "a.org:abc/x"),  # a port that is no number is kept as written
        ("https://a.org:99999/x", "a.org:99999/x"),
        ("https://:8080/x", ":8080/x"),  # no host at all
        ("http://user@/x", "/x"),
        (
            "https://a.org/a/;x/",
            "a.org/a;x",
        ),  # the trailing / goes, then the params move to the new last segment
        ("https://a.org/;;/", "a.org/;;"),
        ("https://a.org/?b=1&&a=2", "a.org/?a=2&b=1"),  # an empty field is skipped, not the end of the query
        ("https://a.org/?%FF=1&b=2", "a.org/?b=2&%FF=1"),  # a name that is no UTF-8 is kept, not refused
        ("https://bü..cher.de/x", "bü..cher.de/x"),  # a host IDNA refuses (an empty label) is kept as text
        ("//a.org/x", "a.org/x"),  # scheme-relative
        ("www.example.com:8080/a", "example.com:8080/a"),  # a host and port without a scheme
        ("https://user:pw@a.org:abc/x", "a.org:abc/x"),  # the port is after the last ':', past the user info
        ("https://EXAMPLE.BOX/", "example.box/"),  # only dots leave the end of a host
        ("https://a.org/TAX/", "a.org/TAX"),  # only slashes leave the end of a path
    ],
)
def test_general_url_keys(url: str, key: str) -> None:
    assert url_key(url) == key


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet="ab.-", min_size=1, max_size=8),
    st.sampled_from(["https://", "https://user@", "http://", ""]),
    st.sampled_from(["", ":8443"]),
)
def test_a_leading_www_goes_when_a_dot_follows(rest: str, scheme: str, port: str) -> None:
    with_www, without = url_key(f"{scheme}www.{rest}{port}/x"), url_key(f"{scheme}{rest}{port}/x")
    if "." in rest.rstrip("."):
        assert with_www == without
    else:  # www.com is a host of its own
        assert with_www != without


@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",  # urlsplit: "Invalid IPv6 URL"
        "https://[::1/broken",
        "//[fe80::1",
        "https://a.org/\ud800",  # a lone surrogate (JSON allows "\ud800"): no UTF-8 form
        "https://a.org/x?q=\udc00&utm_source=1",
        "https://user@a.org:8443/\ud800/",
    ],
)
def test_a_url_that_cannot_be_read_is_its_own_key(url: str) -> None:
    """No error (a result is still counted), the same key every time: the text as written, trimmed."""
    assert url_key(f"  {url} ") == url
    assert url_key(url) == url_key(url_key(url) or "")


def test_a_host_without_utf8_form_keeps_its_text() -> None:
    assert url_key("https://c\ud800.org/a/") == "c\ud800.org/a"
