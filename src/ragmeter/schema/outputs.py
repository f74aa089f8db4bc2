"""System outputs: what the system under test returned for one sample.

The contract accepts ``{"retrieved": [{"id": ..., "text": ...}, ...]}``, a bare
id array, or either of those encoded as a JSON string. Order is rank order.

>>> out = SystemOutput.from_raw(["doc-7", "doc-3"])
>>> [item.id for item in out.retrieved]
['doc-7', 'doc-3']
>>> SystemOutput.from_raw('{"retrieved": [{"id": 3, "text": "x"}]}').retrieved[0].id
'3'
>>> rag = SystemOutput.from_raw({"answer": "42", "abstained": False, "folder_mode": True, "latency": 1.5})
>>> rag.folder_mode, rag.failed(), rag.has_field("abstained"), rag.has_field("references")
('on', False, True, False)
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragmeter.io.jsonyaml import JsonError, parse_json
from ragmeter.near_miss import near_miss_key
from ragmeter.schema.rag import FolderMode, Reference, TokenCounts, check_seconds


class RetrievedItem(BaseModel):
    """One ranked item (document or chunk)."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    text: str | None = None
    rel_path: str | None = None
    heading_path: str | list[str] | None = None
    score: float | None = None
    rank: int | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise ValueError(f"id must be a string or an integer, got {value!r}")
        return str(value)

    @field_validator("score")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError(f"score must be finite, got {value!r}")
        return value


class SystemOutput(BaseModel):
    """The recorded output of the system under test for one sample."""

    model_config = ConfigDict(extra="allow")

    retrieved: list[RetrievedItem] = Field(default_factory=list)
    answer: str | None = None
    # Whole-RAG and operational fields (see docs/rag.md); all optional.
    references: list[Reference] | None = None
    abstained: bool | None = None
    folder_mode: FolderMode | None = None
    selected_folders: list[str] | None = None
    timings: dict[str, float] | None = None
    tokens: TokenCounts | None = None
    model: str | None = None
    error: str | None = None
    timed_out: bool | None = None
    latency: float | None = None

    @field_validator("folder_mode", mode="before")
    @classmethod
    def _folder_mode(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return "on" if value else "off"
        return value

    @field_validator("latency")
    @classmethod
    def _latency(cls, value: float | None) -> float | None:
        return check_seconds(value, "latency")

    @field_validator("timings")
    @classmethod
    def _timings(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        for stage, seconds in (value or {}).items():
            check_seconds(seconds, f"timings[{stage!r}]")
        return value

    def has_field(self, name: str) -> bool:
        """True when the recorded output set ``name`` (even to null)."""
        return name in self.model_fields_set

    def failed(self) -> bool:
        """True when the call failed: a non-blank ``error`` or ``timed_out: true``."""
        return bool(self.error and self.error.strip()) or bool(self.timed_out)

    @classmethod
    def from_raw(cls, raw: Any) -> SystemOutput:
        """Accept every form of the output contract and return one model.

        Raises ``ValueError`` with a short reason when ``raw`` fits none of them.
        """
        if isinstance(raw, SystemOutput):
            return raw
        if isinstance(raw, str):
            try:
                raw = parse_json(raw)
            except JsonError as exc:
                raise ValueError(f"output is a string but not valid JSON ({exc.reason})") from None
        if isinstance(raw, (list, tuple)):
            items: list[dict[str, Any]] = []
            for i, entry in enumerate(raw):
                if isinstance(entry, dict):
                    items.append(entry)
                elif isinstance(entry, (str, int)) and not isinstance(entry, bool):
                    items.append({"id": entry})
                else:
                    raise ValueError(f"retrieved[{i}] must be an id or an object, got {entry!r}")
            raw = {"retrieved": items}
        if not isinstance(raw, dict):
            raise ValueError(
                'output must be {"retrieved": [...]}, an id array, or that JSON as a string; '
                f"got {type(raw).__name__}"
            )
        miss = near_miss_key(raw, cls.model_fields)
        if miss is not None:
            raise ValueError(f"output has an unknown field {miss[0]!r}; did you mean {miss[1]!r}?")
        if raw and not any(key in cls.model_fields for key in raw):
            shown = ", ".join(repr(key) for key in list(raw)[:3]) + (", ..." if len(raw) > 3 else "")
            raise ValueError(
                f"output has none of the output fields ({', '.join(cls.model_fields)}); got {shown}"
            )
        if "retrieved" in raw and raw["retrieved"] is None:
            raw = {**raw, "retrieved": []}
        if isinstance(raw.get("retrieved"), (list, tuple)):
            raw = {
                **raw,
                "retrieved": [
                    {"id": e} if isinstance(e, (str, int)) and not isinstance(e, bool) else e
                    for e in raw["retrieved"]
                ],
            }
        return cls.model_validate(raw)

    def ranked_ids(self) -> list[str | None]:
        """Ids in rank order (``None`` for items without an id)."""
        return [item.id for item in self.retrieved]


def looks_like_output(value: Any) -> bool:
    """Whether ``value`` has the form of an output (it may still be invalid): what shape detectors ask.

    An id list, a JSON string, or an object that is empty or has an output field (or a near miss
    of one, so that a typo gets its own did-you-mean instead of an unknown-shape error).

    >>> looks_like_output(["d1"]), looks_like_output({"answer": "x"}), looks_like_output({"retreived": []})
    (True, True, True)
    >>> looks_like_output({"d1": 1.0, "d2": 0.5}), looks_like_output(3)
    (False, False)
    """
    if isinstance(value, (list, tuple, str)):
        return True
    if not isinstance(value, dict):
        return False
    fields = SystemOutput.model_fields
    return not value or any(key in fields for key in value) or near_miss_key(value, fields) is not None
