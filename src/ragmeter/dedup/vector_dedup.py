"""Two-phase deduplication of many traces at once, on integer key codes (numpy), equal to the reference.

:func:`ragmeter.dedup.two_phase.deduplicate` walks the results of one trace in order; each
result joins the cluster found through its strongest key that an *earlier* result of the trace
registered (domain id; else generic id; URL; exact content; content prefix), unless phase 2
vetoes it because two present ids of one kind differ. Without vetoes, a result's cluster is
the cluster of the first earlier result sharing that key, so clusters follow from *parent*
pointers computed for all results at once, and the roots are the first occurrences.

A veto can only change the outcome where a cluster ends up holding two different domain ids or
two different generic ids: by induction over the results, if no cluster of a trace does, no
veto fired and the outcome is the reference's. The traces where one does are returned in
``conflicts``, for the reference to deduplicate.

>>> import numpy as np
>>> none = np.full(4, -1)
>>> keys = CodedKeys(trace=np.zeros(4, np.int64), domain=none, generic=np.array([-1, -1, 7, -1]),
...     url=np.array([0, 1, 2, 0]), content=np.array([5, 6, 5, 8]), candidate=np.array([1, 1, 1, 0], bool),
...     prefix=none, snippets=[], snippet=none, content_boilerplate=np.zeros(4, bool),
...     prefix_boilerplate=np.zeros(4, bool))
>>> out = deduplicate_coded(keys, prefix_chars=50)
>>> out.cluster.tolist(), out.match.tolist(), out.conflicts.tolist()
([0, 1, 0, 0], [0, 0, 4, 3], [])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from ragmeter.dedup.two_phase import MATCH_KINDS

Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]

MATCH_CODES: dict[int, str] = {i + 1: str(kind) for i, kind in enumerate(MATCH_KINDS)}
"""Match codes in :attr:`CodedOutcome.match`: 0 = first occurrence, then one per match kind."""
_DOMAIN, _GENERIC, _URL, _CONTENT = 1, 2, 3, 4


@dataclass(frozen=True)
class CodedKeys:
    """The phase-1 keys of every result as integer codes (``-1`` = absent), results in trace order.

    ``trace``: the trace of each result (results of one trace are contiguous). ``generic`` must
    be ``-1`` where ``domain`` is set (the domain id wins). ``content`` is always set; ``prefix``
    only for content candidates with a long enough snippet. ``snippet`` codes index ``snippets``
    (normalised snippets, for the prefix check). The boilerplate masks say, per result, whether its
    content or prefix key is boilerplate run-wide.
    """

    trace: Ints
    domain: Ints
    generic: Ints
    url: Ints
    content: Ints
    candidate: Bools
    prefix: Ints
    snippets: list[str]
    snippet: Ints
    content_boilerplate: Bools
    prefix_boilerplate: Bools


@dataclass(frozen=True)
class CodedOutcome:
    """Cluster of each result, how it matched, and the traces the reference must deduplicate instead.

    Clusters are numbered run-wide in order of first occurrence; the clusters of the traces in
    ``conflicts`` are not to be used.
    """

    cluster: Ints
    match: npt.NDArray[np.int8]
    conflicts: Ints


def arrow_ints(values: Ints) -> pa.Array:
    """An int64 numpy array as an arrow array, without a copy (``pa.array`` would import pandas)."""
    values = np.ascontiguousarray(values, np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def numpy_ints(array: pa.Array) -> Ints:
    """An integer arrow array without nulls as int64 numpy values (``to_numpy`` would import pandas)."""
    width = array.type.bit_width // 8
    values = np.frombuffer(array.buffers()[1], np.dtype(f"int{width * 8}"), len(array), array.offset * width)
    return values.astype(np.int64)


def _encode(values: Ints) -> Ints:
    """Codes numbered in order of first appearance."""
    return numpy_ints(pc.dictionary_encode(arrow_ints(values)).indices)


def first_positions(values: Ints) -> Ints:
    """Where each distinct value first occurs, in order of first appearance (hashing, not sorting).

    >>> first_positions(np.array([7, 3, 7, 5, 3])).tolist()
    [0, 1, 3]
    """
    if not len(values):
        return np.zeros(0, np.int64)
    return code_firsts(_encode(values))


def code_firsts(codes: Ints) -> Ints:
    """Where each code first occurs, for codes numbered in order of first appearance (as :func:`_encode` gives).

    >>> code_firsts(np.array([0, 1, 0, 2, 1])).tolist()
    [0, 1, 3]
    """
    new = np.empty(len(codes), bool)
    new[:1] = True
    new[1:] = codes[1:] > np.maximum.accumulate(codes[:-1])
    return np.flatnonzero(new)


def first_in_trace(trace: Ints, code: Ints) -> Ints:
    """For each result, the index of the first result of its trace with the same code (-1 if absent).

    >>> first_in_trace(np.array([0, 0, 0, 1, 1]), np.array([3, -1, 3, 3, 3])).tolist()
    [0, -1, 0, 3, 3]
    """
    out = np.full(len(code), -1, np.int64)
    where = np.flatnonzero(code >= 0)
    if not len(where):
        return out
    combined = trace[where].astype(np.int64) * (int(code.max()) + 1) + code[where]
    entry = _encode(combined)
    out[where] = where[code_firsts(entry)][entry]
    return out


def dense_codes(code: Ints) -> Ints:
    """Renumber codes 0..n-1 in order of first appearance (``-1`` stays ``-1``).

    >>> dense_codes(np.array([10**12, -1, 5, 10**12])).tolist()
    [0, -1, 1, 0]
    """
    out = np.full(len(code), -1, np.int64)
    where = np.flatnonzero(code >= 0)
    if len(where):
        out[where] = _encode(code[where])
    return out


def deduplicate_coded(keys: CodedKeys, *, prefix_chars: int) -> CodedOutcome:
    """Cluster every trace's results as the reference does (see the module docstring)."""
    n = len(keys.trace)
    index = np.arange(n, dtype=np.int64)
    parent = np.full(n, -1, np.int64)
    match = np.zeros(n, np.int8)

    def offer(allowed: Bools, first: Ints, kind: int) -> None:
        take = allowed & (parent < 0) & (first >= 0) & (first < index)
        parent[take] = first[take]
        match[take] = kind

    trace = keys.trace
    offer(keys.domain >= 0, first_in_trace(trace, keys.domain), _DOMAIN)
    offer(keys.generic >= 0, first_in_trace(trace, keys.generic), _GENERIC)
    offer(keys.url >= 0, first_in_trace(trace, keys.url), _URL)
    offer(keys.candidate & ~keys.content_boilerplate, first_in_trace(trace, keys.content), _CONTENT)
    first_prefix = first_in_trace(trace, keys.prefix)
    maybe = (
        keys.candidate
        & ~keys.prefix_boilerplate
        & (parent < 0)
        & (first_prefix >= 0)
        & (first_prefix < index)
    )
    snippets, snippet = keys.snippets, keys.snippet
    for i in np.flatnonzero(maybe).tolist():
        j = int(first_prefix[i])
        mine, other = snippets[snippet[i]], snippets[snippet[j]]
        shorter, longer = (mine, other) if len(mine) <= len(other) else (other, mine)
        if len(shorter) >= prefix_chars and longer.startswith(shorter):
            parent[i] = j
            match[i] = _CONTENT

    root = np.where(parent >= 0, parent, index)
    while True:  # parents come earlier: a few rounds of pointer jumping reach every root
        further = root[root]
        if np.array_equal(further, root):
            break
        root = further
    roots = np.flatnonzero(parent < 0)
    cluster = (np.cumsum(parent < 0) - 1)[root]
    return CodedOutcome(cluster=cluster, match=match, conflicts=_conflicts(trace[roots], cluster, keys))


def _conflicts(cluster_trace: Ints, cluster: Ints, keys: CodedKeys) -> Ints:
    """Traces with a cluster holding two different domain ids, or two different generic ids."""
    bad = np.zeros(len(cluster_trace), bool)
    for code in (keys.domain, keys.generic):
        where = np.flatnonzero(code >= 0)
        if len(where):
            width = int(code.max()) + 1
            firsts = first_positions(cluster[where] * width + code[where])
            bad |= np.bincount(cluster[where][firsts], minlength=len(cluster_trace)) > 1
    return np.unique(cluster_trace[bad])
