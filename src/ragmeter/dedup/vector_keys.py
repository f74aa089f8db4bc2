"""URL keys and normalised texts for many distinct strings at once (pyarrow), equal to the reference.

The common shapes are done with pyarrow's vectorised string kernels: an ``http(s)`` URL with a
plain host and path (:func:`url_keys`), an ASCII text without ``&`` (:func:`normalised_texts`).
Everything else goes through the reference functions one string at a time
(:func:`ragmeter.dedup.url_key.url_key`, :func:`ragmeter.dedup.content_key.normalise_text`),
as do the query strings, once per distinct query. The results are the reference's, string for
string; a property test checks it on random strings.

>>> url_keys(["https://www.A.org/x/?utm_source=n&b=2&a=1#top", None, "ftp://a.org/x", "  "])
['a.org/x?a=1&b=2', None, 'ftp://a.org/x', None]
>>> normalised_texts(["<b>Python&nbsp;3.11</b> — new?", "  The END...  ", None])
['python 3.11 new', 'the end', '']
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ragmeter.dedup.content_key import _ASCII_EDGE_PUNCTUATION, _TAG, normalise_text
from ragmeter.dedup.url_key import (
    TRACKING_PARAM_NAMES,
    TRACKING_PARAM_PREFIXES,
    _normalise_query,
    url_key,
)

_PLAIN = r"A-Za-z0-9\-._~!$&'()*+,=:@/"
_SIMPLE_URL = (
    r"^[hH][tT][tT][pP][sS]?://(?P<host>[A-Za-z0-9.\-]+)"
    rf"(?P<path>/[{_PLAIN}]*)?"
    r"(?:\?(?P<query>[!-\"$-~]*))?"  # printable ASCII, no '#' (RE2's \s is not Python's)
    r"(?:#(?P<fragment>[!-~]*))?$"
)
_WHITE = r"\t\n\x0b\x0c\r\x1c-\x1f "  # what str.split() splits ASCII text on
_EDGE = "".join("\\" + ch if ch in "\\]^-[" else ch for ch in _ASCII_EDGE_PUNCTUATION)


def url_keys(
    urls: Sequence[str | None],
    *,
    tracking_names: Collection[str] = TRACKING_PARAM_NAMES,
    tracking_prefixes: tuple[str, ...] = TRACKING_PARAM_PREFIXES,
) -> list[str | None]:
    """:func:`~ragmeter.dedup.url_key.url_key` of each URL (``None`` stays ``None``)."""
    if not urls:
        return []
    parts = pc.extract_regex(pa.array(urls, pa.string()), _SIMPLE_URL)
    host = parts.field("host")
    path = parts.field("path")
    host = pc.utf8_lower(pc.replace_substring_regex(host, r"\.+$", ""))
    host = pc.replace_substring_regex(host, r"^www\.(.*\..*)$", r"\1")
    # else no match, or dot segments or '//' in the path (the reference resolves them)
    plain = pc.and_not(pc.is_valid(parts), pc.or_(pc.match_substring(path, "/."), pc.match_substring(path, "//")))
    path = pc.replace_substring_regex(path, r"/+$", "")
    path = pc.if_else(pc.equal(path, ""), "/", path)
    query = _queries(parts.field("query"), tracking_names, tracking_prefixes)
    fragment = parts.field("fragment")
    fragment = pc.if_else(pc.starts_with(fragment, "!"), pc.binary_join_element_wise("#", fragment, ""), "")
    keys = pc.binary_join_element_wise(host, path, query, fragment, "")
    keys = pc.if_else(plain, keys, None).to_pylist()
    for i, key in enumerate(keys):
        if key is None and urls[i] is not None:
            keys[i] = url_key(urls[i], tracking_names=tracking_names, tracking_prefixes=tracking_prefixes)
    return keys


def _queries(query: pa.Array, names: Collection[str], prefixes: tuple[str, ...]) -> pa.Array:
    """``?`` + the normalised query (or ``""``), computed once per distinct query string."""
    distinct = pc.unique(query)
    normalised = []
    for text in distinct.to_pylist():
        q = _normalise_query(text, names, prefixes) if text else ""
        normalised.append("?" + q if q else "")
    return pc.take(pa.array(normalised, pa.string()), pc.index_in(query, value_set=distinct))


def normalised_texts(texts: Sequence[str | None]) -> list[str]:
    """:func:`~ragmeter.dedup.content_key.normalise_text` of each text (``None`` reads as ``""``)."""
    if not texts:
        return []
    array = pa.array(texts, pa.string())
    simple = pc.and_(pc.string_is_ascii(array), pc.invert(pc.match_substring(array, "&")))
    text = pc.replace_substring_regex(array, "(?s)" + _TAG.pattern, " ")
    text = pc.ascii_lower(text)
    text = pc.replace_substring_regex(text, f"^[{_WHITE}{_EDGE}]+|[{_WHITE}{_EDGE}]+$", "")
    text = pc.replace_substring_regex(text, f"[{_EDGE}]*(?:[{_WHITE}]+[{_EDGE}]*)+", " ")
    out: list[str | None] = pc.if_else(pc.fill_null(simple, True), pc.fill_null(text, ""), None).to_pylist()
    for i, value in enumerate(out):
        if value is None:
            out[i] = normalise_text(texts[i] or "")
    return out  # type: ignore[return-value]
