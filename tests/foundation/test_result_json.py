"""The quick start's JSON (no pydantic) is the result model's JSON, key for key and value for value."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.result_json import eval_json_dict
from ragmeter.results import EvalResult

numbers = st.one_of(
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-5, 5),
    st.floats(0, 1).map(np.float64),
)
names = st.sampled_from(["mrr", "map", "ndcg@10", "recall@100"])


@st.composite
def fields(draw: st.DrawFn) -> dict[str, Any]:
    metrics = draw(st.lists(names, unique=True, max_size=3))
    queries = draw(st.lists(st.text(max_size=4), unique=True, max_size=4))
    out: dict[str, Any] = {
        "aggregate": {m: draw(numbers) for m in metrics},
        "per_query": {q: {m: draw(numbers) for m in metrics} for q in queries},
        "n_queries": len(queries),
        "n_scored": {m: draw(st.integers(0, 4)) for m in metrics},
        "n_skipped": {m: draw(st.integers(0, 4)) for m in metrics},
        "warnings": draw(st.lists(st.text(max_size=5), max_size=2)),
        "provenance": {"k": draw(st.one_of(st.none(), st.integers(1, 9))), "t": (1, "a"), "x": draw(numbers)},
    }
    if draw(st.booleans()):
        out["n_missing_output"] = draw(st.integers(0, 3))
    if draw(st.integers(0, 9)) == 0:
        out["operational"] = {"tokens": 3}
    return out


@given(fields())
def test_the_plain_json_is_the_models_json(data: dict[str, Any]) -> None:
    plain = eval_json_dict(data)
    if plain is None:  # a value pydantic converts its own way, or another field: the model is used
        values = [*data["aggregate"].values(), *(v for q in data["per_query"].values() for v in q.values())]
        odd = [v for v in values if v is not None and (type(v) not in (int, float) or not math.isfinite(v))]
        assert odd or "operational" in data or data["provenance"]["x"] is not None
        return
    model = EvalResult(**data).to_json_dict()
    assert json.dumps(plain) == json.dumps(model)
