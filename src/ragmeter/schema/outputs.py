"""System outputs: what the system under test returned for one sample.

The contract accepts ``{"retrieved": [{"id": ..., "text": ...}, ...]}``, a bare
id array, or either of those encoded as a JSON string. Order is rank order.

>>> out = SystemOutput.from_raw(["doc-7", "doc-3"])
>>> [item.id for item in out.retrieved]
['doc-7', 'doc-3']
>>> SystemOutput.from_raw('{"retrieved": [{"id": 3, "text": "x"}]}').retrieved[0].id
'3'
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


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

    @classmethod
    def from_raw(cls, raw: Any) -> SystemOutput:
        """Accept every form of the output contract and return one model.

        Raises ``ValueError`` with a short reason when ``raw`` fits none of them.
        """
        if isinstance(raw, SystemOutput):
            return raw
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ValueError(f"output is a string but not valid JSON ({exc.msg})") from None
        if isinstance(raw, list):
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
        if "retrieved" in raw and raw["retrieved"] is None:
            raw = {**raw, "retrieved": []}
        if isinstance(raw.get("retrieved"), list):
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
