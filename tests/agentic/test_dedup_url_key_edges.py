"""URL keys on the general path (user info, ports, other schemes): routes, params, escapes, queries."""

from __future__ import annotations

import pytest

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
    ],
)
def test_general_url_keys(url: str, key: str) -> None:
    assert url_key(url) == key


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
