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
    ],
)
def test_general_url_keys(url: str, key: str) -> None:
    assert url_key(url) == key
