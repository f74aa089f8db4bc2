"""Read TREC qrels and run files as trec_eval 10.0 does.

Qrels lines are ``qid iter docno rel``; run lines are ``qid Q0 docno rank score tag``
(words after the sixth are ignored, as trec_eval ignores them; the rank column is
ignored too: order comes from the score). Lines starting with ``#`` and blank
lines are skipped.

Fields are separated by runs of ASCII whitespace (spaces and tabs, mixed), lines end at
``\\n``; numbers are plain ASCII decimals; see :mod:`ragmeter.io.trec_exact` for the rules.

Files take a fast columnar path (large files in slices on all cores, see
:func:`_fast_columns`). A plain piece (printable ASCII fields, one space or tab between
them) is read by the compiled scan (:mod:`ragmeter.io.trec_scan`); any other, or every
piece when the scan was not built, by pyarrow's CSV reader. pyarrow splits at one
delimiter, so the raw bytes are checked (:func:`ragmeter.io.trec_bytes.plain`) and the
values too: any irregularity (comments, uneven or mixed spacing, extra words, a control character, a value that is not
a plain number) sends the file to the exact line-by-line reader, which also produces the
error messages, so every error names the file and line. Both readers give the same tables
(:mod:`ragmeter.io.trec_tables`) for every file, and say which reader ran (:func:`read_by`).
Files are read into memory (``read``/``pread``; a large file's slices into one anonymous
buffer per thread), never memory-mapped from the file: a file that shrinks under a map kills
the process with SIGBUS; one that changes while it is read is an error
(:mod:`ragmeter.io.file_state`).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "run").write_text("q1 Q0 d1 1 2.5 r\\nq1 Q0 d2 2 1.0 r\\n")
>>> run = read_run(d / "run")
>>> run.topics, run.docnos(), run.score.tolist()
(['q1'], ['d1', 'd2'], [2.5, 1.0])
>>> read_by(run)
{'reader': 'fast', 'reader_note': 'in one piece'}
>>> _ = (d / "run").write_text("q1 Q0 d1 1 2.5 r\\n# a comment\\n")
>>> read_by(read_run(d / "run"))["reader_note"]
'pyarrow: CSV parse error: Expected 6 columns, got 3: # a comment'
"""

from __future__ import annotations

import itertools
import mmap
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
from numpy.typing import NDArray
from pyarrow._compute import (  # pyarrow.compute: 60 ms to import
    CastOptions,
    MatchSubstringOptions,
    TrimOptions,
    call_function,
)

from ragmeter.errors import InputError
from ragmeter.io import trec_scan
from ragmeter.io.docnos import Docnos, numpy_view, pair_keys, string_bounds, strings_at, topic_keys
from ragmeter.io.file_state import changed, check_unchanged, snapshot
from ragmeter.io.text_files import compression_of, read_bytes
from ragmeter.io.trec_bytes import plain
from ragmeter.io.trec_exact import read_qrels_exact, read_run_exact
from ragmeter.io.trec_tables import TrecQrels, TrecRun, judged_lines, name_codes

_BLOCK_SIZE = 1 << 23
"""Bytes per parse block: 8 MiB keeps the parser's peak memory low at full speed."""

_SLICE_BYTES = 1 << 26
"""Large files are cut at line ends into slices of about 64 MiB, parsed in parallel.

Each thread parses its slices single-threaded and hashes their docnos at once;
that keeps every core busy and costs less CPU than pyarrow's own multi-threaded
parse of the whole file followed by the hashing."""

_PARALLEL_BYTES = 1 << 25
"""Files smaller than 32 MiB are parsed in one piece."""

_HIGH_HALF = 1 if np.little_endian else 0
"""Where a uint64's high 32 bits are when it is viewed as two uint32s."""

_TOPIC_RUNS = 1 << 12
"""A chunk with more runs of equal topics than this (and than 1/16 of its lines) is dictionary-encoded."""

_BOM = b"\xef\xbb\xbf"

_WHOLE_NUMBER = MatchSubstringOptions(r"^[+-]?[0-9]+$")

_PLUS = TrimOptions("+")
"""Arrow's cast to int64 refuses a leading ``+``, which trec_eval (and the exact reader) accept."""


def _irregularity(table: pa.Table, topics: list[str]) -> str | None:
    """Why the exact reader must read the file, or ``None``: no empty or comment topic, no empty docno.

    Only the columns ragmeter uses are parsed (parsing Q0, rank and tag too costs a
    third more); an empty one of those is found in the bytes (:func:`plain`).
    """
    if any(not topic for topic in topics):
        return "a line starts with white space"
    if any(topic.startswith("#") for topic in topics):
        return "a comment line"
    for chunk in table.column("docno").chunks:
        if len(chunk) and int(np.diff(string_bounds(chunk)).min()) <= 0:
            return "uneven spacing (an empty docno)"
    return None


def _topic_runs(column: pa.ChunkedArray) -> _Topics:
    """A parsed topic column as runs of lines with one topic (see :class:`_Topics`).

    A file written topic by topic (the usual case) is cut into runs by comparing
    each line with the line before, which costs less than hashing every line as
    Arrow's dictionary encoding does (still used here for a file whose topics
    are interleaved: then each line is a run).
    """
    index: dict[str, int] = {}
    codes, lengths = [], []
    for chunk in column.chunks:
        if not len(chunk):
            continue
        changed = call_function("indices_nonzero", [call_function("not_equal", [chunk[1:], chunk[:-1]])])
        starts = np.concatenate(([0], numpy_view(changed, np.uint64).astype(np.int64) + 1))
        if len(starts) > max(_TOPIC_RUNS, len(chunk) >> 4):  # not grouped by topic
            encoded = call_function("dictionary_encode", [chunk])
            renumber = name_codes(index, encoded.dictionary.to_pylist())
            codes.append(renumber[numpy_view(encoded.indices, np.int32)])
            lengths.append(np.ones(len(chunk), dtype=np.int32))
        else:
            codes.append(name_codes(index, strings_at(chunk, starts)))
            lengths.append(np.diff(starts, append=len(chunk)).astype(np.int32))
    if not codes:
        return _Topics([], np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32))
    return _Topics(list(index), np.concatenate(codes), np.concatenate(lengths))


@dataclass(frozen=True)
class _Topics:
    """The topic of each line, as runs of lines with one topic."""

    names: list[str]
    """Distinct topics in first-seen order."""
    run_codes: NDArray[np.int32]
    """Per run, an index into :attr:`names`."""
    run_lengths: NDArray[np.int32]
    """Lines per run."""

    def codes(self, renumber: NDArray[np.int32] | None = None) -> NDArray[np.int32]:
        """Each line's index into :attr:`names` (or into whatever ``renumber`` maps them to)."""
        codes = self.run_codes if renumber is None else renumber[self.run_codes]
        return np.repeat(codes, self.run_lengths)


class _Irregular(Exception):
    """A file (or a slice of it) that only the exact reader can read, or explain; the message says why."""


@dataclass
class _Columns:
    """What the fast path takes from a file: per line, topic code, docno, value."""

    topics: list[str]
    codes: NDArray[np.int32]
    docno: Docnos
    values: NDArray[np.float64]
    repeats: bool
    """Some (topic, docno) key occurs twice within one slice."""
    slices: NDArray[np.int64]
    """The first line of each slice, then the number of lines."""
    judged: tuple[TrecQrels, NDArray[np.int64], NDArray[np.signedinteger[Any]]] | None = None
    """Lines judged in the qrels given to the reader (see :attr:`TrecRun.judged`)."""


def _fast_columns(
    path: Path, names: list[str], types: dict[str, pa.DataType], qrels: TrecQrels | None = None
) -> _Columns:
    """Read a regular whitespace-separated file fast, or raise :class:`_Irregular` saying why not.

    Small (or compressed) files are read into memory and parsed by pyarrow in one piece.
    Large ones are cut at line ends into slices that threads read and parse side by side
    (each slice single-threaded: that costs less CPU than pyarrow's own threads); then
    the threads fill the output arrays and hash the docnos, slice by slice.
    """
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _Irregular(f"cannot read the file ({exc.strerror})") from None
    workers = _workers()
    try:
        if workers < 2 or size < _PARALLEL_BYTES or compression_of(path) is not None:
            try:
                data = read_bytes(path)
            except InputError as exc:
                raise _Irregular(exc.message) from None
            layout = _layout(data, names, types)
            columns = _columns(
                [_parse(layout, data, layout.start, len(data), threads=True)], list(types)[-1], map, qrels
            )
        else:
            columns = _parse_slices(path, size, workers, names, types, qrels)
    finally:
        _release_parse_memory()
    if not len(columns.values):
        raise _Irregular("no line")  # the exact reader says what is wrong
    return columns


def _workers() -> int:
    """Threads for parsing slices: pyarrow's CPU count (``pa.set_cpu_count`` changes it)."""
    return int(pa.cpu_count())


@dataclass(frozen=True)
class _Layout:
    """What every piece of one file is parsed with: its columns, delimiter and first byte (past a BOM)."""

    names: list[str]
    types: dict[str, pa.DataType]
    delimiter: str
    start: int


def _layout(head: bytes, names: list[str], types: dict[str, pa.DataType]) -> _Layout:
    """The layout of a file whose first bytes are ``head``; :class:`_Irregular` if its first line is odd."""
    start = len(_BOM) if head.startswith(_BOM) else 0
    first = head[start : start + (1 << 16)].split(b"\n", 1)[0]
    if not first.strip() or first.startswith((b"#", b" ", b"\t")):
        raise _Irregular("the first line is blank, a comment or starts with white space")
    return _Layout(names, types, "\t" if b"\t" in first else " ", start)


def _parse(layout: _Layout, data: bytes | mmap.mmap, start: int, stop: int, *, threads: bool) -> _Slice:
    """Parse ``data[start:stop]``; raise :class:`_Irregular` unless every byte and value is regular.

    The compiled scan reads a plain piece; pyarrow the others. The table holds no
    reference to ``data`` (both copy every value they keep), so a buffer may be reused
    for the next slice.
    """
    scanned = _scanned(layout, data, start, stop)
    if scanned is not None:
        return scanned
    types = layout.types
    value = list(types)[-1]  # the score or relevance
    buffer = pa.py_buffer(data)
    try:
        table = pacsv.read_csv(
            pa.BufferReader(buffer.slice(start, stop - start)),
            read_options=pacsv.ReadOptions(
                column_names=layout.names, block_size=_BLOCK_SIZE, use_threads=threads
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=layout.delimiter, quote_char=False, escape_char=False, ignore_empty_lines=True
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=types,
                include_columns=list(types),
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise _Irregular(f"pyarrow: {str(exc).splitlines()[0][:120]}") from None
    arr = np.frombuffer(buffer, dtype=np.uint8)
    tab = layout.delimiter == "\t"
    if not plain(data, arr, start, stop, rows=table.num_rows, fields=len(layout.names), tab=tab):
        raise _Irregular(
            "bytes trec_eval splits otherwise (other white space, an empty field or a control character)"
        )
    topics = _topic_runs(table.column(0))
    why = _irregularity(table, topics.names)
    if why is not None:
        raise _Irregular(why)
    if types[value] == pa.string():
        table = table.set_column(table.column_names.index(value), value, _whole_numbers(table.column(value)))
    for chunk in table.column(value).chunks:
        if not bool(np.isfinite(numpy_view(chunk, np.float64)).all()):
            raise _Irregular(f"a {value} that is not a finite number")
    return _Slice(table.drop_columns(table.column_names[0]), topics)


def _whole_numbers(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A column of relevance values (strings) as doubles, if every one is a plain whole number."""
    chunks = []
    for chunk in column.chunks:
        if not call_function("all", [call_function("ascii_is_decimal", [chunk])]).as_py() and not (
            call_function("all", [call_function("match_substring_regex", [chunk], _WHOLE_NUMBER)]).as_py()
        ):
            raise _Irregular("a relevance that is not a plain whole number")
        unsigned = call_function("utf8_ltrim", [chunk], _PLUS)  # "+2" is 2; the pattern allows one sign
        try:  # through int64, as the exact reader reads them ("-0" is 0), and beyond int64 there
            whole = call_function("cast", [unsigned], CastOptions.safe(pa.int64()))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise _Irregular("a relevance beyond 64 bits") from None
        chunks.append(call_function("cast", [whole], CastOptions.safe(pa.float64())))
    return pa.chunked_array(chunks, type=pa.float64())


def _scanned(layout: _Layout, data: bytes | mmap.mmap, start: int, stop: int) -> _Slice | None:
    """A plain piece read by the compiled scan, or ``None`` (irregular, or the scan was not built)."""
    value = list(layout.types)[-1]
    scanned = trec_scan.scan(
        data,
        start,
        stop,
        fields=len(layout.names),
        value_field=layout.names.index(value),
        whole=layout.types[value] == pa.string(),
        delimiter=layout.delimiter,
    )
    if scanned is None:
        return None
    values = pa.Array.from_buffers(pa.float64(), len(scanned.values), [None, pa.py_buffer(scanned.values)])
    index: dict[str, int] = {}
    codes = name_codes(index, scanned.run_names)
    return _Slice(
        pa.Table.from_arrays([scanned.docno, values], names=["docno", value]),
        _Topics(list(index), codes, scanned.run_lengths),
    )


@dataclass(frozen=True)
class _Slice:
    """A parsed piece of a file: its docno and value columns, and its topics."""

    table: pa.Table
    topics: _Topics


def _parse_slices(
    path: Path,
    size: int,
    workers: int,
    names: list[str],
    types: dict[str, pa.DataType],
    qrels: TrecQrels | None,
) -> _Columns:
    """Cut the file at line ends into slices, parse them and fill the columns on ``workers`` threads.

    Each thread reads its slices with ``pread`` (a copy, not a memory map: a file that
    shrinks under a map kills the process with SIGBUS) into one buffer of its own, reused
    from slice to slice: fresh memory costs the kernel a page fault and the zeroing of
    every page (on this project's VM, more than reading the bytes). A slice that comes
    back short means the file shrank, which is an error.
    """
    with path.open("rb") as handle:
        fd = handle.fileno()
        layout = _layout(os.pread(fd, 1 << 16, 0), names, types)
        span = size - layout.start
        count = workers * -(-span // (_SLICE_BYTES * workers))  # a multiple of workers: none idles at the end
        bounds = [layout.start]
        for k in range(1, count):
            bounds.append(_line_end(fd, max(layout.start + span * k // count, bounds[-1]), size))
        bounds.append(size)
        largest = max(stop - start for start, stop in itertools.pairwise(bounds))
        buffers: dict[int, mmap.mmap] = {}  # per thread: anonymous memory, not zeroed twice

        def parse(k: int) -> _Slice:
            start, stop = bounds[k], bounds[k + 1]
            data = buffers.get(threading.get_ident())
            if data is None:
                data = buffers[threading.get_ident()] = mmap.mmap(-1, largest)
            with memoryview(data) as view:
                if os.preadv(fd, [view[: stop - start]], start) != stop - start:
                    raise changed(path)
            return _parse(layout, data, 0, stop - start, threads=False)

        with ThreadPoolExecutor(workers) as pool:
            pieces = list(pool.map(parse, range(count)))
            buffers.clear()
            return _columns(pieces, list(types)[-1], pool.map, qrels)


def _line_end(fd: int, at: int, size: int) -> int:
    """The offset just past the first newline at or after ``at`` (``size`` when there is none)."""
    while at < size:
        window = os.pread(fd, 1 << 16, at)
        found = window.find(b"\n")
        if found >= 0:
            return at + found + 1
        if not window:
            break
        at += len(window)
    return size


def _columns(
    pieces: list[_Slice], value: str, each: Callable[..., Iterator[bool]], qrels: TrecQrels | None
) -> _Columns:
    """The output arrays, filled slice by slice with ``each`` (``map``, or a thread pool's).

    Each slice's (topic, docno) keys are computed and used there (the check for
    repeats; with ``qrels``, the judged lines: :func:`judged_lines`), then let go.
    """
    pieces = [piece for piece in pieces if piece.table.num_rows]
    tables = [piece.table for piece in pieces]
    offsets = np.cumsum([0] + [table.num_rows for table in tables])
    index: dict[str, int] = {}
    renumbers = [name_codes(index, piece.topics.names) for piece in pieces]  # first-seen order, whole file
    n = int(offsets[-1])
    codes = np.empty(n, dtype=np.int32)
    values = np.empty(n, dtype=np.float64)
    docnos = [chunk for table in tables for chunk in table.column("docno").chunks if len(chunk)]
    topics = list(index)
    topic_key = topic_keys(topics)
    run_to_qrels = None if qrels is None else qrels.topic_index(topics)
    judged: list[tuple[NDArray[np.int64], NDArray[np.signedinteger[Any]]]] = [
        (np.zeros(0, np.int64), np.zeros(0, np.int64))
    ] * len(tables)

    def fill(k: int) -> bool:
        """Slice ``k``'s lines; whether a (topic, docno) key repeats within it."""
        start, stop = int(offsets[k]), int(offsets[k + 1])
        mine = codes[start:stop]
        mine[:] = pieces[k].topics.codes(renumbers[k])
        at = start
        for chunk in tables[k].column(value).chunks:
            values[at : at + len(chunk)] = numpy_view(chunk, np.float64)
            at += len(chunk)
        keys = pair_keys(tables[k].column("docno"), topic_key, mine)
        if qrels is not None and run_to_qrels is not None:
            lines, judgment = judged_lines(qrels, keys, mine, run_to_qrels, tables[k].column("docno"))
            judged[k] = (lines + start, judgment)
        return _repeats(keys, mine)

    repeats = any(list(each(fill, range(len(tables)))))
    docno = docnos[0] if len(docnos) == 1 else pa.chunked_array(docnos, type=pa.string())
    found = None
    if qrels is not None:
        found = (
            qrels,
            np.concatenate([lines for lines, _ in judged]),
            np.concatenate([judgment for _, judgment in judged]),
        )
    return _Columns(topics, codes, docno, values, repeats, offsets.astype(np.int64), found)


def _repeats(keys: NDArray[np.uint64], codes: NDArray[np.int32]) -> bool:
    """Whether a key repeats within a topic's run of lines (all of them, in a grouped file).

    Runs of one length (a run file's full topics) are sorted row by row, which
    is faster than one sort of all the keys; by the keys' high 32 bits first
    (half the bytes to sort), then, in the few rows where those repeat, in full.
    """
    change = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    if len(change) >= 2:
        lengths = np.diff(change)
        if bool(np.all(lengths == lengths[0])):
            block = keys[change[0] : change[-1]].reshape(-1, int(lengths[0]))
            high = np.sort(block.view(np.uint32)[:, _HIGH_HALF::2], axis=1)
            suspects = np.flatnonzero(np.any(high[:, 1:] == high[:, :-1], axis=1))
            rows = np.sort(block[suspects], axis=1)
            if bool(np.any(rows[:, 1:] == rows[:, :-1])):
                return True
            edges = np.sort(np.concatenate((keys[: change[0]], keys[change[-1] :])))
            return bool(np.any(edges[1:] == edges[:-1]))
    ordered = np.sort(keys)
    return bool(np.any(ordered[1:] == ordered[:-1]))


def _release_parse_memory() -> None:
    """Hand the CSV parser's freed buffers back to the OS (Arrow's allocator keeps them)."""
    pa.default_memory_pool().release_unused()


def read_run(path: str | Path, *, qrels: TrecQrels | None = None) -> TrecRun:
    """Read a TREC run file (6 fields per line; later words ignored).

    Given the ``qrels`` it will be matched with, a large run's lines are looked
    up in them while it is read, on all cores (``match_trec`` then reuses that).
    ``TrecRun.reader`` says which reader read it (``fast`` or ``exact``) and
    ``reader_note`` how (in how many slices) or why not fast. A file that changes
    while it is read is an :class:`~ragmeter.errors.InputError`.
    """
    path = Path(path)
    before = snapshot(path)
    try:
        columns = _fast_columns(
            path,
            ["qid", "q0", "docno", "rank", "score", "tag"],
            {"qid": pa.string(), "docno": pa.string(), "score": pa.float64()},
            qrels,
        )
    except _Irregular as why:
        run = read_run_exact(path, why=str(why))
    else:
        run = TrecRun(
            str(path),
            columns.topics,
            columns.codes,
            columns.docno,
            columns.values,
            unique_pairs=not columns.repeats and _no_repeats_across(columns),
            judged=columns.judged,
            reader="fast",
            reader_note=_pieces(columns),
        )
    check_unchanged(path, before)
    return run


def read_by(table: TrecRun | TrecQrels) -> dict[str, str]:
    """Which reader read a TREC file and how: ``{"reader": "fast", "reader_note": "in 4 slices"}``.

    A plain file that the exact reader read (slowly) shows up here, with the reason
    (the module docstring has an example).
    """
    return {"reader": table.reader, "reader_note": table.reader_note}


def _pieces(columns: _Columns) -> str:
    n = len(columns.slices) - 1
    return "in one piece" if n == 1 else f"in {n} slices"


def _no_repeats_across(columns: _Columns) -> bool:
    """With no repeat inside any slice: whether none spans two slices either.

    In a file written topic by topic, only a topic cut by a slice boundary can
    hide one; those topics' keys are checked together. Other files: unknown.
    """
    codes = columns.codes
    change = np.flatnonzero(codes[1:] != codes[:-1]) + 1
    if len(change) != len(columns.topics) - 1:
        return False
    starts = np.concatenate(([0], change))
    ends = np.concatenate((change, [len(codes)]))
    for cut in columns.slices[1:-1]:
        block = np.searchsorted(starts, cut, side="right") - 1
        if starts[block] < cut:  # a topic runs across this boundary
            first, end = int(starts[block]), int(ends[block])
            docno = columns.docno.slice(first, end - first)
            keys = np.sort(pair_keys(docno, topic_keys(columns.topics), codes[first:end]))
            if bool(np.any(keys[1:] == keys[:-1])):
                return False
    return True


def read_qrels(path: str | Path, *, trec_compat: bool = False) -> TrecQrels:
    """Read a TREC qrels file (4 fields per line); a repeated (topic, docno) is an error.

    A relevance must be a whole number; with ``trec_compat`` a fractional one is
    truncated, as trec_eval reads it (``atol``). ``TrecQrels.reader`` and
    ``reader_note`` say how it was read, as for :func:`read_run`.
    """
    path = Path(path)
    before = snapshot(path)
    try:
        columns = _fast_columns(
            path,
            ["qid", "iter", "docno", "rel"],
            {"qid": pa.string(), "docno": pa.string(), "rel": pa.string()},
        )
    except _Irregular as why:
        qrels = read_qrels_exact(path, trec_compat=trec_compat, why=str(why))
    else:
        qrels = TrecQrels(
            str(path),
            columns.topics,
            columns.codes,
            columns.docno,
            columns.values,
            reader="fast",
            reader_note=_pieces(columns),
        )
        keys = np.sort(qrels.keys)
        if bool(np.any(keys[1:] == keys[:-1])):
            # A repeated judgment (or, once in 2^64, two pairs with one key): the exact
            # reader tells which, with the line numbers.
            qrels = read_qrels_exact(path, trec_compat=trec_compat, why="a repeated (topic, docno)")
    check_unchanged(path, before)
    return qrels
