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
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from ragmeter.io.atomic import atomic_files
from ragmeter.result_json import SCHEMA_VERSION, json_text, requested_names

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["SCHEMA_VERSION", "EvalResult", "TableKind", "json_text"]

TableKind = Literal["per_query", "aggregate"]
"""Which table :meth:`EvalResult.to_pandas` / :meth:`EvalResult.to_polars` return."""


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

    def requested_names(self) -> dict[str, str]:
        """Each metric's canonical name → the name the user typed for it (the same when not renamed).

        >>> r = EvalResult(aggregate={"ndcg@10": 1.0}, per_query={}, n_queries=0, n_scored={}, n_skipped={},
        ...                provenance={"metrics": {"ndcg@10": {"requested": "nDCG@10"}}})
        >>> r.requested_names()
        {'ndcg@10': 'nDCG@10'}
        """
        return requested_names(self.aggregate, self.provenance)

    def to_arrow(self, which: TableKind = "per_query") -> pa.Table:
        """The result as an Arrow table (what :meth:`to_pandas` and :meth:`to_polars` convert).

        ``"per_query"``: a ``query_id`` column and one column per metric, a null where the metric
        left the query unscored. ``"aggregate"``: one row per metric with its ``value`` (null when
        undefined), ``n_scored`` and ``n_skipped``, and ``requested``: the name the user typed for it
        (``nDCG@10`` for the canonical ``ndcg@10``).

        >>> r = EvalResult(aggregate={"mrr": 0.5}, per_query={"q": {"mrr": 0.5}, "r": {"mrr": None}},
        ...                n_queries=2, n_scored={"mrr": 1}, n_skipped={"mrr": 1})
        >>> r.to_arrow().to_pylist()
        [{'query_id': 'q', 'mrr': 0.5}, {'query_id': 'r', 'mrr': None}]
        >>> r.to_arrow("aggregate").to_pylist()
        [{'metric': 'mrr', 'value': 0.5, 'n_scored': 1, 'n_skipped': 1, 'requested': 'mrr'}]
        """
        import pyarrow as pa

        if which == "per_query":
            columns: dict[str, pa.Array] = {"query_id": pa.array(list(self.per_query), type=pa.string())}
            for metric in self.aggregate:
                values = [row.get(metric) for row in self.per_query.values()]
                columns[metric] = pa.array(values, type=pa.float64())
            return pa.table(columns)
        if which == "aggregate":
            names, typed = list(self.aggregate), self.requested_names()
            return pa.table(
                {
                    "metric": pa.array(names, type=pa.string()),
                    "value": pa.array([self.aggregate[m] for m in names], type=pa.float64()),
                    "n_scored": pa.array([self.n_scored.get(m, 0) for m in names], type=pa.int64()),
                    "n_skipped": pa.array([self.n_skipped.get(m, 0) for m in names], type=pa.int64()),
                    "requested": pa.array([typed[m] for m in names], type=pa.string()),
                }
            )
        raise ValueError(f"which must be 'per_query' or 'aggregate', got {which!r}")

    def to_pandas(self, which: TableKind = "per_query") -> Any:
        """The result as a pandas DataFrame (see :meth:`to_arrow` for the columns).

        Nullable dtypes keep "unscored" apart from a number: an unscored value is ``<NA>``, never
        ``NaN`` or 0. Needs pandas (``pip install 'ragmeter[pandas]'``).
        """
        from ragmeter.extras import import_optional

        pd = import_optional("pandas", needed_for="EvalResult.to_pandas()")
        import pyarrow as pa

        dtypes = {pa.float64(): pd.Float64Dtype(), pa.int64(): pd.Int64Dtype(), pa.string(): pd.StringDtype()}
        return self.to_arrow(which).to_pandas(types_mapper=dtypes.get)

    def to_polars(self, which: TableKind = "per_query") -> Any:
        """The result as a polars DataFrame (see :meth:`to_arrow`; unscored is null).

        Needs polars (``pip install 'ragmeter[polars]'``).
        """
        from ragmeter.extras import import_optional

        pl = import_optional("polars", needed_for="EvalResult.to_polars()")
        return pl.from_arrow(self.to_arrow(which))

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
