"""Answer quality: pinned LLM judges, fuzzy and BERTScore checks, reliability, a replayable cache.

The LLM judges run on any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama,
llama.cpp server).

The public API takes plain data and returns per-item outcomes (scored, or
unscored with a reason) plus provenance:

- :func:`run_judges` — groundedness, correctness, abstention, factual match (+ fuzzy match);
- :func:`label_relevance` — 0-4 gains for (task, result) pairs;
- :func:`estimate_cost` / :func:`estimate_relevance_cost` — what a run would cost;
- :func:`coverage` and :func:`calibrate_threshold` — BERTScore coverage (offline);
- :func:`load_judge_config` — validate a ``judge:`` block.

Nothing heavy is imported here: ``openai`` loads with the first client, torch
with the first BERTScore.

>>> from ragmeter.judges import run_judges, JudgeItem
>>> JudgeItem(id="q1", question="?", answer="42").id
'q1'
"""

from __future__ import annotations

from ragmeter.judges.bertscore import Calibration, CoverageResult, calibrate_threshold, coverage
from ragmeter.judges.cache import JudgeCache
from ragmeter.judges.config import BertScoreConfig, JudgeConfig, Price, ReliabilityConfig, load_judge_config
from ragmeter.judges.items import JudgeItem, RelevancePair
from ragmeter.judges.results import (
    UNSCORED_CODES,
    CostEstimate,
    JudgeCall,
    JudgeOutcome,
    JudgeRun,
    MetricSummary,
    ReliabilityStats,
    UsageTotals,
)
from ragmeter.judges.runner import estimate_cost, estimate_relevance_cost, label_relevance, run_judges
from ragmeter.judges.units import DEFAULT_JUDGES

__all__ = [
    "DEFAULT_JUDGES",
    "UNSCORED_CODES",
    "BertScoreConfig",
    "Calibration",
    "CostEstimate",
    "CoverageResult",
    "JudgeCache",
    "JudgeCall",
    "JudgeConfig",
    "JudgeItem",
    "JudgeOutcome",
    "JudgeRun",
    "MetricSummary",
    "Price",
    "RelevancePair",
    "ReliabilityConfig",
    "ReliabilityStats",
    "UsageTotals",
    "calibrate_threshold",
    "coverage",
    "estimate_cost",
    "estimate_relevance_cost",
    "label_relevance",
    "load_judge_config",
    "run_judges",
]
