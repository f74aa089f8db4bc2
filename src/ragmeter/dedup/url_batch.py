"""URL keys of many URLs at once, as codes: :func:`~ragmeter.dedup.url_key.url_key` over a list, vectorised.

Most URLs of search results are *sliceable*: their key is one slice of the URL as written.
That is so for ``http://`` or ``https://`` (any case), then a host of ``[a-z0-9.-]`` that does
not end with ``.``, then a path of the plain characters (``_PLAIN_PATH``) without ``//`` or
``/.``, then an optional query whose normalised form is empty (tracking parameters only) or the query as
written (kept after a path that does not end with ``/``, or the root), then an optional
fragment that does not start with ``!``, and no byte outside ``!``..``~`` anywhere. Its key is
the host without a leading ``www.`` (when a ``.`` follows it) and the path without a trailing
``/`` (but for the root ``/``), then the kept query.

The URLs of a chunk are joined into one byte buffer, and those slices are found with numpy in
a few passes over the bytes that are not ``[a-z0-9.-]``. Any other URL goes through
``url_key`` itself (each distinct query is normalised once). Equal keys get equal codes, by
pyarrow's ``dictionary_encode`` of the slices and of the other keys' UTF-8 (lone surrogates
passed through, so equal strings are equal bytes): no Python string is made for a sliceable
key. The keys are made on demand, by code.

>>> coded = url_key_codes([None, "https://www.a.org/x/", "http://A.org/x?utm_source=q", "  "])
>>> coded.codes.tolist(), coded.keys[0], len(coded.keys)
([-1, 0, 0, -1], 'a.org/x', 1)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from ragmeter.dedup.url_key import (
    _PLAIN_PATH,
    TRACKING_PARAM_NAMES,
    TRACKING_PARAM_PREFIXES,
    _cached_query_key,
    _key,
)
from ragmeter.dedup.vector_dedup import Ints, arrow_ints, numpy_ints

Bytes = npt.NDArray[np.uint8]

_CHUNK = 1 << 16


_HOST_BYTES = "abcdefghijklmnopqrstuvwxyz0123456789.-"
_SPECIAL = bytes(0 if chr(b) in _HOST_BYTES else 1 for b in range(256))
"""A ``bytes.translate`` table: 1 for each byte not in a sliceable host (the passes look at these only)."""
_NOT_PLAIN = np.array([_PLAIN_PATH.fullmatch(chr(b)) is None for b in range(256)])
"""Bytes that are not in a plain path (``_PLAIN_PATH``, as ``url_key`` reads it)."""
_BAD = np.array([not 0x21 <= b <= 0x7E for b in range(256)])
"""Whitespace, control bytes and non-ASCII: none of them is in a sliceable URL."""
_PATH_ENDS = np.frombuffer(b"?#\x00", np.uint8)
_PADDING = b"a" * 8
"""After a chunk's last NUL: the 8 bytes read at the start of a URL never leave the buffer."""


class UrlKeys(Sequence[str]):
    """The distinct keys by code, each made (decoded) when it is asked for."""

    def __init__(self, dictionary: pa.Array) -> None:
        self._dictionary = dictionary

    def __len__(self) -> int:
        return len(self._dictionary)

    def __getitem__(self, code: int) -> str:  # type: ignore[override]
        value: bytes = self._dictionary[code].as_py()
        return value.decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        for value in self._dictionary.to_pylist():
            yield value.decode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class UrlKeyCodes:
    """The code of each URL's key (-1 for ``None`` or a blank URL), and the keys by code."""

    codes: Ints
    keys: UrlKeys


def url_key_codes(
    urls: Sequence[str | None],
    *,
    tracking_names: Collection[str] = TRACKING_PARAM_NAMES,
    tracking_prefixes: tuple[str, ...] = TRACKING_PARAM_PREFIXES,
    chunk: int = _CHUNK,
    progress: Callable[[int], None] | None = None,
) -> UrlKeyCodes:
    """Codes of the :func:`~ragmeter.dedup.url_key.url_key` of each URL: equal keys, equal codes.

    ``tracking_names`` / ``tracking_prefixes`` replace the default denylists, as for ``url_key``.
    The URLs are read ``chunk`` at a time (it bounds the memory of the numpy passes);
    ``progress(urls)`` hears of each chunk done.

    >>> coded = url_key_codes(["https://a.org/#x", "a.org", "mailto:a@b.org", None])
    >>> coded.codes.tolist(), list(coded.keys)
    ([0, 0, 1, -1], ['a.org/', 'mailto:a@b.org'])
    """
    query_key = _cached_query_key(tracking_names, tracking_prefixes)
    codes = np.full(len(urls), -1, np.int64)
    arrays: list[pa.Array] = []
    places: list[Ints] = []
    others: list[bytes] = []
    other_places: list[int] = []
    for start in range(0, len(urls), chunk):
        part = urls[start : start + chunk]
        sliced, where = _sliceable(part, query_key)
        arrays.append(sliced)
        places.append(where + start)
        rest = np.ones(len(part), bool)
        rest[where] = False
        for i in np.flatnonzero(rest).tolist():
            url = part[i]
            key = None if url is None else _key(url, query_key)
            if key is not None:
                others.append(key.encode("utf-8", "surrogatepass"))
                other_places.append(start + i)
        if progress is not None:
            progress(len(part))
    arrays.append(_binary(others))
    places.append(np.array(other_places, np.int64))
    encoded = pa.concat_arrays(arrays).dictionary_encode()
    codes[np.concatenate(places)] = numpy_ints(encoded.indices)
    return UrlKeyCodes(codes, UrlKeys(encoded.dictionary))


def _binary(values: list[bytes]) -> pa.Array:
    """``values`` as an arrow array (``pa.array`` would import pandas)."""
    offsets = np.zeros(len(values) + 1, np.int64)
    np.cumsum(np.fromiter(map(len, values), np.int64, len(values)), out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(values))]
    return pa.Array.from_buffers(pa.large_binary(), len(values), buffers)


def _spans(raw: bytes, starts: Ints, stops: Ints) -> pa.Array:
    """The bytes ``raw[start:stop]`` for each ``start`` and ``stop``, in order and not overlapping.

    Read through one arrow array of the spans and the gaps between them, without a copy of ``raw``.
    """
    if not len(starts):
        return _binary([])
    bounds = np.empty(2 * len(starts), np.int64)
    bounds[0::2], bounds[1::2] = starts, stops
    spans_and_gaps = pa.Array.from_buffers(
        pa.large_binary(), len(bounds) - 1, [None, pa.py_buffer(bounds), pa.py_buffer(raw)]
    )
    return spans_and_gaps.take(arrow_ints(np.arange(0, len(bounds), 2)))


def _next(positions: Ints, at: Ints) -> Ints:
    """For each of ``at``: the first of the sorted ``positions`` at or after it (else past them all)."""
    return np.append(positions, 1 << 62)[np.searchsorted(positions, at)]


def _word(raw: bytes, size: int, at: Ints) -> npt.NDArray[np.uint64]:
    """The ``size`` bytes of ``raw`` at each of ``at``, as one little-endian number."""
    words = np.ndarray((len(raw) - size + 1,), f"<u{size}", raw, 0, (1,))
    return words[at].astype("<u8")


def _number(text: bytes) -> int:
    return int.from_bytes(text, "little")


_HTTPS, _HTTP, _WWW = _number(b"https://"), _number(b"http://"), _number(b"www.")
_SEVEN_BYTES = _number(b"\xff" * 7)


def _joined(chunk: Sequence[str | None]) -> bytes:
    """The URLs' UTF-8 (lone surrogates passed through), each followed by a NUL, then the padding.

    A ``None`` is written as ``""`` (not sliceable).
    """
    try:
        joined = "\x00".join(chunk)  # type: ignore[arg-type]
    except TypeError:  # a None
        joined = "\x00".join(["" if u is None else u for u in chunk])
    return (joined + "\x00").encode("utf-8", "surrogatepass") + _PADDING


def _has_byte(buf: Bytes, starts: Ints, stops: Ints, byte: int) -> npt.NDArray[np.bool_]:
    """Whether ``byte`` is in each ``buf[start:stop]``."""
    sizes = np.maximum(stops - starts, 0)
    ends = np.cumsum(sizes)
    at = np.repeat(starts - (ends - sizes), sizes) + np.arange(ends[-1] if len(ends) else 0)
    hits = np.concatenate([[0], np.cumsum(buf[at] == byte)])
    found: npt.NDArray[np.bool_] = hits[ends] > hits[ends - sizes]
    return found


def _sliceable(chunk: Sequence[str | None], query_key: Callable[[str], str]) -> tuple[pa.Array, Ints]:
    """The keys of the sliceable URLs of ``chunk`` (as bytes), and where those URLs are in it."""
    raw = _joined(chunk)
    buf: Bytes = np.frombuffer(raw, np.uint8)
    special = np.flatnonzero(np.frombuffer(raw.translate(_SPECIAL), bool))
    kinds = buf[special]
    stops = special[kinds == 0]  # the NUL after each URL
    if len(stops) > len(chunk):  # a URL with a NUL: written as "" (not sliceable)
        return _sliceable(["" if u is None or "\x00" in u else u for u in chunk], query_key)
    starts = np.concatenate([[0], stops[:-1] + 1])
    head = np.frombuffer(_word(raw, 8, starts).tobytes().lower(), "<u8")  # the scheme in lower case
    secure = head == _HTTPS
    ok = secure | (head & _SEVEN_BYTES == _HTTP)
    host = np.minimum(starts + 7 + secure, stops)
    host_end = special[np.searchsorted(special, host)]
    ok &= (host_end > host) & (buf[host_end - 1] != ord(".")) & (buf[host_end] == ord("/"))
    ok[np.searchsorted(stops, special[_BAD[kinds] & (kinds != 0)])] = False
    path_end = _next(special[_NOT_PLAIN[kinds]], host_end)
    ok &= np.isin(buf[path_end], _PATH_ENDS)
    slashes = special[kinds == ord("/")]
    pairs = slashes[(buf[slashes + 1] == ord("/")) | (buf[slashes + 1] == ord("."))]
    ok &= _next(pairs, host_end) + 1 >= path_end  # no "//" or "/." in the path
    fragment = np.minimum(_next(special[kinds == ord("#")], path_end), stops)
    ok &= (fragment == stops) | (buf[fragment + 1] != ord("!"))
    slash_cut = (path_end - 1 > host_end) & (buf[path_end - 1] == ord("/"))  # a trailing "/" goes
    cut = path_end - slash_cut
    query = np.flatnonzero(ok & (path_end + 1 < fragment))
    if len(query):
        distinct = _spans(raw, path_end[query] + 1, fragment[query]).dictionary_encode()
        texts = [text.decode("ascii") for text in distinct.dictionary.to_pylist()]
        normalised = list(map(query_key, texts))
        per_query = numpy_ints(distinct.indices)
        kept = np.array(list(map(bool, normalised)), bool)[per_query]
        as_written = np.array([n == t for n, t in zip(normalised, texts, strict=True)], bool)[per_query]
        whole = kept & as_written & ~slash_cut[query]  # the key runs on to the end of the query
        cut[query[whole]] = fragment[query[whole]]
        ok[query[kept & ~whole]] = False
    where = np.flatnonzero(ok)
    host, host_end = host[where], host_end[where]
    www = _word(raw, 4, host) == _WWW
    www[www] = _has_byte(buf, host[www] + 4, host_end[www], ord("."))
    return _spans(raw, host + 4 * www, cut[where]), where
