"""Whole-RAG data models: gold supports (anchors), references, token counts, index statistics.

A gold support is an *anchor*: a file (``rel_path``) and a heading path inside
it, optionally with snippets the chunk text must contain. ``heading_path`` is a
string (``"Setup > Install"``) or a list of components.

>>> a = Anchor.model_validate({"rel_path": "notes/setup.md", "heading_path": "Setup > Install"})
>>> a.rel_path, a.heading_path, a.snippets, a.newer
('notes/setup.md', 'Setup > Install', [], False)
>>> IndexStats.model_validate({"docs_processed": 10, "docs_with_zero_chunks": 2}).zero_chunk_count()
2
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragmeter.schema.strict_numbers import NumbersModel

RecencyRule = Literal["cite_newer", "acknowledge_both", "cite_both"]
FolderMode = Literal["off", "on", "on_with_fallback"]


def _non_blank(value: Any, what: str) -> Any:
    if isinstance(value, str) and not value.strip():
        raise ValueError(f"{what} must not be empty")
    return value


def _heading(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        if not all(isinstance(part, str) for part in value):
            raise ValueError("heading_path must be a string ('A > B') or a list of strings")
        return list(value)
    raise ValueError(f"heading_path must be a string ('A > B') or a list of strings, got {value!r}")


class _Location(BaseModel):
    """A place in the notes: a file (``rel_path``) and optionally a heading path."""

    rel_path: str
    heading_path: str | list[str] | None = None

    @field_validator("rel_path", mode="before")
    @classmethod
    def _rel_path(cls, value: Any) -> Any:
        return _non_blank(value, "rel_path")

    @field_validator("heading_path", mode="before")
    @classmethod
    def _heading_path(cls, value: Any) -> Any:
        return _heading(value)


class Anchor(_Location):
    """A gold support: ``rel_path`` + ``heading_path`` (a prefix), optional snippets, recency flag.

    Without ``heading_path`` the anchor is the whole file. ``newer: true`` marks
    the newer side of a recency/conflict question. ``evidence`` (written by
    ``ragmeter synth``: the verdict and the trial counts that prove the support
    necessary) is kept as given and never used for matching.
    """

    model_config = ConfigDict(extra="forbid")

    snippets: list[str] = Field(default_factory=list)
    newer: bool = False
    evidence: dict[str, Any] | None = None

    @field_validator("snippets", mode="before")
    @classmethod
    def _snippets(cls, value: Any) -> Any:
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            for i, snippet in enumerate(value):
                if not isinstance(snippet, str) or not snippet.strip():
                    raise ValueError(f"snippets[{i}] must be a non-empty string")
        return value


class Reference(_Location):
    """A reference the answer cites: a file and optionally a heading path."""

    model_config = ConfigDict(extra="allow")


class TokenCounts(BaseModel):
    """Tokens the system used for one question."""

    model_config = ConfigDict(extra="allow")

    prompt: int | None = Field(default=None, ge=0)
    completion: int | None = Field(default=None, ge=0)


class ModelPrice(NumbersModel):
    """One row of the ``pricing`` table: price per 1,000 prompt and completion tokens."""

    model_config = ConfigDict(extra="forbid")

    prompt_per_1k: float = Field(ge=0)
    completion_per_1k: float = Field(ge=0)

    def cost(self, prompt: int, completion: int) -> float:
        """Estimated cost of one call.

        >>> ModelPrice(prompt_per_1k=0.5, completion_per_1k=1.5).cost(2000, 1000)
        2.5
        """
        return prompt / 1000.0 * self.prompt_per_1k + completion / 1000.0 * self.completion_per_1k


def check_seconds(value: float | None, what: str) -> float | None:
    """Reject negative, NaN and infinite durations (``None`` passes)."""
    if value is not None and (not math.isfinite(value) or value < 0):
        raise ValueError(f"{what} must be a finite number of seconds >= 0, got {value!r}")
    return value


class ZeroChunkDocs(BaseModel):
    """``docs_with_zero_chunks`` in its object form: how many, and which."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(ge=0)
    rel_paths: list[str] = Field(default_factory=list)


class TokensPerChunk(BaseModel):
    """Distribution of tokens per embedded chunk."""

    model_config = ConfigDict(extra="forbid")

    min: float | None = Field(default=None, ge=0)
    max: float | None = Field(default=None, ge=0)
    mean: float | None = Field(default=None, ge=0)
    p95: float | None = Field(default=None, ge=0)


class IndexStats(BaseModel):
    """What an indexing run reports (``--index-stats PATH``); every field is optional.

    Written by the reference pipeline; the field names are the contract.
    """

    model_config = ConfigDict(extra="allow")

    docs_processed: int | None = Field(default=None, ge=0, description="documents the indexer read")
    docs_with_zero_chunks: ZeroChunkDocs | int | None = Field(
        default=None, description="documents that produced no chunk: {count, rel_paths} or a count"
    )
    chunks_attempted: int | None = Field(default=None, ge=0, description="chunks produced by the chunker")
    chunks_embedded: int | None = Field(default=None, ge=0, description="chunks embedded and indexed")
    chunks_skipped: int | None = Field(default=None, ge=0, description="chunks not indexed")
    skip_reasons: dict[str, int] | None = Field(
        default=None, description="reason -> number of skipped chunks"
    )
    tokens_per_chunk: TokensPerChunk | None = None
    chunker_version: str | None = None
    embedding_model: str | None = None
    index_version: str | None = None
    created_at: str | None = Field(default=None, description="when the index was built (ISO 8601)")

    @field_validator("docs_with_zero_chunks", mode="before")
    @classmethod
    def _zero(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("docs_with_zero_chunks must be a count or {count, rel_paths}")
        if isinstance(value, int) and value < 0:
            raise ValueError(f"docs_with_zero_chunks must be >= 0, got {value}")
        return value

    @field_validator("skip_reasons")
    @classmethod
    def _reasons(cls, value: dict[str, int] | None) -> dict[str, int] | None:
        for reason, count in (value or {}).items():
            if count < 0:
                raise ValueError(f"skip_reasons[{reason!r}] must be >= 0, got {count}")
        return value

    def zero_chunk_count(self) -> int | None:
        """How many documents produced no chunk (``None`` when not reported)."""
        if isinstance(self.docs_with_zero_chunks, ZeroChunkDocs):
            return self.docs_with_zero_chunks.count
        return self.docs_with_zero_chunks

    def zero_chunk_paths(self) -> list[str]:
        """The documents that produced no chunk, when listed."""
        if isinstance(self.docs_with_zero_chunks, ZeroChunkDocs):
            return list(self.docs_with_zero_chunks.rel_paths)
        return []
