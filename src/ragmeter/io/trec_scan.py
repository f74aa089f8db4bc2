"""One pass in C over a regular TREC file: the fast reader's first try (``ragmeter._trec_scan``).

A regular file is one whose every line has exactly the expected fields of printable ASCII,
one space (or one tab) between them, and a newline at the end: what trec_eval, the exact
reader and pyarrow all split alike. For such a file (or slice of one) :func:`scan` gives what
the reader keeps, the docnos, the values and the topic of each run of lines, in one pass that lets other threads run, at about four times pyarrow's CSV reader's
speed. For anything else, or when the compiled module was not built, it gives ``None`` and the
reader parses the bytes with pyarrow as before, which also decides whether the exact reader
must read the file.

Scores are read as the exact reader reads them when their value is certain to be rounded
exactly (at most 2^53 in their significant digits, a power of ten up to 22; ``20.331326``,
``-0.5``, ``1e3``); longer ones (``0.12345678901234567``) are left to pyarrow.

>>> import numpy as np
>>> found = scan(b"q1 Q0 d1 1 2.5 r\\nq1 Q0 d22 2 -1e-2 r\\nq2 Q0 d1 1 0 r\\n", 0, 48, fields=6, value_field=4, whole=False, delimiter=" ")
>>> if found is not None:  # the compiled module was built
...     assert found.docno.to_pylist() == ["d1", "d22", "d1"] and found.values.tolist() == [2.5, -0.01, 0.0]
...     assert found.run_names == ["q1", "q2"] and found.run_lengths.tolist() == [2, 1]
>>> scan(b"q1 Q0 d1 1 2.5 r\\r\\n", 0, 17, fields=6, value_field=4, whole=False, delimiter=" ") is None  # a carriage return
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

try:
    from ragmeter import _trec_scan
except ImportError:  # built without a C compiler: pyarrow reads every file
    _trec_scan = None  # type: ignore[assignment]

_MOST_RUNS = 1 << 12
"""Runs of one topic a piece may have beyond 1/16 of its lines before the scan gives up on it."""


@dataclass(frozen=True)
class Scanned:
    """A regular piece of a file, scanned."""

    docno: pa.Array
    """The docnos (Arrow strings)."""
    values: NDArray[np.float64]
    """The score (or relevance) of each line."""
    run_names: list[str]
    """The topic of each run of lines with one topic."""
    run_lengths: NDArray[np.int32]
    """The lines in each run."""


def available() -> bool:
    """Whether the compiled scan was built (else :func:`scan` always gives ``None``)."""
    return _trec_scan is not None


def scan(
    data: Any, start: int, stop: int, *, fields: int, value_field: int, whole: bool, delimiter: str
) -> Scanned | None:
    """Scan ``data[start:stop]``, or ``None``: topic, docno and value are fields 0, 2 and ``value_field``.

    A run is ``fields=6, value_field=4``; qrels ``fields=4, value_field=3, whole=True``.

    ``data`` is any buffer (bytes, an mmap). Nothing returned refers to it, so it may be
    reused at once. ``None``: the piece is not regular, or the module was not built.
    """
    if _trec_scan is None or stop - start >= 1 << 31:
        return None
    capacity = (stop - start) // (2 * fields - 1) + 1  # lines, at most: "a b c d e f" is the shortest
    try:  # room for the most lines the piece can hold; only the pages written take memory
        offsets = np.empty(capacity + 1, dtype=np.int32)
        text = np.empty(max(stop - start, 1), dtype=np.uint8)
        values = np.empty(capacity, dtype=np.float64)
    except MemoryError:  # a huge piece (a decompressed file) on a small machine: pyarrow's blocks
        return None
    found = _trec_scan.scan(
        data,
        start,
        stop,
        fields,
        value_field,
        whole,
        ord(delimiter),
        offsets,
        text,
        values,
        max(_MOST_RUNS, capacity >> 4),
    )
    if found is None:
        return None
    lines, used, names, lengths = found
    docno = pa.Array.from_buffers(
        pa.string(), lines, [None, pa.py_buffer(offsets[: lines + 1]), pa.py_buffer(text[:used])]
    )
    return Scanned(docno, values[:lines], names, np.frombuffer(lengths, dtype=np.int32))
