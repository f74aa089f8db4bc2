"""Labels files: gains for results, keyed by (trace id, result key).

One JSON object per line: ``trace_id``, exactly one of ``key`` (as ragmeter prints it:
``url:…``, ``domain:…``, ``id:…``, ``content:…``), ``domain_id``, ``id`` or ``url``,
and ``gain`` (0-4; ``null`` = unscored, optionally with a ``reason``). URLs are
matched by their dedup key, so ``https://www.a.org/x/`` labels ``http://a.org/x``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from ragmeter.agentic.clusters import normalise_key_name
from ragmeter.agentic.load import read_records
from ragmeter.agentic.trace import DomainIdText, Gain, IdText
from ragmeter.agentic.validate import describe_validation_error
from ragmeter.dedup.keys import KeyMaker
from ragmeter.errors import InputError


class LabelRecord(BaseModel):
    """One line of a labels file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    trace_id: IdText
    key: str | None = None
    domain_id: DomainIdText | None = None
    id: IdText | None = None
    url: str | None = None
    gain: Gain | None
    reason: str | None = None

    @model_validator(mode="after")
    def _one_reference(self) -> LabelRecord:
        given = [name for name in ("key", "domain_id", "id", "url") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(
                "a label names its result with exactly one of key, domain_id, id or url"
                + (f" (got {', '.join(given)})" if given else "")
            )
        return self


@dataclass(frozen=True)
class Label:
    """A gain (or an explicit unscored) for one result of one trace."""

    trace_id: str
    key: str
    gain: float | None
    reason: str | None
    where: str


def label_from_record(value: Any, *, where: str, keys: KeyMaker) -> Label:
    """Validate one labels-file record and normalise its result reference.

    >>> from ragmeter.dedup import KeyMaker
    >>> label_from_record({"trace_id": "t1", "url": "https://www.a.org/x/", "gain": 3}, where="l:1", keys=KeyMaker())
    Label(trace_id='t1', key='url:a.org/x', gain=3.0, reason=None, where='l:1')
    """
    if not isinstance(value, dict):
        raise InputError(f"expected a JSON object, got {type(value).__name__}", where=where)
    try:
        record = LabelRecord.model_validate(value)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, LabelRecord), where=where) from None
    if record.key is not None:
        key = normalise_key_name(record.key, keys)
        if key is None:
            raise InputError(
                f"key: expected 'domain:…', 'id:…', 'url:…' or 'content:…', got {record.key!r}", where=where
            )
    elif record.domain_id is not None:
        key = "domain:" + record.domain_id
    elif record.id is not None:
        key = "id:" + record.id
    else:
        url = keys.url_key(record.url)
        if url is None:
            raise InputError("url: must not be empty", where=where)
        key = "url:" + url
    return Label(record.trace_id, key, record.gain, record.reason, where)


def load_labels(path: Path, *, keys: KeyMaker) -> dict[str, list[Label]]:
    """Read a labels file into labels per trace id; conflicting repeats are an error."""
    by_trace: dict[str, list[Label]] = {}
    seen: dict[tuple[str, str], Label] = {}
    for record in read_records(path):
        label = label_from_record(record.value, where=record.where, keys=keys)
        earlier = seen.get((label.trace_id, label.key))
        if earlier is not None:
            if earlier.gain != label.gain:
                raise InputError(
                    f"gain {label.gain} for {label.key} of trace {label.trace_id!r} contradicts gain "
                    f"{earlier.gain} at {earlier.where}",
                    where=label.where,
                )
            continue
        seen[(label.trace_id, label.key)] = label
        by_trace.setdefault(label.trace_id, []).append(label)
    return by_trace
