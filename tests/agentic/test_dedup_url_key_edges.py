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
