"""``outputs.jsonl``: outputs appended as they complete, one fsync'd line each, so a crash loses nothing.

Each line is ``{"id": <sample id>, "output": {...}}``. On ``--resume`` the file
is read back; a last line cut short by a crash is dropped with a warning (and
the file truncated to the last complete line) — any other damage is an error,
because guessing would lose or duplicate work.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "outputs.jsonl"
>>> with OutputsJournal(path) as journal:
...     journal.append("q-1", {"retrieved": []})
>>> with path.open("a") as handle:  # a crash mid-line
...     _ = handle.write('{"id": "q-2", "outp')
>>> done = read_journal(path, repair=True)
>>> sorted(done.outputs), len(done.warnings)
(['q-1'], 1)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from ragmeter.errors import InputError
from ragmeter.io.atomic import AppendLog
from ragmeter.io.jsonyaml import JsonError, parse_json
from ragmeter.redaction import redact

OUTPUTS_FILENAME = "outputs.jsonl"


@dataclass
class JournalState:
    """What an existing ``outputs.jsonl`` holds."""

    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def read_journal(path: Path, *, repair: bool = False) -> JournalState:
    """Read the outputs recorded so far; with ``repair``, cut off a truncated last line.

    A missing or empty file is an empty state. Duplicate ids and damaged lines
    other than the last are :class:`~ragmeter.errors.InputError`.
    """
    state = JournalState()
    if not path.exists():
        return state
    data = path.read_bytes()
    good_end = 0
    position = 0
    lineno = 0
    while position < len(data):
        newline = data.find(b"\n", position)
        complete = newline != -1
        end = newline + 1 if complete else len(data)
        raw = data[position:end]
        lineno += 1
        position = end
        if not raw.strip():
            good_end = end
            continue
        record = _parse_line(raw)
        is_last = not data[end:].strip()
        if record is None:
            if not is_last:
                raise InputError(
                    "damaged line (not a JSON record); remove it or start a new results folder",
                    where=f"{path}:{lineno}",
                )
            shown = redact(raw.decode("utf-8", errors="replace").strip())
            shown = shown if len(shown) <= 60 else shown[:59] + "…"
            state.warnings.append(
                f"{path}:{lineno}: dropped a truncated last line left by an interrupted run ({shown!r}); "
                "that question will be asked again"
            )
            break
        sample_id, output = record
        if sample_id in state.outputs:
            raise InputError(f"second output for sample {sample_id!r}", where=f"{path}:{lineno}")
        state.outputs[sample_id] = output
        good_end = end
    missing_newline = good_end == len(data) and bool(data) and not data.endswith(b"\n")
    if repair and (good_end < len(data) or missing_newline):
        with path.open("r+b") as handle:
            handle.truncate(good_end)
            if missing_newline:  # the record was complete; only its newline was lost
                handle.seek(good_end)
                handle.write(b"\n")
            handle.flush()
            os.fsync(handle.fileno())
    return state


def _parse_line(raw: bytes) -> tuple[str, dict[str, Any]] | None:
    try:
        value = parse_json(raw.decode("utf-8"))
    except (JsonError, UnicodeDecodeError):
        return None
    if not isinstance(value, dict) or "id" not in value or not isinstance(value.get("output"), dict):
        return None
    return str(value["id"]), value["output"]


class OutputsJournal:
    """Appends ``{"id", "output"}`` lines, each whole and fsync'd before :meth:`append` returns, secrets redacted."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._log = AppendLog(path)
        self.written = 0

    def append(self, sample_id: str, output: dict[str, Any]) -> None:
        """Write one record durably."""
        self._log.append(json.dumps({"id": sample_id, "output": output}, ensure_ascii=False))
        self.written += 1

    def close(self) -> None:
        """Close the file (idempotent)."""
        self._log.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
