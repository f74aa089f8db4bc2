"""Load recorded system outputs and attach them to samples.

Every shape of outputs ragmeter reads is one entry of :data:`OUTPUT_SHAPES`: a human name (used
in errors), a detector and a reader. A file, or a mapping passed in Python, that no detector
claims is an error naming the accepted shapes; it is never scored as empty. To read a new shape
(a DataFrame of outputs, say), add one entry with its detector and reader. A ranx/pytrec_eval run
``{qid: {docid: score}}`` is one of them: each query's documents are ranked as trec_eval ranks a
run (score descending, ties by docid descending), never by the dict's order. Outputs may also be embedded in the samples as ``actual_output`` (never together with
an outputs file: see :func:`ragmeter.evaluation.dataset_inputs.load_outputs`).

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "o.jsonl"
>>> _ = p.write_text('{"id": "q-1", "output": ["a", "b"]}\\n')
>>> [i.id for i in load_outputs(p)["q-1"].retrieved]
['a', 'b']
>>> _ = p.with_suffix(".json").write_text('{"q-1": {"a": 1.0, "c": 2.0, "b": 2.0}}')
>>> [(i.id, i.score) for i in load_outputs(p.with_suffix(".json"))["q-1"].retrieved]
[('c', 2.0), ('b', 2.0), ('a', 1.0)]
>>> _ = p.with_suffix(".json").write_text('{"q-1": 3}')
>>> load_outputs(p.with_suffix(".json"))
Traceback (most recent call last):
...
ragmeter.errors.InputError: ...o.json: not a shape of outputs that ragmeter reads (its first value is a number, not an output); accepted: ...
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragmeter.errors import InputError
from ragmeter.io.records import Record, describe_validation_error, read_jsonl, read_structured
from ragmeter.io.text_files import data_suffix
from ragmeter.schema.outputs import RetrievedItem, SystemOutput, looks_like_output

LoadedOutputs = tuple[dict[str, SystemOutput], dict[str, str]]
"""Outputs keyed by sample id, and where each one was read (``file:line`` or ``file (sample 'q')``)."""


def parse_output(raw: Any, *, where: str) -> SystemOutput:
    """Validate one raw output against the contract, naming ``where`` on error."""
    try:
        return SystemOutput.from_raw(raw)
    except ValidationError as exc:
        raise InputError(f"output.{describe_validation_error(exc)}", where=where) from None
    except ValueError as exc:
        raise InputError(str(exc), where=where) from None


@dataclass(frozen=True)
class OutputsSource:
    """Outputs as parsed, before their shape is known: JSON Lines records, or one value.

    ``where`` names the source in errors: the file, or ``outputs`` for a mapping given in Python.
    """

    where: str
    records: list[Record] | None = None
    data: Any = None
    in_python: bool = False
    """Given in Python: an entry is named ``outputs['q1']`` rather than ``file (sample 'q1')``."""


@dataclass(frozen=True)
class OutputShape:
    """One shape of outputs: its name in messages, how to recognise it, and how to read it."""

    name: str
    detect: Callable[[OutputsSource], bool]
    read: Callable[[OutputsSource], LoadedOutputs]


def _sample_id(value: Any, where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise InputError(f"id must be a non-blank string or an integer, got {value!r}", where=where)
    return str(value)


def _is_jsonl_records(source: OutputsSource) -> bool:
    first = source.records[0].value if source.records else None
    return isinstance(first, dict) and "id" in first


def _read_jsonl_records(source: OutputsSource) -> LoadedOutputs:
    outputs: dict[str, SystemOutput] = {}
    first_seen: dict[str, str] = {}
    for record in source.records or []:
        value = record.value
        if not isinstance(value, dict) or "id" not in value:
            raise InputError('each line must be an object {"id": ..., "output": ...}', where=record.where)
        sid = _sample_id(value["id"], record.where)
        if "output" not in value:
            raise InputError(f"record for sample {value['id']!r} has no 'output'", where=record.where)
        if sid in first_seen:
            raise InputError(
                f"second output for sample {sid!r} (first at {first_seen[sid]})", where=record.where
            )
        first_seen[sid] = record.where
        outputs[sid] = parse_output(value["output"], where=f"{record.where} (sample {sid!r})")
    return outputs, first_seen


def _is_keyed_outputs(source: OutputsSource) -> bool:
    data = source.data
    return isinstance(data, Mapping) and (not data or any(looks_like_output(v) for v in data.values()))


def _read_keyed_outputs(source: OutputsSource) -> LoadedOutputs:
    outputs: dict[str, SystemOutput] = {}
    first_seen: dict[str, str] = {}
    for key, raw in source.data.items():
        sid = _sample_id(key, source.where)
        first_seen[sid] = f"outputs[{key!r}]" if source.in_python else f"{source.where} (sample {sid!r})"
        outputs[sid] = parse_output(raw, where=first_seen[sid])
    return outputs, first_seen


def _is_scored_run(source: OutputsSource) -> bool:
    """A ranx/pytrec_eval run: every value maps docids to numbers, and no docid is an output field."""
    data = source.data
    if not isinstance(data, Mapping) or not data:
        return False
    docs = list(data.values())
    return (
        all(isinstance(d, Mapping) and all(_is_number(v) for v in d.values()) for d in docs)
        and any(docs)
        and not any(key in SystemOutput.model_fields for d in docs for key in d)
    )


def _read_scored_run(source: OutputsSource) -> LoadedOutputs:
    outputs: dict[str, SystemOutput] = {}
    first_seen: dict[str, str] = {}
    for key, docs in source.data.items():
        sid = _sample_id(key, source.where)
        first_seen[sid] = f"outputs[{key!r}]" if source.in_python else f"{source.where} (sample {sid!r})"
        items = []
        for docid, score in docs.items():
            if isinstance(docid, bool) or not isinstance(docid, (str, int)) or not str(docid).strip():
                raise InputError(
                    f"a document id must be a non-blank string, got {docid!r}", where=first_seen[sid]
                )
            if not math.isfinite(score):
                raise InputError(
                    f"the score of {str(docid)!r} must be finite, got {score!r}", where=first_seen[sid]
                )
            items.append((str(docid), float(score)))
        items.sort(key=lambda item: (item[1], item[0].encode()), reverse=True)  # trec_eval's order
        outputs[sid] = SystemOutput(retrieved=[RetrievedItem(id=d, score=v) for d, v in items])
    return outputs, first_seen


OUTPUT_SHAPES: tuple[OutputShape, ...] = (
    OutputShape(
        'JSON Lines with one {"id": ..., "output": ...} per line', _is_jsonl_records, _read_jsonl_records
    ),
    OutputShape("a ranx/pytrec_eval run {qid: {docid: score}}", _is_scored_run, _read_scored_run),
    OutputShape(
        'an object keyed by sample id whose values are outputs ({"retrieved": [...], "answer": ...}, '
        "an id list, or that JSON as a string)",
        _is_keyed_outputs,
        _read_keyed_outputs,
    ),
)
"""Every shape of outputs ragmeter reads, tried in order: the first whose detector claims the data reads it."""


def _kind(value: Any) -> str:
    """``null``, ``a number``, ``a text``, ``a list`` or ``an object``: a JSON value's kind, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a text"
    return "a list" if isinstance(value, (list, tuple)) else "an object"


def _what_it_looks_like(source: OutputsSource) -> str:
    """A short description of data no shape claims, for the error message."""
    if source.records is not None:
        first = source.records[0].value if source.records else None
        if isinstance(first, dict):
            return f"its first line is an object with keys {', '.join(repr(k) for k in list(first)[:3])}"
        return f"its first line is {_kind(first)}"
    data = source.data
    if isinstance(data, Mapping):
        values = list(data.values())
        return f"its first value is {_kind(values[0])}, not an output"
    if isinstance(data, (list, tuple)):
        return "it is a list (outputs are keyed by sample id)"
    return f"it is {_kind(data)}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def read_outputs(source: OutputsSource) -> LoadedOutputs:
    """Read ``source`` with the first shape of :data:`OUTPUT_SHAPES` that claims it.

    Data that no shape claims is an :class:`InputError` naming every accepted shape.

    >>> read_outputs(OutputsSource("outputs", data={"q": ["a"]}))[0]["q"].ranked_ids()
    ['a']
    """
    for shape in OUTPUT_SHAPES:
        if shape.detect(source):
            return shape.read(source)
    accepted = "; ".join(shape.name for shape in OUTPUT_SHAPES)
    raise InputError(
        f"not a shape of outputs that ragmeter reads ({_what_it_looks_like(source)}); accepted: {accepted}",
        where=source.where,
    )


def load_outputs(path: str | Path) -> dict[str, SystemOutput]:
    """Read a file of outputs keyed by sample id."""
    return load_outputs_with_sources(path)[0]


def load_outputs_with_sources(path: str | Path) -> LoadedOutputs:
    """Read a file of outputs keyed by sample id, with where each one was read (``file:line``)."""
    path = Path(path)
    if data_suffix(path) == ".jsonl":
        return read_outputs(OutputsSource(str(path), records=read_jsonl(path)))
    return read_outputs(OutputsSource(str(path), data=read_structured(path)))


def outputs_from_mapping(outputs: Mapping[Any, Any]) -> LoadedOutputs:
    """Read outputs given in Python as a mapping of sample id → output (errors name ``outputs[...]``)."""
    return read_outputs(OutputsSource("outputs", data=outputs, in_python=True))
