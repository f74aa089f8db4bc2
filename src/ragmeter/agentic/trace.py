"""The agentic trace format: one conversation per JSONL line.

A trace holds turns; a turn holds iterations (one model step each); an iteration
holds the search invocations it issued, in issue order; a search holds its
results in rank order. ``results`` missing or ``null`` means the trace did not
capture them ("results not captured"); ``[]`` means the search returned nothing.
The JSON Schema shipped as ``trace.schema.json`` is generated from these models
(:func:`trace_json_schema`).

>>> t = Trace.model_validate_json('{"trace_id": 7, "turns": [{"iterations": [{"searches": '
...     '[{"query": "q", "results": [{"url": "https://a.org", "gain": 3}]}]}]}]}')
>>> t.trace_id, t.turns[0].iterations[0].searches[0].results[0].gain
('7', 3.0)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from ragmeter.dedup.domain_id import normalise_domain_id
from ragmeter.near_miss import near_miss_key

SCHEMA_PATH = Path(__file__).with_name("trace.schema.json")
"""Where the JSON Schema of :class:`Trace` is shipped inside the package."""

Gain = Annotated[float, Field(ge=0, le=4, allow_inf_nan=False)]
"""A relevance gain on the 0-4 scale (``>= 2`` is a good result)."""


def _int_as_text(value: Any) -> Any:
    """Ids may be JSON integers; they are kept as their decimal text (lossless)."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


IdText = Annotated[
    str,
    BeforeValidator(_int_as_text),
    WithJsonSchema({"type": ["string", "integer"]}),
]
"""An id: a string, or an integer read as its decimal text."""

DomainIdText = Annotated[IdText, AfterValidator(normalise_domain_id)]
"""A domain-specific id, in its one spelling (DOIs lower-cased, arXiv ids without a version)."""


class SearchResult(BaseModel):
    """One result of a search, in rank order. Other fields (score, date, …) are ignored."""

    model_config = ConfigDict(extra="ignore", strict=True)

    domain_id: DomainIdText | None = Field(
        default=None,
        description="domain-specific id (DOI, arXiv id, product SKU, …); wins over 'id' for deduplication",
    )
    id: IdText | None = Field(default=None, description="generic id (e.g. the search engine's document id)")
    url: str | None = None
    title: str | None = None
    snippet: str | None = None
    gain: Gain | None = Field(default=None, description="relevance label 0-4, if the trace carries one")

    @model_validator(mode="before")
    @classmethod
    def _no_misspelt_fields(cls, value: Any) -> Any:
        """Other fields are ignored, but a misspelt known one (``gian``) is an error, not a lost gain."""
        miss = near_miss_key(value, _RESULT_FIELDS)
        if miss is not None:
            raise ValueError(f"unknown field {miss[0]!r}; did you mean {miss[1]!r}?")
        return value


_RESULT_FIELDS = dict.fromkeys(SearchResult.model_fields)
"""The result fields, read once (``model_fields`` is a class property that costs a call per result)."""


class Search(BaseModel):
    """One search invocation: its query, tool name and results (``null`` = not captured)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str | None = None
    tool: str | None = None
    results: list[SearchResult] | None = Field(
        default=None,
        description="results in rank order; null or missing = results not captured, [] = nothing returned",
    )
    results_not_captured: str | None = Field(
        default=None, description="why the results are missing, when an importer knows (with results null)"
    )
    span_id: str | None = Field(default=None, description="id of the span or run this search was read from")


class Iteration(BaseModel):
    """One step of the agent: the searches it issued, in issue order (none = not a search iteration)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    searches: list[Search] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class Turn(BaseModel):
    """One user turn of the conversation; only the last turn is scored."""

    model_config = ConfigDict(extra="forbid", strict=True)

    user: str | None = Field(default=None, description="the user's message for this turn")
    iterations: list[Iteration] = Field(default_factory=list)


class ResultRef(BaseModel):
    """A known good result, named by the same keys deduplication uses."""

    model_config = ConfigDict(extra="forbid", strict=True)

    domain_id: DomainIdText | None = None
    id: IdText | None = None
    url: str | None = None

    @model_validator(mode="after")
    def _names_something(self) -> ResultRef:
        if not any(v is not None and v.strip() for v in (self.domain_id, self.id, self.url)):
            raise ValueError("a good result needs a domain_id, id or url")
        return self


class Trace(BaseModel):
    """One conversation of an agentic search system."""

    model_config = ConfigDict(extra="forbid", strict=True)

    trace_id: IdText
    task: str | None = Field(
        default=None, description="the user's task, used by relevance labellers (default: last turn's user)"
    )
    turns: list[Turn] = Field(min_length=1)
    good_results: list[ResultRef] | None = Field(
        default=None,
        description="the known set of good results, for IterationsForAllGoodResults (default: the good "
        "results the trace retrieves)",
    )
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("trace_id", mode="after")
    @classmethod
    def _trace_id_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("trace_id must not be empty")
        return value

    @property
    def last_turn(self) -> Turn:
        """The turn that is scored."""
        return self.turns[-1]

    def task_text(self) -> str | None:
        """The task given to labellers: ``task``, else the last turn's user message."""
        return self.task if self.task is not None else self.last_turn.user


def trace_json_schema() -> dict[str, Any]:
    """The JSON Schema of one trace line, as shipped in ``trace.schema.json``.

    >>> trace_json_schema()["title"]
    'Trace'
    """
    schema = Trace.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://ragmeter.dev/schemas/agentic-trace.schema.json",
        **schema,
    }


def write_json_schema(path: Path = SCHEMA_PATH) -> Path:
    """Regenerate the shipped schema file from the models; returns the path."""
    from ragmeter.io.atomic import write_text_atomic

    return write_text_atomic(path, json.dumps(trace_json_schema(), indent=2, sort_keys=True) + "\n")
