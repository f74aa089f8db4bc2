"""The append-only trial log: one JSON Lines file per question, the single source of every verdict.

Records, one per line (``type``):

- ``header`` — first line: question, pool (ids, texts, sources), per-question seed, design,
  solver and validator identity, ground-truth hash, ragmeter version;
- ``trial`` — ``kind``, ``index``, its ``seed``, the ids ``shown`` (in order), ``passed``, the
  ``answer``, the validator's ``validation`` details and the ``call`` (tokens, cost, latency);
- ``error`` — a trial that got no verdict (solver or validator failure); it is retried on resume;
- ``end`` — informational: how the question ended and what the design saw at each look.

Each line is written whole and fsynced (:class:`~ragmeter.io.atomic.AppendLog`, secrets
redacted), under an exclusive ``flock`` (one writer per log). A line cut short by a crash is
dropped when the log is reopened (:attr:`TrialLog.dropped` says so), so a resumed run repeats
no trial and loses none that was recorded; any other unreadable line is an error.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "q.jsonl"
>>> log = TrialLog.open(path, {"pair_id": "b:1", "seed": 3}, resume=False)
>>> log.append({"type": "trial", "kind": "random", "index": 0, "shown": ["a"], "passed": True})
>>> log.close()
>>> contents = read_log(path)
>>> contents.header["pair_id"], [t["index"] for t in contents.trials]
('b:1', [0])
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError, InputError
from ragmeter.io.atomic import AppendLog
from ragmeter.io.jsonyaml import json_lines, loads_json
from ragmeter.io.text_files import decode_text
from ragmeter.redaction import redact_data

SCHEMA = "ragmeter.mining.trials/1"

FINGERPRINT_FIELDS = (
    "pair_id",
    "seed",
    "pool",
    "design",
    "solver",
    "validator",
    "ground_truth_sha256",
    "query",
)
"""Header fields that must match for a log to be resumed."""


def now() -> str:
    """The current UTC time, ISO 8601."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass
class LogContents:
    """What a log holds: header, trials and errors in file order, and whether a cut line was dropped."""

    header: dict[str, Any]
    trials: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    looks: list[dict[str, Any]] = field(default_factory=list)
    end: dict[str, Any] | None = None
    good_bytes: int = 0
    dropped_partial_line: bool = False
    complete_lines: int = 0


def read_log(path: Path) -> LogContents:
    """Parse a trial log; a final line without its newline (a crash mid-write) is ignored."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("trial log not found", where=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read the trial log ({exc.strerror})", where=str(path)) from None
    cut = data.rfind(b"\n") + 1
    partial = cut < len(data)
    lines = list(json_lines(decode_text(data[:cut], source=str(path))))
    if not lines:
        raise InputError("trial log has no header line", where=str(path))
    records: list[dict[str, Any]] = []
    for lineno, line in lines:
        value = loads_json(line, source=str(path), line=lineno)
        if not isinstance(value, dict) or "type" not in value:
            raise InputError("each line must be an object with a 'type'", where=f"{path}:{lineno}")
        value["_line"] = lineno
        records.append(value)
    header = records[0]
    if header.get("type") != "header" or header.get("schema") != SCHEMA:
        raise InputError(f"first line is not a {SCHEMA} header", where=f"{path}:{header['_line']}")
    contents = LogContents(
        header=header, good_bytes=cut, dropped_partial_line=partial, complete_lines=data.count(b"\n", 0, cut)
    )
    seen: dict[tuple[str, int], int] = {}
    for record in records[1:]:
        kind = record["type"]
        if kind == "trial":
            index = record.get("index", -1)
            if isinstance(index, bool) or not isinstance(index, int):
                raise InputError(
                    f"trial index must be a whole number, got {index!r}", where=f"{path}:{record['_line']}"
                )
            key = (str(record.get("kind")), index)
            if key in seen:
                raise InputError(
                    f"trial {key[0]}/{key[1]} is logged twice (first at line {seen[key]})",
                    where=f"{path}:{record['_line']}",
                )
            seen[key] = record["_line"]
            contents.trials.append(record)
        elif kind == "error":
            contents.errors.append(record)
        elif kind == "look":
            contents.looks.append(record)
        elif kind == "end":
            contents.end = record
    return contents


class TrialLog:
    """An open log for appending; thread-safe; holds an exclusive lock until closed."""

    def __init__(self, path: Path, handle: AppendLog, contents: LogContents) -> None:
        self.path = path
        self._handle = handle
        self.contents = contents

    @property
    def dropped(self) -> str | None:
        """What reopening the log repaired (a cut-off last line), or ``None``."""
        if not self.contents.dropped_partial_line:
            return None
        line = self.contents.complete_lines + 1
        return f"{self.path}:{line}: dropped a truncated last line left by an interrupted run"

    @classmethod
    def open(cls, path: Path, header: dict[str, Any], *, resume: bool) -> TrialLog:
        """Create the log with ``header``, or (``resume``) reopen it after checking the header matches."""
        path.parent.mkdir(parents=True, exist_ok=True)
        exists = path.exists() and path.stat().st_size > 0
        if exists and not resume:
            raise ConfigError(
                "a trial log from an earlier run exists; pass --resume to continue it or --fresh to start over",
                where=str(path),
            )
        handle = AppendLog(path)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise ConfigError(
                "the trial log is in use by another ragmeter process", where=str(path)
            ) from None
        try:
            if exists:
                contents = read_log(path)
                _check_fingerprint(path, contents.header, redact_data(header))
                if contents.dropped_partial_line:
                    os.ftruncate(handle.fileno(), contents.good_bytes)
            else:
                full = {"type": "header", "schema": SCHEMA, **header, "created": now()}
                handle.append(json.dumps(full, ensure_ascii=False))
                contents = LogContents(header=full)
        except BaseException:
            handle.close()
            raise
        return cls(path, handle, contents)

    def append(self, record: dict[str, Any]) -> None:
        """Write one record as one whole line, fsynced."""
        self._handle.append(json.dumps({**record, "time": now()}, ensure_ascii=False))

    def close(self) -> None:
        """Release the lock and close the file."""
        with contextlib.suppress(OSError):
            self._handle.close()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _check_fingerprint(path: Path, old: dict[str, Any], new: dict[str, Any]) -> None:
    for name in FINGERPRINT_FIELDS:
        if name in new and _canonical(old.get(name)) != _canonical(new[name]):
            raise ConfigError(
                f"the trial log was made with a different {name.replace('_', ' ')}; "
                "pass --fresh to start this question over (or write to another --out)",
                where=str(path),
            )
