"""Reading trace files: native JSONL, or a trace export converted by an importer.

Every trace comes back as a :class:`~ragmeter.agentic.validate.LoadedTrace` that remembers
where it was read (``traces.jsonl:17``), for error messages and reports; the importers of
trace exports (:mod:`ragmeter.agentic.importers`) build theirs the same way.

>>> detect_format({"trace_id": "t", "turns": []})
'native'
>>> detect_format({"resourceSpans": []})
'otel'
>>> detect_format({"data": [{"object": "trace.span", "span_data": {}}]})
'openai-agents'
"""

from __future__ import annotations

import json
import operator
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from ragmeter.agentic.importers import SearchToolMatcher, import_records
from ragmeter.agentic.validate import KnownLength, LoadedTrace, unique_ids, validate_trace
from ragmeter.errors import InputError
from ragmeter.io.jsonyaml import json_lines, loads_json
from ragmeter.io.records import Record
from ragmeter.io.text_files import (
    ProgressCallback,
    ReadingProgress,
    compression_of,
    decode_text,
    read_bytes,
    read_text,
)

T = TypeVar("T")

TraceFormat = Literal["native", "otel", "openai-agents", "langsmith"]
TRACE_FORMATS: tuple[str, ...] = ("auto", "native", "otel", "openai-agents", "langsmith")
"""The values of ``--format``: ``auto`` detects the format from the first record."""


def read_records(path: Path, progress: ProgressCallback | None = None) -> list[Record]:
    """Read JSON Lines, or one JSON document (a list gives one record per item).

    Blank lines are skipped; each record is labelled ``file:line`` (``file:[i]`` for
    the items of a JSON list). Lines end at ``\\n`` only. ``progress`` hears of JSON Lines as
    they are parsed (counting characters as bytes) and of the end of the file.
    """
    text = read_text(path)
    lines = list(json_lines(text))
    reading = ReadingProgress(path, progress)
    if not _is_json(lines[0][1]):
        whole = loads_json(text, source=str(path))
        reading.end()
        if isinstance(whole, list):
            return [Record(item, f"{path}:[{i}]") for i, item in enumerate(whole)]
        return [Record(whole, str(path))]
    records = []
    for n, line in lines:
        records.append(Record(loads_json(line, source=str(path), line=n), f"{path}:{n}"))
        reading.add(len(line) + 1)
    reading.end()
    return records


def _is_json(line: str) -> bool:
    """Whether a line is JSON on its own (a JSON Lines record, not the start of a longer document)."""
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True


def _is_agents_object(value: Any) -> bool:
    return isinstance(value, dict) and (
        value.get("object") in ("trace", "trace.span") or "span_data" in value
    )


def detect_format(value: Any) -> TraceFormat:
    """Guess the trace format from the first record of a file."""
    if isinstance(value, list) and value:
        value = value[0]
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object, got {type(value).__name__}")
    if "turns" in value and "trace_id" in value:
        return "native"
    if "resourceSpans" in value:
        return "otel"
    if _is_agents_object(value) or (
        isinstance(value.get("data"), list) and value["data"] and _is_agents_object(value["data"][0])
    ):  # one object per line, or the BackendSpanExporter's {"data": [...]} payload
        return "openai-agents"
    if "run_type" in value or "child_runs" in value or "dotted_order" in value:
        return "langsmith"
    raise InputError(
        "cannot tell the trace format from the first record (expected ragmeter's native format with "
        "'trace_id' and 'turns', OTLP JSON with 'resourceSpans', OpenAI Agents SDK spans with 'object' (one per line or in {\"data\": [...]} batches), "
        "or LangSmith runs with 'run_type'); pass --format"
    )


def load_native(records: Sequence[Record]) -> list[LoadedTrace]:
    """Validate native trace records (one conversation each)."""
    return [LoadedTrace(validate_trace(r.value, where=r.where), r.where) for r in records]


def _lines(path: Path, progress: ProgressCallback | None = None) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a UTF-8 file with their numbers, read as a stream (lines end at ``\\n`` only).

    ``progress`` hears of the bytes read (of a compressed file: once, at the end).
    """
    try:
        reading = ReadingProgress(path, progress)
        if compression_of(path) is not None:
            yield from _decoded(path, read_bytes(path).split(b"\n"))
        else:
            with path.open("rb") as handle:
                yield from _decoded(path, _counted(handle, reading))
        reading.end()
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", where=str(path)) from None


def _counted(raw: Iterable[bytes], reading: ReadingProgress) -> Iterator[bytes]:
    for data in raw:
        reading.add(len(data))
        yield data


def decode_line(path: Path, lineno: int, data: bytes) -> str:
    """Line ``lineno`` of ``path`` (its bytes, with or without the line end) as text, or the file's error."""
    return decode_text(data.removesuffix(b"\n").removesuffix(b"\r"), source=str(path), line=lineno)


def _decoded(path: Path, raw: Iterable[bytes]) -> Iterator[tuple[int, str]]:
    for lineno, data in enumerate(raw, start=1):
        line = decode_line(path, lineno, data)
        if line.strip():
            yield lineno, line


def native_trace(path: Path, lineno: int, line: str) -> LoadedTrace:
    """A non-blank line of a native JSON Lines file parsed and validated, or one error naming line and field."""
    where = f"{path}:{lineno}"
    return LoadedTrace(validate_trace(loads_json(line, source=str(path), line=lineno), where=where), where)


def _native_stream(path: Path, progress: ProgressCallback | None = None) -> Iterator[LoadedTrace]:
    for lineno, line in _lines(path, progress):
        yield native_trace(path, lineno, line)


def first_record(path: Path) -> Record | None:
    """The first line parsed as JSON, or ``None`` when the file is one (multi-line) JSON document."""
    if not path.exists():
        raise InputError("file not found", where=str(path))
    if path.is_dir():
        raise InputError("is a directory, expected a file", where=str(path))
    first = next(_lines(path), None)
    if first is None:
        raise InputError("file is empty", where=str(path))
    lineno, line = first
    if not _is_json(line):
        return None
    return Record(loads_json(line, source=str(path), line=lineno), f"{path}:{lineno}")


REPORT_EVERY = 64
"""Records (or traces) between two progress reports of the import and the preparation."""


def counted(items: Iterable[T], total: int, progress: ProgressCallback | None) -> Iterator[T]:
    """``items``, telling ``progress(taken, total)`` every :data:`REPORT_EVERY` items and at the end.

    >>> heard = []
    >>> list(counted("abc", 3, lambda done, total: heard.append(done)))
    ['a', 'b', 'c']
    >>> heard
    [0, 3]
    """
    if progress is None:
        yield from items
        return
    done = 0
    for done, item in enumerate(items, start=1):
        if (done - 1) % REPORT_EVERY == 0:
            progress(done - 1, total)
        yield item
    progress(done, total)


class _ReportedRecords(Sequence[Record]):
    """Records that say how many were taken as an importer goes through them (every :data:`REPORT_EVERY`, and the end)."""

    def __init__(self, records: Sequence[Record], progress: ProgressCallback) -> None:
        self._records = records
        self._progress = progress

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, index: Any) -> Any:
        return self._records[index]

    def __iter__(self) -> Iterator[Record]:
        return counted(self._records, len(self._records), self._progress)


def iter_traces(
    path: Path,
    *,
    trace_format: str = "auto",
    search_tools: Sequence[str] | None = None,
    read_progress: ProgressCallback | None = None,
    import_progress: ProgressCallback | None = None,
) -> tuple[Iterator[LoadedTrace], TraceFormat]:
    """Like :func:`load_traces`, but native JSON Lines are validated lazily, one line at a time.

    ``read_progress(bytes read, file size)`` hears of the reading as it goes (every :data:`~ragmeter.io.text_files.READ_PROGRESS_BYTES` and at the end);
    ``import_progress(records, all records)`` of an export's records as they are converted.
    Traces of a file read whole know their number (``operator.length_hint``).
    """
    if trace_format not in TRACE_FORMATS:
        raise InputError(f"unknown trace format {trace_format!r}; expected one of {', '.join(TRACE_FORMATS)}")
    first = first_record(path)
    records = (
        read_records(path, read_progress) if first is None or trace_format not in ("auto", "native") else None
    )
    if trace_format == "auto":
        probe = first if first is not None else (records[0] if records else None)
        if probe is None:
            raise InputError("no traces in the file", where=str(path))
        try:
            fmt = detect_format(probe.value)
        except InputError as exc:
            raise InputError(exc.message, where=probe.where) from None
    else:
        fmt = trace_format  # type: ignore[assignment]
    if fmt == "native":
        if first is not None:
            return unique_ids(_native_stream(path, read_progress)), fmt
        native = load_native(records or [])
        return KnownLength(unique_ids(native), len(native)), fmt
    if records is None:
        records = read_records(path, read_progress)
    traces = import_records(
        records if import_progress is None else _ReportedRecords(records, import_progress),
        fmt,
        SearchToolMatcher(search_tools),
    )
    count = operator.length_hint(traces)
    if not count:
        raise InputError(f"no agent traces found in this {fmt} export", where=str(path))
    return KnownLength(unique_ids(traces), count), fmt


def load_traces(
    path: Path,
    *,
    trace_format: str = "auto",
    search_tools: Sequence[str] | None = None,
) -> tuple[list[LoadedTrace], TraceFormat]:
    """Read ``path`` in ``trace_format`` (``auto`` detects it); return the traces and the format used.

    ``search_tools`` names the tools that count as searches for the importers
    (glob patterns; default :data:`ragmeter.agentic.importers.DEFAULT_SEARCH_TOOLS`).
    """
    stream, fmt = iter_traces(path, trace_format=trace_format, search_tools=search_tools)
    return list(stream), fmt
