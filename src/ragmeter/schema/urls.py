"""HTTP(S) endpoint URLs, checked when a file is loaded rather than when the first call fails.

>>> http_url_problem("http://127.0.0.1:8000/v1") is None
True
>>> http_url_problem("http://")
'has no host'
>>> check_http_url("ftp://example.org/x")
Traceback (most recent call last):
...
ValueError: must start with http:// or https://, got 'ftp://example.org/x'
"""

from __future__ import annotations

from urllib.parse import urlsplit


def http_url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as an http(s) endpoint, or ``None`` when it is usable.

    It needs the scheme ``http`` or ``https``, a host, a valid port if one is given, and no
    white space. The problem does not quote ``url`` (it may hold an expanded secret).

    >>> http_url_problem("http://localhost:99999/ask")
    'has an invalid port'
    """
    if not url.lower().startswith(("http://", "https://")):
        return "must start with http:// or https://"
    if any(ch.isspace() for ch in url):
        return "must not contain white space"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - parsing the port is the check
    except ValueError:
        return "has an invalid port"
    if not parts.hostname:
        return "has no host"
    return None


def check_http_url(url: str) -> str:
    """``url`` when :func:`http_url_problem` finds nothing; else ``ValueError`` with the problem.

    For pydantic validators: the error then names the field.

    >>> check_http_url("https://api.example.org/v1")
    'https://api.example.org/v1'
    """
    problem = http_url_problem(url)
    if problem is not None:
        raise ValueError(f"{problem}, got {url!r}")
    return url
