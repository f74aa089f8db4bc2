"""``dumps_indented`` writes the text ``json.dumps(data, indent=2)`` writes, for any JSON data."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.io.json_text import dumps_indented

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-05, 1.5e300, -0.0, 5e-324, 1e16, 123456789.125])
    | st.text()
)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_same_text_as_json_dumps_indent_2(data: object) -> None:
    assert dumps_indented(data) == json.dumps(data, indent=2)


def test_not_strict_json_goes_through_json_dumps() -> None:
    data = {"a": [math.nan, math.inf, -math.inf], "b": {}}
    assert dumps_indented(data) == json.dumps(data, indent=2)


def test_agentic_result_text_is_the_indented_dump() -> None:
    from ragmeter.agentic.aggregate import aggregate_scores
    from ragmeter.agentic.result import AgenticResult
    from ragmeter.agentic.scoring import TraceScore

    score = TraceScore(
        trace_id="t\u00e9",
        where="f:1",
        status="scored",
        n_iterations=2,
        series={"CG": [1.0, 2.5e-07]},
        at_n={"CG": 2.5e-07},
    )
    result = AgenticResult(traces=[score], aggregate=aggregate_scores([score]))
    assert result.to_json_text() == json.dumps(result.to_json_dict(), indent=2)
