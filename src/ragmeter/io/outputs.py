"""Load recorded system outputs and attach them to samples.

Accepted files: JSONL with one ``{"id": ..., "output": ...}`` per line, or a
JSON/YAML object keyed by sample id. Outputs may also be embedded in the
samples as ``actual_output``.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "o.jsonl"
>>> _ = p.write_text('{"id": "q-1", "output": ["a", "b"]}\\n')
>>> [i.id for i in load_outputs(p)["q-1"].retrieved]
['a', 'b']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragmeter.errors import InputError
from ragmeter.io.records import describe_validation_error, read_jsonl, read_structured
from ragmeter.schema.outputs import SystemOutput


def parse_output(raw: Any, *, where: str) -> SystemOutput:
    """Validate one raw output against the contract, naming ``where`` on error."""
    try:
        return SystemOutput.from_raw(raw)
    except ValidationError as exc:
        raise InputError(f"output.{describe_validation_error(exc)}", where=where) from None
    except ValueError as exc:
        raise InputError(str(exc), where=where) from None


def load_outputs(path: str | Path) -> dict[str, SystemOutput]:
    """Read a file of outputs keyed by sample id."""
    return load_outputs_with_sources(path)[0]


def load_outputs_with_sources(path: str | Path) -> tuple[dict[str, SystemOutput], dict[str, str]]:
    """Read a file of outputs keyed by sample id, with where each one was read (``file:line``)."""
    path = Path(path)
    outputs: dict[str, SystemOutput] = {}
    first_seen: dict[str, str] = {}
    if path.suffix.lower() == ".jsonl":
        for record in read_jsonl(path):
            value = record.value
            if not isinstance(value, dict) or "id" not in value:
                raise InputError('each line must be an object {"id": ..., "output": ...}', where=record.where)
            if (
                isinstance(value["id"], bool)
                or not isinstance(value["id"], (str, int))
                or not str(value["id"]).strip()
            ):
                raise InputError(
                    f"id must be a non-blank string or an integer, got {value['id']!r}", where=record.where
                )
            if "output" not in value:
                raise InputError(f"record for sample {value['id']!r} has no 'output'", where=record.where)
            sid = str(value["id"])
            if sid in first_seen:
                raise InputError(
                    f"second output for sample {sid!r} (first at {first_seen[sid]})", where=record.where
                )
            first_seen[sid] = record.where
            outputs[sid] = parse_output(value["output"], where=f"{record.where} (sample {sid!r})")
        return outputs, first_seen
    data = read_structured(path)
    if not isinstance(data, dict):
        raise InputError("expected an object keyed by sample id (or a .jsonl file)", where=str(path))
    for sid, raw in data.items():
        first_seen[str(sid)] = f"{path} (sample {str(sid)!r})"
        outputs[str(sid)] = parse_output(raw, where=first_seen[str(sid)])
    return outputs, first_seen
