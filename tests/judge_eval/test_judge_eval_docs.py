"""docs/judges.md documents every judge metric, every judge option of ``ragmeter eval`` and the
exact reasons a question is not judged; the README points to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter.judges import answers as eval_judges
from ragmeter.metrics.registry import METRICS

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "judges.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("metric", [m for m in METRICS if m.needs == "judge"], ids=lambda m: m.family)
def test_judge_eval_metric_and_aliases_are_documented(metric) -> None:
    assert f"`{metric.family}`" in DOC
    for alias in metric.aliases:
        assert f"`{alias}`" in DOC, alias


@pytest.mark.parametrize(
    "option", ["--judge-config", "--judges", "--max-cost", "--no-judge", "--judge-log", "--no-reliability"]
)
def test_judge_eval_options_are_documented(option: str) -> None:
    assert option in DOC


@pytest.mark.parametrize(
    "reason",
    [
        eval_judges.CALL_FAILED,
        eval_judges.NO_ANSWER_FIELD,
        eval_judges.NO_QUESTION,
        eval_judges.DEFAULT_LOG_NAME,
    ],
)
def test_judge_eval_documented_reasons_are_the_real_ones(reason: str) -> None:
    assert reason in DOC


def test_judge_eval_readme_links_the_judge_docs_after_the_quick_start() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.index("## Quick start") < readme.index("judge:") < readme.index("docs/judges.md")
