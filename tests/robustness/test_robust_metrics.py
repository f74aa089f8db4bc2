"""``ragmeter metrics``: it takes no argument; anything else is one usage line."""

from __future__ import annotations

import json
from typing import Any

import pytest


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["metrics", "--jsn"], "No such option: --jsn"),
        (["metrics", "ndcg"], "(ndcg)"),
        (["metrics", "--json", "x"], "(x)"),
        (["metrics", "--json=yes"], "--json"),
        (["metrcs"], "No such command 'metrcs'"),
    ],
)
def test_bad_metrics_arguments_are_one_line(refused: Any, argv: list[str], fragment: str) -> None:
    refused(argv, fragment)


def test_every_metric_has_a_value_range_for_the_gate(accepted: Any) -> None:
    from ragmeter.metrics.registry import METRICS

    listed = {row["name"] for row in json.loads(accepted(["metrics", "--json"]))}
    assert listed == {m.family for m in METRICS}
    assert all(m.upper is None or m.upper > 0 for m in METRICS)
    assert {m.family for m in METRICS if m.upper != 1.0} == {
        "groundedness", "correctness", "latency_p50", "latency_p95", "tokens_prompt", "tokens_completion", "cost",
        "dcg", "dcg_exp", "hits", "num_ret", "num_rel", "num_rel_ret",
    }  # fmt: skip
