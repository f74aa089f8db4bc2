"""Whether the fast TREC reader may trust its split of a piece of a file: a check of the raw bytes.

The fast reader (:mod:`ragmeter.io.trec`) has pyarrow split each line at one delimiter (a space
or a tab). trec_eval, and the exact reader (:mod:`ragmeter.io.trec_exact`), split at runs of
ASCII whitespace (space, tab, vertical tab, form feed, carriage return) and end lines at
``\\n`` only. The two splits agree on a piece of a file when, besides its delimiters and line
ends, it holds no byte below 0x20 (another whitespace or a control character), no ``\\r`` other
than in ``\\r\\n``, no DEL or C1 control (which the exact reader refuses in an id), no
delimiter next to another or to a line end (an empty field, a blank line, trailing blanks)
and, in a tab-separated file, no space. :func:`plain` says whether that holds, with a few
passes of numpy over the bytes; any doubt sends the file to the exact reader.

>>> import numpy as np
>>> good = b"q1 Q0 d1 1 2.5 r\\nq1 Q0 d2 2 1.5 r\\n"
>>> plain(good, np.frombuffer(good, np.uint8), 0, len(good), rows=2, fields=6, tab=False)
True
>>> bad = b"q1 Q0 d1 \\t1 2.5 r\\n"  # a tab next to a space: the exact reader sees 6 fields, pyarrow 7
>>> plain(bad, np.frombuffer(bad, np.uint8), 0, len(bad), rows=1, fields=6, tab=False)
False
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

_CHUNK = 1 << 18
"""Bytes looked at per numpy pass (they stay in the CPU cache between the passes)."""


def plain(
    data: Any, arr: NDArray[np.uint8], start: int, stop: int, *, rows: int, fields: int, tab: bool
) -> bool:
    """Whether ``data[start:stop]``, which pyarrow read as ``rows`` lines of ``fields`` fields, splits as trec_eval splits it.

    ``data`` is the file's bytes (``bytes`` or an ``mmap``; its ``find`` is a fast ``memchr``),
    ``arr`` the same bytes as numpy; ``tab``: the delimiter is a tab, else a space.
    """
    if stop <= start:
        return True
    if int(arr[stop - 1]) in (9, 32):  # the last line ends with a delimiter and no newline
        return False
    newlines = rows - (0 if int(arr[stop - 1]) == 10 else 1)
    expected = rows * (fields - 1) + newlines
    # The usual file, printable ASCII between its delimiters, in one pass: pyarrow's split
    # holds exactly ``expected`` delimiters and row ends, so any other byte outside
    # 0x21..0x7E (a space in a tab-separated file, a control, DEL, a non-ASCII byte) makes
    # the count larger; then the checks below say whether that byte is allowed. A row end
    # is a newline, or a lone carriage return (pyarrow's, not trec_eval's): that one is
    # looked for apart.
    if _low_bytes(arr, start, stop, limit=33, printable=True) == (expected, 0) and (
        data.find(b"\r", start, stop) < 0
    ):
        return True
    if data.find(b"\x7f", start, stop) >= 0 or (tab and data.find(b" ", start, stop) >= 0):
        return False
    if data.find(b"\xc2", start, stop) >= 0 and _c1_control(arr, start, stop):
        return False
    marked, adjacent = _low_bytes(arr, start, stop, limit=32 if tab else 33)
    if data.find(b"\r", start, stop) < 0:
        return adjacent == 0 and marked == expected
    returns = np.flatnonzero(arr[start:stop] == 13) + start
    followed = returns + 1 < stop
    if not bool(followed.all()) or not bool((arr[returns + 1] == 10).all()):
        return False  # a carriage return inside a line: whitespace to trec_eval, a line end to pyarrow
    return adjacent == len(returns) and marked == expected + len(returns)


def _low_bytes(
    arr: NDArray[np.uint8], start: int, stop: int, *, limit: int, printable: bool = False
) -> tuple[int, int]:
    """How many bytes are below ``limit``, and how many of those follow another (or a line start).

    With ``printable``, the bytes counted are those below ``limit`` or above 0x7E.
    """
    size = min(_CHUNK, stop - start)
    flags = np.empty(size + 1, dtype=bool)
    both = np.empty(size, dtype=bool)
    shifted = np.empty(size if printable else 0, dtype=np.uint8)
    flags[0] = True  # the piece starts a line
    marked = adjacent = 0
    for at in range(start, stop, _CHUNK):
        chunk = arr[at : min(stop, at + _CHUNK)]
        n = len(chunk)
        low = flags[1 : n + 1]
        if printable:  # below limit or above 0x7E: (byte - limit) mod 256 > 0x7E - limit
            np.subtract(chunk, np.uint8(limit), out=shifted[:n])
            np.greater(shifted[:n], 0x7E - limit, out=low)
        else:
            np.less(chunk, limit, out=low)
        np.logical_and(low, flags[:n], out=both[:n])
        marked += int(np.count_nonzero(low))
        adjacent += int(np.count_nonzero(both[:n]))
        flags[0] = low[-1]
    return marked, adjacent


def _c1_control(arr: NDArray[np.uint8], start: int, stop: int) -> bool:
    """Whether the piece holds a C1 control character (U+0080..U+009F: bytes C2 80..C2 9F)."""
    lead = np.flatnonzero(arr[start : stop - 1] == 0xC2) + start + 1
    return bool(((arr[lead] >= 0x80) & (arr[lead] <= 0x9F)).any())
