"""The JSON text of an evaluation result, without pydantic (for the CLI's quick start).

:class:`ragmeter.results.EvalResult` is a pydantic model; importing pydantic and building its
models costs more than a small TREC evaluation. :func:`eval_json_dict` gives what
``EvalResult(**fields).to_json_dict()`` gives for the fields of a plain result, or ``None`` when a
value would need pydantic's conversion; a test compares the two on random runs.

>>> eval_json_dict({"aggregate": {"mrr": 1}, "per_query": {"q": {"mrr": 1}}, "n_queries": 1,
...                 "n_scored": {"mrr": 1}, "n_skipped": {"mrr": 0}})["aggregate"]
{'mrr': 1.0}
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = "1"
"""The version of the result's JSON layout."""

_PLAIN_FIELDS = (
    "aggregate",
    "per_query",
    "n_queries",
    "n_scored",
    "n_skipped",
    "n_missing_output",
    "warnings",
    "provenance",
)


def _number(value: Any) -> float | None:
    """A ``float | None`` field as pydantic keeps it: ints become floats; anything else is refused."""
    if value is None:
        return None
    if type(value) is float and math.isfinite(value):
        return value
    if type(value) is int:
        return float(value)
    raise ValueError(value)


def eval_json_dict(fields: dict[str, Any]) -> dict[str, Any] | None:
    """``EvalResult(**fields).to_json_dict()`` for a result with only the plain fields, or ``None``.

    ``None`` when ``fields`` has another field, or a value pydantic would convert in a way this
    function does not (a non-finite number, a provenance value that is not plain JSON).
    """
    if not set(fields) <= set(_PLAIN_FIELDS):
        return None
    try:
        aggregate = {name: _number(v) for name, v in fields["aggregate"].items()}
        per_query = {
            q: {name: _number(v) for name, v in values.items()} for q, values in fields["per_query"].items()
        }
        provenance = json.loads(json.dumps(fields.get("provenance", {}), allow_nan=False))
    except (ValueError, TypeError):
        return None
    return {
        "schema_version": SCHEMA_VERSION,
        "aggregate": aggregate,
        "per_query": per_query,
        "n_queries": int(fields["n_queries"]),
        "n_scored": dict(fields["n_scored"]),
        "n_skipped": dict(fields["n_skipped"]),
        "n_missing_output": int(fields.get("n_missing_output", 0)),
        "warnings": list(fields.get("warnings", [])),
        "provenance": provenance,
        "breakdowns": {},
    }


def json_text(data: dict[str, Any], *, flat: tuple[str, ...] = ("per_query",)) -> str:
    """``data`` as JSON indented by 2, except that each entry of the ``flat`` keys is on one line.

    >>> print(json_text({"n": 1, "per_query": {"q1": {"mrr": 1.0, "map": 0.5}}}))
    {
      "n": 1,
      "per_query": {
        "q1": {"mrr": 1.0, "map": 0.5}
      }
    }
    """
    if not data:
        return "{}"
    parts = []
    for key, value in data.items():
        name = json.dumps(key)
        if key in flat and isinstance(value, dict) and value:
            rows = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            parts.append(f"  {name}: {{\n{rows}\n  }}")
        else:
            parts.append(f"  {name}: " + json.dumps(value, indent=2).replace("\n", "\n  "))
    return "{\n" + ",\n".join(parts) + "\n}"


def requested_names(aggregate: Mapping[str, Any], provenance: Mapping[str, Any]) -> dict[str, str]:
    """Each metric's canonical name → the name the user typed for it (the same when not renamed).

    >>> requested_names({"ndcg@10": 1.0, "mrr": 0.5}, {"metrics": {"ndcg@10": {"requested": "nDCG@10"}}})
    {'ndcg@10': 'nDCG@10', 'mrr': 'mrr'}
    """
    info = provenance.get("metrics")
    entries = {k: v for k, v in info.items() if isinstance(v, dict)} if isinstance(info, dict) else {}
    return {name: str(entries.get(name, {}).get("requested") or name) for name in aggregate}


@dataclass
class PlainResult:
    """A plain TREC result (:func:`eval_json_dict`'s data) as the terminal renderer reads an ``EvalResult``.

    >>> data = eval_json_dict({"aggregate": {"mrr": 1}, "per_query": {}, "n_queries": 1,
    ...                        "n_scored": {"mrr": 1}, "n_skipped": {"mrr": 0}})
    >>> PlainResult.of(data).requested_names()
    {'mrr': 'mrr'}
    """

    aggregate: dict[str, float | None]
    n_queries: int
    n_scored: dict[str, int]
    n_skipped: dict[str, int]
    n_missing_output: int = 0
    warnings: list[str] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    breakdowns: dict[str, dict[str, dict[str, dict[str, float | int | None]]]] = field(default_factory=dict)
    operational: dict[str, Any] = field(default_factory=dict)
    index_coverage: dict[str, Any] | None = None
    judge_reliability: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> PlainResult:
        """The fields of :func:`eval_json_dict`'s data (its ``per_query`` is not shown)."""
        return cls(
            **{k: data[k] for k in _PLAIN_FIELDS if k != "per_query"}, breakdowns=dict(data["breakdowns"])
        )

    def requested_names(self) -> dict[str, str]:
        """As :meth:`ragmeter.results.EvalResult.requested_names`."""
        return requested_names(self.aggregate, self.provenance)
