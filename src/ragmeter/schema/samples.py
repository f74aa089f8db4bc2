"""Samples: one test question with its ground truth.

A sample's ``expected_output`` is the relevant ground truth: a list of relevant
ids (binary relevance, gain 1 each) or an id → gain map (graded). Whole-RAG
fields (gold supports, category, …) are optional and only needed by the
metrics that read them.

>>> s = Sample.model_validate({"id": "q-1", "expected_output": ["doc-3", "doc-9"]})
>>> s.gains()
{'doc-3': 1.0, 'doc-9': 1.0}
>>> Sample.model_validate({"id": 7, "expected_output": {"d": 2}}).id
'7'
>>> rag = Sample.model_validate({"id": "q-2", "gold_supports": [{"rel_path": "a.md", "heading_path": "Setup"}],
...                              "category": "factual", "tags": "work"})
>>> len(rag.supports()), rag.tags, rag.answerable
(1, ['work'], True)
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ragmeter.metrics.names import MAX_K
from ragmeter.near_miss import near_miss_key
from ragmeter.schema.rag import Anchor, RecencyRule
from ragmeter.schema.strict_numbers import NumbersModel


def _as_id(value: Any, what: str) -> str:
    """Return an id as a string; ints are accepted (lossless), anything else is an error."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"{what} must be a string or an integer, got {type(value).__name__} {value!r}")
    text = str(value)
    if not text.strip():
        raise ValueError(f"{what} must not be empty")
    return text


class SampleMetadata(NumbersModel):
    """Per-sample options: ``k`` (cutoff) and ``expected_answer`` (for containment and judges)."""

    model_config = ConfigDict(extra="allow")

    k: int | None = Field(
        default=None, ge=1, le=MAX_K, description="per-sample cutoff; wins over every other k"
    )
    expected_answer: str | list[str] | None = None

    @field_validator("k", mode="before")
    @classmethod
    def _k_is_int(cls, value: Any) -> Any:
        if isinstance(value, bool) or (value is not None and not isinstance(value, int)):
            raise ValueError(f"k must be a whole number >= 1, got {value!r}")
        return value

    @field_validator("expected_answer")
    @classmethod
    def _answers_not_blank(cls, value: str | list[str] | None) -> str | list[str] | None:
        answers = [value] if isinstance(value, str) else (value or [])
        if value is not None and (not answers or any(not a.strip() for a in answers)):
            raise ValueError("must be a non-blank string or a list of non-blank strings")
        return value

    def expected_answers(self) -> list[str]:
        """The acceptable answers as a list (empty when none was given)."""
        if self.expected_answer is None:
            return []
        if isinstance(self.expected_answer, str):
            return [self.expected_answer]
        return list(self.expected_answer)


class Sample(BaseModel):
    """One test question with its ground truth and optional embedded system output."""

    model_config = ConfigDict(extra="allow")

    id: str
    input: Any = None
    expected_output: list[str] | dict[str, float] | None = None
    metadata: SampleMetadata = Field(default_factory=SampleMetadata)
    actual_output: Any = None
    # Whole-RAG fields (see docs/rag.md); all optional.
    gold_supports: list[Anchor] | None = None
    required_support_groups: list[list[Anchor]] | None = None
    recency_conflict_rule: RecencyRule | None = None
    answerable: bool = True
    category: str | None = None
    tags: list[str] = Field(default_factory=list)
    difficulty: str | None = None
    vault: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_misspelt_fields(cls, value: Any) -> Any:
        """Other fields are kept, but a misspelt known field (or a ``metadata`` one at the top) is an error."""
        if not isinstance(value, dict):
            return value
        for key in ("expected_answer", "k"):
            if key in value:
                raise ValueError(f"{key!r} belongs under 'metadata' (metadata: {{{key}: ...}})")
        miss = near_miss_key(value, cls.model_fields)
        if miss is not None:
            raise ValueError(f"unknown field {miss[0]!r}; did you mean {miss[1]!r}?")
        return value

    @field_validator("tags", mode="before")
    @classmethod
    def _tags(cls, value: Any) -> Any:
        if value is None:
            return []
        return [value] if isinstance(value, str) else value

    @field_validator("required_support_groups")
    @classmethod
    def _groups(cls, value: list[list[Anchor]] | None) -> list[list[Anchor]] | None:
        for i, group in enumerate(value or []):
            if not group:
                raise ValueError(f"required_support_groups[{i}] is empty; a group needs at least one anchor")
        return value

    @model_validator(mode="after")
    def _recency(self) -> Sample:
        if self.recency_conflict_rule is not None:
            newer = [s for s in self.supports() if s.newer]
            if not newer or len(newer) == len(self.supports()):
                raise ValueError(
                    f"recency_conflict_rule {self.recency_conflict_rule!r} needs gold_supports with at least "
                    "one marked 'newer: true' and one not"
                )
        return self

    def supports(self) -> list[Anchor]:
        """The gold supports; without ``gold_supports``, the anchors of ``required_support_groups``."""
        if self.gold_supports is not None:
            return list(self.gold_supports)
        out: list[Anchor] = []
        for group in self.required_support_groups or []:
            out.extend(a for a in group if a not in out)
        return out

    def has_anchors(self) -> bool:
        """True when relevance comes from anchors (gold supports or groups, no ``expected_output``)."""
        return self.expected_output is None and (
            self.gold_supports is not None or self.required_support_groups is not None
        )

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: Any) -> str:
        return _as_id(value, "id")

    @field_validator("metadata", mode="before")
    @classmethod
    def _metadata(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("expected_output", mode="before")
    @classmethod
    def _expected(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, (list, tuple)):
            ids = [_as_id(v, f"expected_output[{i}]") for i, v in enumerate(value)]
            seen: set[str] = set()
            for doc in ids:
                if doc in seen:
                    raise ValueError(f"id {doc!r} is listed twice")
                seen.add(doc)
            return ids
        if isinstance(value, dict):
            gains: dict[str, float] = {}
            for key, gain in value.items():
                doc = _as_id(key, "expected_output key")
                if isinstance(gain, bool) or not isinstance(gain, (int, float)):
                    raise ValueError(f"gain of {doc!r} must be a number, got {gain!r}")
                if not math.isfinite(gain):
                    raise ValueError(f"gain of {doc!r} must be finite, got {gain!r}")
                gains[doc] = float(gain)
            return gains
        raise ValueError(
            f"expected_output must be a list of relevant ids or an id -> gain map, got {type(value).__name__}"
        )

    def gains(self) -> dict[str, float]:
        """Ground truth as an id → gain map (binary lists give gain 1 per id)."""
        if self.expected_output is None:
            return {}
        if isinstance(self.expected_output, dict):
            return dict(self.expected_output)
        return dict.fromkeys(self.expected_output, 1.0)

    def question(self) -> str | None:
        """The question text, from ``input.question``, ``input.query`` or a string input."""
        if isinstance(self.input, str):
            return self.input
        if isinstance(self.input, dict):
            for key in ("question", "query", "input", "text"):
                value = self.input.get(key)
                if isinstance(value, str):
                    return value
        return None
