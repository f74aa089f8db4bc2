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

import numpy as np
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
_WHITE_CHARS = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f "
"""What ``str.split()`` splits ASCII text on."""
_WHITE = r"\t\n\x0b\x0c\r\x1c-\x1f "
_EDGE = "".join("\\" + ch if ch in "\\]^-[" else ch for ch in _ASCII_EDGE_PUNCTUATION)


def ascii_strings(values: Sequence[str | None]) -> pa.Array:
    """The ASCII strings of ``values`` as an arrow array; others (and ``None``) are null.

    Built from buffers: ``pa.array`` and Python scalars in pyarrow calls import pandas, when it is
    installed, which costs more than the work here.

    >>> ascii_strings(["ab", None, "é", ""]).to_pylist()
    ['ab', None, None, '']
    """
    kept = [v if v is not None and v.isascii() else None for v in values]
    valid = np.fromiter((v is not None for v in kept), bool, len(kept))
    offsets = np.zeros(len(kept) + 1, np.int64)
    np.cumsum(np.fromiter((len(v) if v is not None else 0 for v in kept), np.int64, len(kept)), out=offsets[1:])
    data = "".join(v for v in kept if v is not None).encode("ascii")
    buffers = [pa.py_buffer(np.packbits(valid, bitorder="little")), pa.py_buffer(offsets), pa.py_buffer(data)]
    return pa.Array.from_buffers(pa.large_string(), len(kept), buffers)


def _constant(text: str, n: int) -> pa.Array:
    """An array of ``n`` copies of an ASCII ``text`` (a pandas-free scalar)."""
    offsets = np.arange(n + 1, dtype=np.int64) * len(text)
    return pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(text.encode() * n)])


def url_keys(
    urls: Sequence[str | None],
    *,
    tracking_names: Collection[str] = TRACKING_PARAM_NAMES,
    tracking_prefixes: tuple[str, ...] = TRACKING_PARAM_PREFIXES,
) -> list[str | None]:
    """:func:`~ragmeter.dedup.url_key.url_key` of each URL (``None`` stays ``None``)."""
    n = len(urls)
    parts = pc.extract_regex(ascii_strings(urls), _SIMPLE_URL)
    host = pc.utf8_lower(pc.replace_substring_regex(parts.field("host"), r"\.+$", ""))
    host = pc.replace_substring_regex(host, r"^www\.(.*\..*)$", r"\1")
    path = parts.field("path")
    # else no match, or dot segments or '//' in the path (the reference resolves them)
    plain = pc.and_not(pc.is_valid(parts), pc.or_(pc.match_substring(path, "/."), pc.match_substring(path, "//")))
    path = pc.replace_substring_regex(pc.replace_substring_regex(path, r"^(.+?)/+$", r"\1"), "^$", "/")
    query = _queries(parts.field("query"), tracking_names, tracking_prefixes)
    fragment = pc.replace_substring_regex(parts.field("fragment"), "^([^!].*)?$", "")
    fragment = pc.replace_substring_regex(fragment, "^(!.*)$", r"#\1")
    keys = pc.binary_join_element_wise(host, path, query, fragment, _constant("", n))
    out: list[str | None] = pc.if_else(plain, keys, pa.nulls(n, pa.large_string())).to_pylist()
    for i, key in enumerate(out):
        if key is None and urls[i] is not None:
            out[i] = url_key(urls[i], tracking_names=tracking_names, tracking_prefixes=tracking_prefixes)
    return out


def _queries(query: pa.Array, names: Collection[str], prefixes: tuple[str, ...]) -> pa.Array:
    """``?`` + the normalised query (or ``""``), computed once per distinct query string."""
    distinct = pc.unique(query)
    normalised = []
    for text in distinct.to_pylist():
        q = _normalise_query(text, names, prefixes) if text else ""
        normalised.append("?" + q if q else "")
    return pc.take(ascii_strings(normalised), pc.index_in(query, value_set=distinct))


def normalised_texts(texts: Sequence[str | None]) -> list[str]:
    """:func:`~ragmeter.dedup.content_key.normalise_text` of each text (``None`` reads as ``""``)."""
    simple = ascii_strings([t if t is not None and "&" not in t else None for t in texts])
    text = pc.replace_substring_regex(simple, "(?s)" + _TAG.pattern, " ")
    text = pc.ascii_trim(pc.ascii_lower(text), _WHITE_CHARS + _ASCII_EDGE_PUNCTUATION)
    text = pc.replace_substring_regex(text, f"[{_EDGE}]*(?:[{_WHITE}]+[{_EDGE}]*)+", " ")
    out: list[str | None] = text.to_pylist()
    for i, value in enumerate(out):
        if value is None:
            out[i] = normalise_text(texts[i] or "")
    return out  # type: ignore[return-value]
