"""The judge log: a JSON Lines file written as outcomes complete, so a crash loses nothing.

Line 1 is a header (``kind: header``) with the log schema and a fingerprint of
the judge setup (endpoint, model, decoding, prompt hashes). Every further line
is one outcome (``kind: outcome``). On resume, outcomes already in the log are
kept and not judged again, except those unscored for a reason a later run can
fix (``call_failed``, ``budget_exhausted``); when an item appears more than
once, the last line wins. A last line cut short by a kill is dropped, and
:attr:`RunLog.notes` says so; any other unreadable line is an error.
Lines go out whole (:class:`~ragmeter.io.atomic.AppendLog`), secrets redacted.

>>> import tempfile, pathlib
>>> from ragmeter.judges.results import JudgeOutcome
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = pathlib.Path(tmp) / "judge.jsonl"
...     with RunLog.open(path, fingerprint="abc", resume=True) as log:
...         log.append(JudgeOutcome(key="k1", item_id="1", judge="g", metric="g", value=3.0))
...     with RunLog.open(path, fingerprint="abc", resume=True) as log:
...         sorted(log.done)
['k1']
"""

from __future__ import annotations

import json
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from ragmeter.errors import ConfigError, InputError
from ragmeter.io.atomic import AppendLog, drop_torn_line
from ragmeter.io.jsonyaml import JsonError, json_lines, loads_json, parse_json
from ragmeter.io.records import describe_validation_error
from ragmeter.io.text_files import decode_text
from ragmeter.judges.results import JudgeOutcome

LOG_SCHEMA = "ragmeter.judge-log/1"


class RunLog:
    """An append-only outcome log; use :meth:`open`."""

    def __init__(
        self, path: Path, handle: AppendLog, done: dict[str, JudgeOutcome], notes: list[str] | None = None
    ) -> None:
        self.path = path
        self._handle = handle
        self.done = done
        """Outcomes from earlier runs that need no new judgement, by key."""
        self.notes = notes or []
        """What opening the log repaired (a dropped cut-off last line), for the run's warnings."""

    @classmethod
    def open(
        cls, path: str | Path, *, fingerprint: str, resume: bool, header: dict[str, Any] | None = None
    ) -> RunLog:
        """Open ``path`` for appending (resume) or start it afresh."""
        path = Path(path)
        done: dict[str, JudgeOutcome] = {}
        notes: list[str] = []
        if resume and path.is_file() and path.stat().st_size > 0:
            done = _read(path, fingerprint, notes)
            handle = AppendLog(path, sync=False)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = AppendLog(path, fresh=True, sync=False)
            head = {"kind": "header", "schema": LOG_SCHEMA, "fingerprint": fingerprint, **(header or {})}
            handle.append(json.dumps(head, ensure_ascii=False))
        return cls(path, handle, done, notes)

    def append(self, outcome: JudgeOutcome) -> None:
        """Write one outcome (a whole line, handed to the operating system at once)."""
        self._handle.append(
            json.dumps({"kind": "outcome", **outcome.model_dump(mode="json")}, ensure_ascii=False)
        )

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _read(path: Path, fingerprint: str, notes: list[str]) -> dict[str, JudgeOutcome]:
    raw = path.read_bytes()
    cut = raw.rfind(b"\n") + 1  # a last line without its newline was cut short (killed mid-write)
    lines = list(json_lines(decode_text(raw[:cut], source=str(path))))
    if not lines and not raw.strip():
        return {}
    try:
        head = parse_json(lines[0][1]) if lines else None
    except JsonError:
        head = None
    if not isinstance(head, dict) or head.get("schema") != LOG_SCHEMA:
        raise InputError(
            f"not a ragmeter judge log (expected a {LOG_SCHEMA} header)",
            where=f"{path}:{lines[0][0] if lines else 1}",
        )
    if head.get("fingerprint") != fingerprint:
        raise ConfigError(
            "this judge log was written with a different judge setup (endpoint, model, decoding or prompts);"
            " start a new log or resume with the original setup",
            where=str(path),
        )
    done: dict[str, JudgeOutcome] = {}
    for lineno, line in lines[1:]:
        value = loads_json(line, source=str(path), line=lineno)
        if not isinstance(value, dict):
            raise InputError("unreadable outcome line (not a JSON object)", where=f"{path}:{lineno}")
        value.pop("kind", None)
        try:
            outcome = JudgeOutcome.model_validate(value)
        except ValidationError as exc:
            problem = describe_validation_error(exc)
            raise InputError(f"unreadable outcome line ({problem})", where=f"{path}:{lineno}") from None
        done[outcome.key] = outcome
    # A last line cut short by a kill (``lines`` stops before it) is made again, not misread;
    # it is cut only once the rest has been read, so a log refused above is left as it was.
    dropped = drop_torn_line(path)
    if dropped is not None:
        notes.append(f"judge: {dropped}; that judgement is made again")
    return {key: o for key, o in done.items() if not o.retryable}
