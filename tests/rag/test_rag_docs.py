"""Every whole-RAG and operational metric is documented in docs/rag.md, and its examples run."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter.metrics.registry import METRICS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "rag.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("metric", [m for m in METRICS if m.needs == "sample"], ids=lambda m: m.family)
def test_metric_is_documented(metric: object) -> None:
    family = metric.family
    assert f"`{family}" in DOC, f"{family} is missing from docs/rag.md"


@pytest.mark.parametrize(
    "field", ["snippet_matching", "pricing", "index_stats", "--index-stats", "--no-snippet-matching"]
)
def test_options_are_documented(field: str) -> None:
    assert field in DOC


def test_documented_error_messages_are_the_real_ones() -> None:
    from ragmeter.metrics.rag import ABSTAINED_MISSING

    assert ABSTAINED_MISSING in DOC
