"""The result of an evaluation: aggregates, per-query values, counts, warnings, provenance.

Unscored is not zero: a per-query value is a number or ``None``, and every
aggregate says how many queries it averaged (``n_scored``) and how many it
could not score (``n_skipped``).

>>> r = EvalResult(aggregate={"mrr": 0.5}, per_query={"q": {"mrr": 0.5}}, n_queries=1,
...                n_scored={"mrr": 1}, n_skipped={"mrr": 0})
>>> r.to_json_dict()["aggregate"]
{'mrr': 0.5}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

SCHEMA_VERSION = "1"


class EvalResult(BaseModel):
    """What :func:`ragmeter.evaluate` returns and ``ragmeter eval --json`` prints."""

    schema_version: str = SCHEMA_VERSION
    aggregate: dict[str, float | None]
    per_query: dict[str, dict[str, float | None]]
    n_queries: int
    n_scored: dict[str, int]
    n_skipped: dict[str, int]
    n_missing_output: int = 0
    warnings: list[str] = Field(default_factory=list)
    provenance: dict[str, Any] = Field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, dict[str, float | int | None]]]] = Field(default_factory=dict)

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON object (plain dicts and lists)."""
        return self.model_dump(mode="json")

    def write(self, out_dir: str | Path) -> Path:
        """Write ``metrics.json`` and ``per_query.jsonl`` into ``out_dir``; return the folder."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "metrics.json").write_text(json.dumps(self.to_json_dict(), indent=2) + "\n", encoding="utf-8")
        with (out / "per_query.jsonl").open("w", encoding="utf-8") as handle:
            for qid, values in self.per_query.items():
                handle.write(json.dumps({"id": qid, "metrics": values}) + "\n")
        return out
