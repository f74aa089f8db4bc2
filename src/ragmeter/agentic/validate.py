"""One native trace record validated, and the place it was read from.

Shared by the trace file reader (:mod:`ragmeter.agentic.load`) and the importers of trace
exports (:mod:`ragmeter.agentic.importers`): every error names the record and the field.

>>> describe_location(("turns", 0, "iterations", 2, "searches", 0, "results", 3, "id", "str"))
'turns[0].iterations[2].searches[0].results[3].id'
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ragmeter.agentic.trace import Trace
from ragmeter.errors import InputError
from ragmeter.io.records import unknown_key_message

_UNION_TAGS = frozenset({"str", "int", "float", "bool", "none", "list", "dict"})


@dataclass(frozen=True)
class LoadedTrace:
    """A validated trace and the place it was read from."""

    trace: Trace
    where: str


def describe_location(loc: Sequence[int | str]) -> str:
    """Format a pydantic error location as ``a[0].b``, dropping union-branch tags."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part not in _UNION_TAGS and "[" not in part and "-" not in part:
            out += f".{part}" if out else part
    return out


def describe_validation_error(exc: ValidationError, model: type[BaseModel] = Trace) -> str:
    """One line for the first error (an unknown field first): ``field.path: message``.

    An unknown field suggests the closest field of ``model`` at that place.
    """
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])  # a typo explains the rest
    loc = describe_location(err["loc"])
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = unknown_key_message(model, tuple(err["loc"]), what="field")
        if model is Trace and "did you mean" not in msg:
            msg = "unknown field (not part of the trace format; see trace.schema.json)"
    return f"{loc}: {msg}" if loc else msg


def validate_trace(value: Any, *, where: str) -> Trace:
    """Validate one native trace record, naming the record and field on error."""
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object (one trace), got {type(value).__name__}", where=where)
    try:
        return Trace.model_validate(value)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc), where=where) from None


class KnownLength(Iterator[LoadedTrace]):
    """Traces one at a time, from a source that knows how many there are (``operator.length_hint``).

    >>> import operator
    >>> operator.length_hint(KnownLength(iter([]), 3))
    3
    """

    def __init__(self, traces: Iterator[LoadedTrace], count: int) -> None:
        self._traces = traces
        self._count = count

    def __next__(self) -> LoadedTrace:
        return next(self._traces)

    def __length_hint__(self) -> int:
        return self._count


def unique_ids(traces: Iterable[LoadedTrace]) -> Iterator[LoadedTrace]:
    """Pass traces through, rejecting a repeated id (naming both places)."""
    seen: dict[str, str] = {}
    for loaded in traces:
        tid = loaded.trace.trace_id
        if tid in seen:
            raise InputError(f"duplicate trace_id {tid!r} (first at {seen[tid]})", where=loaded.where)
        seen[tid] = loaded.where
        yield loaded
