"""The result of an evaluation: aggregates, per-query values, counts, warnings, provenance.

Unscored is not zero: a per-query value is a number or ``None``, and every
aggregate says how many queries it averaged (``n_scored``) and how many it
could not score (``n_skipped``).

Whole-RAG runs add ``breakdowns`` (dimension → value → metric → ``{mean, n}``),
``operational`` (run-level totals: tokens, cost, failures, suite time) and
``index_coverage`` (from an index-statistics file). Judged runs add
``judge_reliability`` (judge metric → ``{disagreement_rate, kappa, spot_check_n, …}``)
when the reliability spot-check ran, and the judge provenance and usage under
``provenance["judge"]``. Per-query details (the sample's dimension values, why
a metric left a query unscored, the judges' inputs and raw replies) go to the
``per_query.jsonl`` lines only.

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

from ragmeter.io.atomic import atomic_files
from ragmeter.result_json import SCHEMA_VERSION, json_text

__all__ = ["SCHEMA_VERSION", "EvalResult", "json_text"]


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
    operational: dict[str, Any] = Field(default_factory=dict)
    index_coverage: dict[str, Any] | None = None
    judge_reliability: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Judge metric → the reliability spot-check's numbers (empty when it did not run)."""
    query_details: dict[str, dict[str, Any]] = Field(default_factory=dict, exclude=True)
    """Per query: extra keys for its ``per_query.jsonl`` line (dimension values, ``unscored`` reasons)."""

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON object (plain dicts and lists); empty optional sections are left out.

        The optional sections: ``operational``, ``index_coverage``, ``judge_reliability``.
        """
        data = self.model_dump(mode="json")
        for key in ("operational", "index_coverage", "judge_reliability"):
            if not data.get(key):
                data.pop(key, None)
        return data

    def to_json_text(self) -> str:
        """:meth:`to_json_dict` as indented JSON text, one line per query in ``per_query``.

        One line a query keeps a large result readable and fast to write (the compact
        encoder is C; indented output is pure Python).
        """
        return json_text(self.to_json_dict())

    def write(self, out_dir: str | Path) -> Path:
        """Write ``metrics.json`` and ``per_query.jsonl`` into ``out_dir``; return the folder.

        Both files are replaced together or not at all (:func:`~ragmeter.io.atomic.atomic_files`),
        secrets redacted.
        """
        out = Path(out_dir)
        with atomic_files(out / "metrics.json", out / "per_query.jsonl") as (metrics, per_query):
            details = self.query_details
            per_query.write(
                "".join(
                    json.dumps({"id": qid, "metrics": values, **details.get(qid, {})}) + "\n"
                    for qid, values in self.per_query.items()
                )
            )
            metrics.write(self.to_json_text() + "\n")
        return out
