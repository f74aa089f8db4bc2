"""The result of an agentic evaluation: per-trace series, averages, counts, warnings, provenance.

>>> from ragmeter.agentic.aggregate import aggregate_scores
>>> r = AgenticResult(traces=[], aggregate=aggregate_scores([]))
>>> sorted(r.to_json_dict())[:4]
['aggregate', 'averages_by_iteration', 'kind', 'provenance']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ragmeter.agentic.aggregate import Aggregates
from ragmeter.agentic.scoring import TraceScore
from ragmeter.io.atomic import write_text_atomic
from ragmeter.io.json_text import dumps_indented

SCHEMA_VERSION = "1"


class AgenticResult(BaseModel):
    """What :func:`ragmeter.agentic.evaluate_agentic` returns and ``ragmeter agentic --json`` prints."""

    schema_version: str = SCHEMA_VERSION
    kind: str = "agentic"
    aggregate: Aggregates
    traces: list[TraceScore]
    warnings: list[str] = Field(default_factory=list)
    provenance: dict[str, Any] = Field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        """Plain JSON data; ``averages_by_iteration`` is also repeated at the top level for reports."""
        data = self.model_dump(mode="json")
        data["averages_by_iteration"] = data["aggregate"]["averages_by_iteration"]
        return data

    def to_json_text(self) -> str:
        """The JSON text that :meth:`write` writes (without its final line end)."""
        return dumps_indented(self.to_json_dict())

    def write(self, path: str | Path, text: str | None = None) -> Path:
        """Write the JSON to ``path`` (a file, atomically, secrets redacted); returns it.

        ``text``: :meth:`to_json_text`, when the caller has it already (a million results take
        seconds to encode).
        """
        return write_text_atomic(path, (self.to_json_text() if text is None else text) + "\n")
