"""Reading native trace JSON Lines into columns: the fast path's reader (one trace per line).

Each line is decoded by msgspec into structs that mirror :mod:`ragmeter.agentic.trace` and
checked for repeated keys: first into lean structs (:func:`_fast_trace`), and when that is not
conclusive — a null, a result with other fields — into plain objects, checked and validated
(:func:`_checked_trace`). The results of each trace's
last turn are then added to flat columns, with every string replaced by a code into a table of
the distinct strings seen so far (a million results hold far fewer distinct URLs and texts).

Anything this reader is not sure of — a line msgspec cannot parse or validate, a repeated key,
an escaped colon (``\\u003a``, which defeats the repeated-key check), a blank id, a result with
no field — is handed to the reference reader (:mod:`ragmeter.agentic.load`) for that line: it
either accepts the line (and the reader takes its validated trace) or raises the reference's own
one-line error, naming the file, line and field.

>>> from pathlib import Path
>>> import tempfile
>>> line = ('{"trace_id": 7, "turns": [{"iterations": [{"searches": [{"results": '
...         '[{"url": "https://a.org", "gain": 3}, {"title": "T", "snippet": "x"}]}]}]}]}')
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = Path(tmp) / "t.jsonl"
...     _ = path.write_text(line + "\\n")
...     cols = read_columns(path)
>>> cols.trace_ids, cols.iteration_sizes, [cols.urls.values[c] for c in cols.url]
(['7'], [[2]], ['https://a.org', None])
"""

from __future__ import annotations

import hashlib
import itertools
import operator
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np
import numpy.typing as npt

from ragmeter.errors import InputError
from ragmeter.interning import Interner
from ragmeter.io.text_files import ReadingProgress

_Id = str | int
_Gain = Annotated[float, msgspec.Meta(ge=0, le=4)]


class SearchResultS(msgspec.Struct, gc=False):
    """:class:`ragmeter.agentic.trace.SearchResult` (other fields are ignored)."""

    domain_id: _Id | None = None
    id: _Id | None = None
    url: str | None = None
    title: str | None = None
    snippet: str | None = None
    gain: _Gain | None = None


class SearchS(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """:class:`ragmeter.agentic.trace.Search`."""

    query: str | None = None
    tool: str | None = None
    results: list[SearchResultS] | None = None
    results_not_captured: str | None = None
    span_id: str | None = None


class IterationS(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """:class:`ragmeter.agentic.trace.Iteration`."""

    searches: list[SearchS] = []
    metadata: dict[str, Any] = {}


class TurnS(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """:class:`ragmeter.agentic.trace.Turn`."""

    user: str | None = None
    iterations: list[IterationS] = []


class ResultRefS(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """:class:`ragmeter.agentic.trace.ResultRef` (its "names something" rule is checked by the reader)."""

    domain_id: _Id | None = None
    id: _Id | None = None
    url: str | None = None


class TraceS(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """:class:`ragmeter.agentic.trace.Trace` (a blank ``trace_id`` is checked by the reader)."""

    trace_id: _Id
    turns: Annotated[list[TurnS], msgspec.Meta(min_length=1)]
    task: str | None = None
    good_results: list[ResultRefS] | None = None
    metadata: dict[str, Any] = {}


class _StrictResultS(SearchResultS, forbid_unknown_fields=True, gc=False):
    """A result without other fields: no misspelt field to look for."""


class _StrictSearchS(SearchS, forbid_unknown_fields=True, gc=False):
    results: list[_StrictResultS] | None = None  # type: ignore[assignment]


class _StrictIterationS(IterationS, forbid_unknown_fields=True, gc=False):
    searches: list[_StrictSearchS] = []  # type: ignore[assignment]


class _StrictTurnS(TurnS, forbid_unknown_fields=True, gc=False):
    iterations: list[_StrictIterationS] = []  # type: ignore[assignment]


class _StrictTraceS(TraceS, forbid_unknown_fields=True, gc=False):
    """:class:`TraceS` whose results have no other fields (the common case, checked first)."""

    turns: Annotated[list[_StrictTurnS], msgspec.Meta(min_length=1)]  # type: ignore[assignment]


# The structs of the first try at a line: decoded straight from JSON, and never null. Every field
# defaults to None and takes no null (a null is refused and the line looked at again: the
# reference refuses ``"searches": null`` where these would read it as absent), so a field is None
# exactly when the line leaves it out. Encoded without the fields left at None (``omit_defaults``),
# they hold every key and string of the line, except a key given twice (msgspec keeps the last).
_ABSENT: Any = None


class _LeanResultS(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    domain_id: _Id = _ABSENT
    id: _Id = _ABSENT
    url: str = _ABSENT
    title: str = _ABSENT
    snippet: str = _ABSENT
    gain: _Gain = _ABSENT


class _LeanSearchS(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    query: str = _ABSENT
    tool: str = _ABSENT
    results: list[_LeanResultS] = _ABSENT
    results_not_captured: str = _ABSENT
    span_id: str = _ABSENT


class _LeanIterationS(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    searches: list[_LeanSearchS] = _ABSENT
    metadata: dict[str, Any] = _ABSENT


class _LeanTurnS(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    user: str = _ABSENT
    iterations: list[_LeanIterationS] = _ABSENT


class _LeanRefS(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    domain_id: _Id = _ABSENT
    id: _Id = _ABSENT
    url: str = _ABSENT


class _LeanTraceS(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    trace_id: _Id
    turns: Annotated[list[_LeanTurnS], msgspec.Meta(min_length=1)]
    task: str = _ABSENT
    good_results: list[_LeanRefS] = _ABSENT
    metadata: dict[str, Any] = _ABSENT


_RESULT_FIELDS = frozenset(SearchResultS.__struct_fields__)


def _misspelt_result_field(value: dict[str, Any]) -> bool:
    """Whether a result of any turn has an unknown field that looks like a misspelt known one."""
    from ragmeter.near_miss import near_miss_key

    for turn in value["turns"]:
        for iteration in turn.get("iterations") or ():
            for search in iteration.get("searches") or ():
                for result in search.get("results") or ():
                    if not result.keys() <= _RESULT_FIELDS and near_miss_key(result, _RESULT_FIELDS):
                        return True
    return False


def _codes() -> array[int]:
    return array("i")


def _table() -> Interner:
    return Interner()  # looked up when called: a test can swap in the Python table


@dataclass
class NativeColumns:
    """The results of the last turn of every trace in a file, as flat columns, and each trace's facts.

    Per result of a scored trace (in trace order, then iteration, search and rank order): codes
    into the string tables (:class:`~ragmeter.interning.Interner`, code 0 for an absent field;
    titles and snippets share one), the iteration number and the gain (NaN = none). Per trace: id, place,
    status, the result count per search iteration, and its line's number, byte offset and length
    (to read it again when the reference must score it). ``pending``: the traces whose lines are
    checked for a repeated key once the file is read, and ``balances`` the ``"`` their results
    must account for (:func:`_results_balance`).
    """

    path: Path
    sha256: str = ""
    trace_ids: list[str] = field(default_factory=list)
    wheres: list[str] = field(default_factory=list)
    spans: list[tuple[int, int, int]] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)
    reasons: list[str | None] = field(default_factory=list)
    iteration_sizes: list[list[int]] = field(default_factory=list)
    dropped_iterations: list[int] = field(default_factory=list)
    earlier_turns: list[int] = field(default_factory=list)
    has_good_results: list[bool] = field(default_factory=list)
    ids: Interner = field(default_factory=_table)
    urls: Interner = field(default_factory=_table)
    texts: Interner = field(default_factory=_table)
    domain_id: array[int] = field(default_factory=_codes)
    generic_id: array[int] = field(default_factory=_codes)
    url: array[int] = field(default_factory=_codes)
    title: array[int] = field(default_factory=_codes)
    snippet: array[int] = field(default_factory=_codes)
    iteration: array[int] = field(default_factory=_codes)
    gain: array[float] = field(default_factory=lambda: array("d"))
    trace_starts: array[int] = field(default_factory=lambda: array("q", [0]))
    pending: array[int] = field(default_factory=lambda: array("q"))
    balances: array[int] = field(default_factory=lambda: array("q"))

    @property
    def n_results(self) -> int:
        """Results in the columns (of scored traces only)."""
        return len(self.gain)


_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


def _colons(data: bytes) -> int:
    """How many ':' bytes ``data`` holds (numpy counts faster than ``bytes.count``)."""
    return int(np.count_nonzero(np.frombuffer(data, np.uint8) == 58))


def _escaped_colon(line: bytes) -> bool:
    """Whether ``line`` may hold ``\\u003a`` or ``\\u003A`` (looked for only after a backslash, which is quick to find)."""
    return b"\\" in line and b"\\u003" in line


def _as_text(value: Any) -> Any:
    """Ids may be JSON integers: their decimal text, as the reference models keep them."""
    return str(value) if type(value) is int else value


_decode_lean = msgspec.json.Decoder(_LeanTraceS).decode


def _fast_trace(line: bytes, *, careful: bool = False) -> tuple[TraceS | None, int | None]:
    """The validated trace of one line (``None`` when the reference reader must look at it), and its balance.

    First try: the line decoded into the lean structs, which hold every key and string of the
    line except a key given twice (msgspec keeps the last; a null or an unknown field is refused).
    When the results of its last turn all go into the columns, the check for a repeated key
    waits until the file is read (the balance, :func:`_results_balance`). Else (or ``careful``) the whole line is checked now: every ':' of
    a line is a key's or one inside a string, so equal counts of ':' in the line and in the lean
    encoding mean no key was repeated (with no ``\\u003a`` escape for a ':'). A line the lean
    structs refuse, or unequal counts, are looked at again (:func:`_checked_trace`).
    """
    lean = None if _escaped_colon(line) else _lean_trace(line)
    if lean is None:
        return _checked_trace(line), None
    balance = None if careful else _results_balance(line, lean)
    if balance is None and _colons(line) != _colons(_encode(lean)):
        return _checked_trace(line), None
    trace = _trace_checks(lean)
    return trace, None if trace is None else balance


def _lean_trace(line: bytes) -> Any:
    """The line decoded into the lean structs, or ``None``."""
    try:
        return _decode_lean(line)
    except (msgspec.MsgspecError, ValueError, TypeError, RecursionError):
        return None


def _quotes(data: bytes) -> int:
    """How many '"' bytes of JSON ``data`` open or close a string (the others are escaped: ``\\"``).

    A quote is escaped when an odd run of backslashes stands before it (``\\\\"`` is an escaped
    backslash, then a quote). Two per string: keys and string values.

    >>> _quotes(b'{"a": "x\\\\"y", "b\\\\\\\\": "\\\\\\\\\\\\""}')
    8
    """
    buf = np.frombuffer(data, np.uint8)
    is_quote = buf == 34
    quotes = int(np.count_nonzero(is_quote))
    if b"\\" not in data:  # the common case: no escape at all (a quick search)
        return quotes
    escaped = 0
    for at in (
        np.flatnonzero(is_quote[1:] & (buf[:-1] == 92)) + 1
    ).tolist():  # rare: a quote after a backslash
        start = at - 1
        while start > 0 and data[start - 1] == 92:
            start -= 1
        escaped += (at - start) % 2
    return quotes - escaped


def _results_balance(line: bytes, lean: Any) -> int | None:
    """How many ``"`` of ``line`` the results of its last turn must hold, when those go into the columns.

    A line has two unescaped ``"`` per key and two per string value (:func:`_quotes`). Encoded
    with the last turn's results emptied, the lean trace has all of them but the results' own,
    unless a key was given twice; what is left is checked against the results' fields once the
    file is read (:func:`_unbalanced`). ``None`` when the results do not all go into the columns
    (a search without results, no search, no result): then the whole line is checked at once.
    """
    searches = [s for it in lean.turns[-1].iterations or () for s in it.searches or ()]
    if not searches or any(s.results is None for s in searches) or not any(s.results for s in searches):
        return None
    found = [s.results for s in searches]
    for search in searches:
        search.results = []
    skeleton = _quotes(_encode(lean))
    for search, results in zip(searches, found, strict=True):
        search.results = results
    return _quotes(line) - skeleton


def _checked_trace(line: bytes) -> TraceS | None:
    """:func:`_fast_trace` for the lines its first try leaves: parsed, checked for repeated keys, validated."""
    try:
        value = _decode(line)
        # Every key of a line is one ':' outside strings. msgspec keeps the last of repeated keys,
        # so the value re-encoded has fewer ':' exactly when a key was repeated (or when an escaped
        # '\u003a' stands for a ':', which is why lines with such escapes go to the reference).
        if _colons(line) != _colons(_encode(value)) or _escaped_colon(line):
            return None
        try:
            trace: TraceS = msgspec.convert(value, _StrictTraceS)
        except msgspec.ValidationError:  # results with other fields (ignored, unless misspelt), or an error
            trace = msgspec.convert(value, TraceS)
            if _misspelt_result_field(value):
                return None
    except (msgspec.MsgspecError, ValueError, TypeError, RecursionError):
        return None
    return _trace_checks(trace)


def _trace_checks(trace: TraceS) -> TraceS | None:
    """``trace``, or ``None`` when its id is blank or a known good result names nothing (the reference decides)."""
    tid = trace.trace_id
    if isinstance(tid, str) and not tid.strip():
        return None
    for ref in trace.good_results or ():
        if not any(_present(v) for v in (ref.domain_id, ref.id, ref.url)):
            return None
    return trace


def _present(value: Any) -> bool:
    """Not ``None`` and not blank (the reference reads blank fields as absent)."""
    return value is not None and (type(value) is int or (not value.isspace() and value != ""))


def _lines(path: Path, digest: Any) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, raw line) of every line; ``digest`` sees every byte."""
    offset = 0
    try:
        with path.open("rb", buffering=1 << 20) as handle:  # lines of tens of KB: a large buffer
            for lineno, raw in enumerate(handle, start=1):
                digest.update(raw)
                yield lineno, offset, raw
                offset += len(raw)
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", where=str(path)) from None


def read_columns(
    path: Path, progress: Callable[[int, int], None] | None = None, *, careful: bool = False
) -> NativeColumns:
    """Read a native JSON Lines trace file into :class:`NativeColumns` (see the module docstring).

    Errors are the reference reader's, for the first bad line. ``progress(bytes read, file
    size)`` hears of the reading every
    :data:`~ragmeter.io.text_files.READ_PROGRESS_BYTES` bytes and at the end.
    ``careful`` checks each line whole for a repeated key as it is read (the file is read so
    again should the check once all is read flag a line the reference accepts).
    """
    from ragmeter.agentic.columnar_reference import reference_trace

    cols = NativeColumns(path)
    digest = hashlib.sha256()
    seen: dict[str, str] = {}
    reading = ReadingProgress(path, progress)
    try:
        for lineno, offset, raw in _lines(path, digest):
            reading.add(len(raw))
            if raw.isspace():  # JSON's white space (the line end included): a blank line
                continue
            trace: Any
            trace, balance = _fast_trace(raw, careful=careful)
            if trace is None:
                trace = reference_trace(path, lineno, raw)
                if trace is None:  # blank once decoded (Unicode white space)
                    continue
            tid = _as_text(trace.trace_id)
            where = f"{path}:{lineno}"
            if tid in seen:
                raise InputError(f"duplicate trace_id {tid!r} (first at {seen[tid]})", where=where)
            seen[tid] = where
            cols.spans.append((lineno, offset, len(raw)))
            _add_trace(cols, trace, tid, where)
            if balance is not None:
                cols.pending.append(len(cols.trace_ids) - 1)
                cols.balances.append(balance)
    except InputError:
        if not _check_lines(cols):  # an earlier line's error comes first
            read_columns(path, careful=True)
        raise
    if not _check_lines(cols):
        return read_columns(path, progress, careful=True)
    cols.sha256 = digest.hexdigest()
    reading.end()
    return cols


def _add_trace(cols: NativeColumns, trace: Any, tid: str, where: str) -> None:
    """Add one trace's facts, and the results of its last turn when it is scored."""
    turns = trace.turns
    sizes: list[int] = []
    reason: str | None = None
    dropped = 0
    results: list[Any] = []
    turn_index = len(turns) - 1
    for it_index, iteration in enumerate(turns[-1].iterations or ()):
        if not iteration.searches:
            dropped += 1
            continue
        size = 0
        for s_index, search in enumerate(iteration.searches):
            found = search.results
            if found is None:
                if reason is None:
                    why = search.results_not_captured or "results not recorded in the trace"
                    place = f"turns[{turn_index}].iterations[{it_index}].searches[{s_index}]"
                    reason = f"results not captured: iteration {len(sizes) + 1}, {place}: {why}"
                continue
            results += found
            size += len(found)
        sizes.append(size)
    status = "scored"
    if reason is not None:
        status = "results_not_captured"
        if not all(map(_has_a_field, results)):
            from ragmeter.agentic.columnar_reference import refuse_results

            lineno, offset, length = cols.spans[-1]
            with cols.path.open("rb") as handle:
                handle.seek(offset)
                refuse_results(cols.path, lineno, handle.read(length))
    elif not sizes:
        status, reason = "no_search", "no search was invoked in the last turn"
    cols.trace_ids.append(tid)
    cols.wheres.append(where)
    cols.statuses.append(status)
    cols.reasons.append(reason)
    cols.iteration_sizes.append(sizes)
    cols.dropped_iterations.append(dropped)
    cols.earlier_turns.append(turn_index)
    cols.has_good_results.append(trace.good_results is not None)
    if status == "scored" and results:
        for number, size in enumerate(sizes, start=1):
            cols.iteration.extend(itertools.repeat(number, size))
        n = len(results)
        for column, codes in ((_DOMAIN_ID, cols.domain_id), (_ID, cols.generic_id)):
            ids = list(map(column, results))
            if ids.count(None) == n:  # the field is often left out by a whole export: code 0 each
                codes.frombytes(bytes(codes.itemsize * n))
            else:
                codes.frombytes(cols.ids.codes(ids))
        cols.url.frombytes(cols.urls.codes(results, "url"))
        cols.title.frombytes(cols.texts.codes(results, "title"))
        cols.snippet.frombytes(cols.texts.codes(results, "snippet"))
        gains = list(map(_GAIN, results))
        if None in gains:  # no gain: NaN
            cols.gain.frombytes(np.array(gains, np.float64).tobytes())
        else:
            cols.gain.extend(gains)
    cols.trace_starts.append(len(cols.gain))


_DOMAIN_ID, _ID, _GAIN = map(operator.attrgetter, ("domain_id", "id", "gain"))


def _has_a_field(r: Any) -> bool:
    return _present(r.url) or any(_present(v) for v in (r.domain_id, r.id, r.title, r.snippet))


def _present_texts(table: Interner, codes: npt.NDArray[np.int32]) -> npt.NDArray[np.bool_]:
    """Per code in ``codes`` (code 0 is ``None``): whether its value is not blank (empty or white space).

    Each distinct value among ``codes`` is looked at once, and no other.
    """
    values = table.values
    wanted = np.zeros(len(values), bool)
    wanted[codes] = True
    wanted[0] = False
    rows = np.flatnonzero(wanted)
    present = np.zeros(len(values), bool)
    present[rows] = ~np.fromiter(map(str.isspace, map(values.__getitem__, rows.tolist())), bool, len(rows))
    empty = table.get("")
    if empty is not None:
        present[empty] = False
    return present[codes]


def _first_without_fields(cols: NativeColumns) -> int | None:
    """The first trace read with a result that has no field at all, or ``None``.

    A result's fields are looked at in turn, each only for the results with none of the ones
    before: ids, title (most results have one, and titles repeat), URL, snippet.
    """
    ids = np.array([_present(v) for v in cols.ids.values], bool)
    missing = ~(ids[np.frombuffer(cols.domain_id, np.int32)] | ids[np.frombuffer(cols.generic_id, np.int32)])
    for table, column in ((cols.texts, cols.title), (cols.urls, cols.url), (cols.texts, cols.snippet)):
        where = np.flatnonzero(missing)
        if not len(where):
            break
        missing[where] = ~_present_texts(table, np.frombuffer(column, np.int32)[where])
    bad = np.flatnonzero(missing)
    if not len(bad):
        return None
    return int(np.searchsorted(np.frombuffer(cols.trace_starts, np.int64), bad[0], side="right")) - 1


def _unbalanced(cols: NativeColumns) -> int | None:
    """The first pending trace whose results do not hold the ``"`` its line left them, or ``None``.

    A result given field by field holds two ``"`` per key and two per string value: ids may be
    text or numbers, URL, title and snippet are text, the gain a number.
    """
    if not len(cols.pending):
        return None
    ids = np.array([0] + [4 if type(v) is str else 2 for v in itertools.islice(cols.ids.values, 1, None)])
    per_result = (
        ids[np.frombuffer(cols.domain_id, np.int32)]
        + ids[np.frombuffer(cols.generic_id, np.int32)]
        + 4 * (np.frombuffer(cols.url, np.int32) != 0)
        + 4 * (np.frombuffer(cols.title, np.int32) != 0)
        + 4 * (np.frombuffer(cols.snippet, np.int32) != 0)
        + 2 * ~np.isnan(np.frombuffer(cols.gain, np.float64))
    )
    held = np.concatenate(([0], np.cumsum(per_result)))
    starts = np.frombuffer(cols.trace_starts, np.int64)
    pending = np.frombuffer(cols.pending, np.int64)
    found = held[starts[pending + 1]] - held[starts[pending]]
    bad = np.flatnonzero(found != np.frombuffer(cols.balances, np.int64))
    return int(pending[bad[0]]) if len(bad) else None


def _check_lines(cols: NativeColumns) -> bool:
    """Raise the reference's error for the first line read with a result without a field or a repeated key.

    ``False`` when a line's ``"`` do not balance yet the reference accepts it: then the file is to
    be read again, each line checked whole (``read_columns(careful=True)``).
    """
    unbalanced, without = _unbalanced(cols), _first_without_fields(cols)
    if unbalanced is None and without is None:
        return True
    trace = min(t for t in (unbalanced, without) if t is not None)
    from ragmeter.agentic.columnar_reference import reference_trace, refuse_results

    lineno, offset, length = cols.spans[trace]
    with cols.path.open("rb") as handle:
        handle.seek(offset)
        raw = handle.read(length)
    if trace == without:
        refuse_results(cols.path, lineno, raw)  # raises (a repeated key's error first)
    reference_trace(cols.path, lineno, raw)  # a repeated key: raises
    return False
