"""URL keys for deduplication: one string per web resource, not a fetchable URL.

Two URLs get the same key when they name the same resource for the purpose of
counting search results once:

* scheme dropped for http and https (``http://`` ≡ ``https://``), kept for any other scheme;
* host lower-cased, IDNA-encoded, trailing dot and a leading ``www.`` removed;
  user info and default ports dropped (80 and 443 for http and https, which are one scheme here);
* path: percent-escapes decoded except ``%2F %3F %3B %25`` and re-encoded with
  upper-case hex (as w3lib's ``canonicalize_url`` does), dot segments resolved,
  ``//`` collapsed, a trailing ``/`` removed (except the root); **case kept**;
* query: ``+`` and ``%20`` are both a space, parameters sorted by name then value,
  blank values kept (``?a`` ≡ ``?a=``), tracking parameters dropped by *exact* name
  or *exact prefix* (never by substring: ``ref``, ``source`` and ``id`` carry content);
* fragment dropped, except a ``#!`` route.

>>> url_key("https://www.Example.com:443/a/b/?utm_source=x&b=2&a=1#top")
'example.com/a/b?a=1&b=2'
>>> url_key("http://example.com/a/b?b=2&a=1") == url_key("https://www.example.com/a/b/?a=1&b=2")
True
>>> url_key("https://github.com/o/r?ref=main") == url_key("https://github.com/o/r?ref=dev")
False
>>> url_key("https://example.com/Docs") == url_key("https://example.com/docs")
False
>>> url_key("   ") is None
True
"""

from __future__ import annotations

import contextlib
import ipaddress
import re
from collections.abc import Callable, Collection
from urllib.parse import SplitResult, quote_from_bytes, unquote_to_bytes, urlsplit

TRACKING_PARAM_NAMES: frozenset[str] = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "ref_src",
        "spm",
        "srsltid",
    }
)
"""Query parameters dropped from URL keys, compared by exact (case-insensitive) name."""

TRACKING_PARAM_PREFIXES: tuple[str, ...] = ("utm_", "pk_", "mtm_", "hsa_")
"""Query parameters whose (case-insensitive) name starts with one of these are dropped."""

_DEFAULT_PORTS = {"http": 80, "https": 443}
_WEB = ("", "http", "https")
_WEB_PORTS = (80, 443)
_PATH_SAFE = ":/?[]@!$&'()*+,;=|%"
_PROTECTED_ESCAPE = re.compile(r"%(25|2[fF]|3[bBfF])")
_SLASHES = re.compile(r"//+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_SIMPLE_WEB_URL = re.compile(
    r"[hH][tT][tT][pP][sS]?://([A-Za-z0-9.-]+)(/[^?#\s]*)?(?:\?([^#\s]*))?(?:#(\S*))?"
)
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~!$&'()*+,=:@/]*")


def _requote(text: str) -> str:
    """Decode percent-escapes except ``%2F %3F %3B %25``, re-encode with upper-case hex (as w3lib does)."""
    if "%" in text:
        text = _PROTECTED_ESCAPE.sub(lambda m: "%25" + m.group(1).upper(), text)
    return quote_from_bytes(unquote_to_bytes(text), safe=_PATH_SAFE)


def _normalise_path_once(path: str) -> str:
    semi = path.find(";", path.rfind("/") + 1)
    params = ""
    if semi != -1:  # parameters of the last segment, split off as urlparse does
        path, params = path[:semi], path[semi + 1 :]
    path = _requote(path)
    if not path.startswith("/"):
        path = "/" + path
    if "/." in path:
        path = _remove_dot_segments(path)
    if "//" in path:
        path = _SLASHES.sub("/", path)
    while len(path) > 1 and (path.endswith("/") or _empty_params(path)):
        path = path[:-1]
    return path + ";" + _requote(params) if params else path


def _normalise_path(path: str) -> str:
    """Re-encode the path, resolve dots, collapse ``//``, drop trailing ``/``; keep ``;params``.

    Stripping a trailing ``/`` can expose a new last segment with ``;params`` or a dot
    segment, so the steps repeat until the path is stable.
    """
    result = _normalise_path_once(path)
    while ";" in result or "/." in result:
        again = _normalise_path_once(result)
        if again == result:
            break
        result = again
    return result


def _empty_params(path: str) -> bool:
    """True when the last segment ends with its first ``;`` (an empty parameter list)."""
    return path.endswith(";") and path.find(";", path.rfind("/") + 1) == len(path) - 1


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 for a path that starts with ``/``."""
    segments = path[1:].split("/")
    output: list[str] = []
    for segment in segments[:-1]:
        if segment == "..":
            if output:
                output.pop()
        elif segment != ".":
            output.append(segment)
    last = segments[-1]
    if last in (".", ".."):
        if last == ".." and output:
            output.pop()
        output.append("")
    else:
        output.append(last)
    return "/" + "/".join(output)


def _quote_plus(raw: bytes) -> str:
    return quote_from_bytes(raw, safe=" ").replace(" ", "+")


def _is_tracking(name: bytes, names: Collection[str], prefixes: tuple[str, ...]) -> bool:
    text = name.decode("utf-8", "replace").lower()
    return text in names or text.startswith(prefixes)


def _normalise_query(query: str, names: Collection[str], prefixes: tuple[str, ...]) -> str:
    pairs: list[tuple[bytes, bytes]] = []
    for field in query.split("&"):
        if not field:
            continue
        name, _, value = field.partition("=")
        raw_name = unquote_to_bytes(name.replace("+", " "))
        if _is_tracking(raw_name, names, prefixes):
            continue
        pairs.append((raw_name, unquote_to_bytes(value.replace("+", " "))))
    pairs.sort()
    return "&".join(f"{_quote_plus(n)}={_quote_plus(v)}" for n, v in pairs)


def _normalise_host(hostname: str) -> str:
    host = hostname.rstrip(".")
    if ":" in host:  # IPv6 literal (urlsplit removed the brackets)
        try:
            return f"[{ipaddress.IPv6Address(host.split('%')[0]).compressed}]"
        except ValueError:
            return f"[{host}]"
    if not host.isascii():
        with contextlib.suppress(UnicodeError):  # too long or empty labels: keep the text
            host = host.encode("idna").decode("ascii")
    host = host.lower()
    if host.startswith("www.") and "." in host[4:]:
        host = host[4:]
    return host


def _split(url: str) -> SplitResult:
    if "://" not in url and not url.startswith("//"):
        scheme = _SCHEME.match(url)
        if scheme is None or "." in scheme.group(0):
            url = "//" + url  # "example.com/a" or "www.example.com:8080/a": a host without a scheme
    return urlsplit(url)


def _port_suffix(parts: SplitResult, scheme: str) -> str:
    try:
        port = parts.port
    except ValueError:  # not a number in range: keep it as written
        return ":" + parts.netloc.rpartition(":")[2]
    if port is None or port == _DEFAULT_PORTS.get(scheme) or (scheme in _WEB and port in _WEB_PORTS):
        return ""
    return f":{port}"


def url_key(
    url: str,
    *,
    tracking_names: Collection[str] = TRACKING_PARAM_NAMES,
    tracking_prefixes: tuple[str, ...] = TRACKING_PARAM_PREFIXES,
) -> str | None:
    """The dedup key of ``url``; ``None`` for a blank string.

    A URL without a scheme (``example.com/a``) is read as a host and path.
    ``tracking_names`` / ``tracking_prefixes`` replace the default denylists.

    >>> url_key("HTTPS://Bücher.example/ä?b&a=1")
    'xn--bcher-kva.example/%C3%A4?a=1&b='
    >>> url_key("https://example.com/a/./b/../c//d/")
    'example.com/a/c/d'
    >>> url_key("https://example.com/#!/route/7"), url_key("https://example.com/#section")
    ('example.com/#!/route/7', 'example.com/')
    >>> url_key("example.com/page?fbclid=1&utm_medium=x&sref=2")
    'example.com/page?sref=2'
    >>> url_key("https://[::1/broken")  # not a URL urlsplit can read: the text is the key
    'https://[::1/broken'
    >>> url_key(" https://a.org/\\ud800 ")  # a lone surrogate (no UTF-8 form): the text is the key
    'https://a.org/\\ud800'
    """
    return _key(url, lambda query: _normalise_query(query, tracking_names, tracking_prefixes))


def _key(url: str, query_key: Callable[[str], str]) -> str | None:
    """:func:`url_key`, with ``query_key`` giving the normalised form of a query string."""
    text = url.strip()
    if not text:
        return None
    try:
        simple = _SIMPLE_WEB_URL.fullmatch(text)
        if simple is not None:
            return _simple_key(simple, query_key)
        return _general_key(text, query_key)
    except ValueError:  # urlsplit refuses it ("Invalid IPv6 URL"), or it has no UTF-8 form (UnicodeError)
        return text  # still a result, deduplicated by the text as written


def _simple_key(match: re.Match[str], query_key: Callable[[str], str]) -> str:
    """The common case, without urlsplit: http(s), a plain ASCII host, no port or user info."""
    host, path, query, fragment = match.groups()
    host = host.rstrip(".").lower()
    if host.startswith("www.") and "." in host[4:]:
        host = host[4:]
    if not path:
        path = "/"
    elif _PLAIN_PATH.fullmatch(path) and "/." not in path and "//" not in path:
        path = path.rstrip("/") or "/"
    else:
        path = _normalise_path(path)
    key = host + path
    if query:
        query = query_key(query)
        if query:
            key += "?" + query
    if fragment and fragment.startswith("!"):
        key += "#" + fragment
    return key


def _cached_query_key(names: Collection[str], prefixes: tuple[str, ...]) -> Callable[[str], str]:
    """The normalised form of a query string, each distinct one computed once (for a batch of URLs)."""
    queries: dict[str, str] = {}

    def query_key(query: str) -> str:
        key = queries.get(query)
        if key is None:
            key = queries[query] = _normalise_query(query, names, prefixes)
        return key

    return query_key


def _general_key(text: str, query_key: Callable[[str], str]) -> str:
    parts = _split(text)
    scheme = parts.scheme.lower()
    path = _normalise_path(parts.path) if parts.path else "/"
    query = query_key(parts.query) if parts.query else ""
    fragment = parts.fragment if parts.fragment.startswith("!") else ""
    tail = path + ("?" + query if query else "") + ("#" + fragment if fragment else "")
    if parts.netloc or not scheme:
        host = _normalise_host(parts.hostname or "") + _port_suffix(parts, scheme)
        prefix = "" if scheme in _WEB else scheme + "://"
        return prefix + host + tail
    return f"{scheme}:{parts.path}" + ("?" + query if query else "")


def url_keys(
    urls: list[str | None],
    *,
    tracking_names: Collection[str] = TRACKING_PARAM_NAMES,
    tracking_prefixes: tuple[str, ...] = TRACKING_PARAM_PREFIXES,
) -> None:
    """Replace each URL of ``urls`` by its :func:`url_key`, in place (``None`` stays ``None``).

    The same as ``url_key`` one by one, with each distinct query string normalised once per call
    (search results share their tracking tails: ``?utm_source=...``).

    >>> urls = [None, "https://www.a.org/x/?utm_source=q&b=1", "http://a.org/x?b=1", "  "]
    >>> url_keys(urls)
    >>> urls
    [None, 'a.org/x?b=1', 'a.org/x?b=1', None]
    """
    query_key = _cached_query_key(tracking_names, tracking_prefixes)
    for i, url in enumerate(urls):
        if url is not None:
            urls[i] = _key(url, query_key)
