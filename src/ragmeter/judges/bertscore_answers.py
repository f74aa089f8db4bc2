"""BERTScore coverage of an evaluation's answers: one verdict per sample, made before scoring.

:func:`ragmeter.evaluate` calls :func:`score_coverage` when ``bertscore_coverage`` or
``bertscore_pass`` is asked for. For each answerable sample with an answer and an expected
answer (``metadata.expected_answer``), the coverage is the QA document's rule
(:func:`~ragmeter.judges.bertscore.coverage`: min over the expected answer's sentences of the max
over the answer's sentences); with several acceptable expected answers, the best-covered one
counts. ``bertscore_pass`` is 1 when the coverage reaches the threshold calibrated for the
model (``judge.bertscore.thresholds``, see ``ragmeter calibrate bertscore``); without one it is
unscored, never assumed. The settings are the ``judge.bertscore`` block that ``calibrate`` reads.

The model (torch, bert-score) loads once per process and only when a sample is scored.

>>> values = score_coverage([], [], config=BertScoreConfig()).values
>>> sorted(values)
['bertscore_coverage', 'bertscore_pass']
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.judges.bertscore import CoverageResult, MatrixFn, coverage, scorer_for, split_sentences
from ragmeter.judges.config import BertScoreConfig
from ragmeter.metrics.inputs import JudgedValue
from ragmeter.metrics.rag import NO_OUTPUT, UNANSWERABLE
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.samples import Sample

COVERAGE = "bertscore_coverage"
PASS = "bertscore_pass"
CALL_FAILED = "no answer: the call failed"
NO_ANSWER = "no answer: the output's 'answer' is missing or blank"
NO_EXPECTED = "no expected answer (metadata.expected_answer)"


def no_threshold(config: BertScoreConfig) -> str:
    """Why ``bertscore_pass`` is unscored without a calibrated threshold."""
    return (
        f"no threshold for model {config.model!r} in judge.bertscore.thresholds "
        "(pick one with 'ragmeter calibrate bertscore')"
    )


@dataclass
class CoverageJudgements:
    """The coverage verdicts of an evaluation, aligned with its samples."""

    values: dict[str, list[JudgedValue]]
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Sample id → ``{"bertscore": …}`` for its ``per_query.jsonl`` line."""
    provenance: dict[str, Any] = field(default_factory=dict)


def _why_not(sample: Sample, output: SystemOutput | None) -> str | None:
    if not sample.answerable:
        return UNANSWERABLE
    if output is None:
        return NO_OUTPUT
    if output.failed():
        return CALL_FAILED
    if output.answer is None or not output.answer.strip():
        return NO_ANSWER
    if not sample.metadata.expected_answers():
        return NO_EXPECTED
    return None


def _best(
    answer: str, expected: Sequence[str], config: BertScoreConfig, matrix_fn: MatrixFn | None
) -> tuple[int, CoverageResult]:
    results = [coverage(answer, [reference], config=config, matrix_fn=matrix_fn) for reference in expected]
    scored = [(i, r) for i, r in enumerate(results) if r.score is not None]
    if not scored:
        return 0, results[0]
    return max(scored, key=lambda pair: pair[1].score or 0.0)


GROUP = 32
"""Samples whose sentence pairs are scored in one batched model call (progress moves by groups)."""


@dataclass(frozen=True)
class _Item:
    sample: Sample
    answer: str
    expected: list[str]


def _lookup(scores: dict[tuple[str, str], float]) -> MatrixFn:
    def matrix(answer: Sequence[str], reference: Sequence[str]) -> list[list[float]]:
        return [[scores[(a, r)] for r in reference] for a in answer]

    return matrix


def _verdicts(
    item: _Item, config: BertScoreConfig, matrix_fn: MatrixFn | None
) -> tuple[JudgedValue, JudgedValue, dict[str, Any] | None]:
    chosen, result = _best(item.answer, item.expected, config, matrix_fn)
    if result.score is None:
        reason = result.unscored_reason or "not scored"
        return JudgedValue(None, reason), JudgedValue(None, reason), None
    if result.passed is None:
        passed = JudgedValue(None, no_threshold(config))
    else:
        passed = JudgedValue(1.0 if result.passed else 0.0)
    worst = result.worst_reference
    detail = {
        "coverage": result.score,
        "threshold": result.threshold,
        "passed": result.passed,
        "expected_answer": item.expected[chosen],
        "worst_expected_sentence": None if worst is None else result.reference_sentences[worst],
    }
    return JudgedValue(result.score), passed, detail


def score_coverage(
    samples: Sequence[Sample],
    outputs: Sequence[SystemOutput | None],
    *,
    config: BertScoreConfig,
    progress: Callable[[str, int, int], None] | None = None,
    matrix_fn: MatrixFn | None = None,
) -> CoverageJudgements:
    """Coverage (and pass at the configured threshold) per sample; a reason where there is none.

    ``progress("bertscore", done, total)`` is called as samples are scored; ``matrix_fn``
    replaces the model (tests of the arithmetic).
    """
    started = time.perf_counter()
    values: dict[str, list[JudgedValue]] = {COVERAGE: [], PASS: []}
    details: dict[str, dict[str, Any]] = {}
    items: dict[int, _Item] = {}
    for q, (sample, output) in enumerate(zip(samples, outputs, strict=True)):
        problem = _why_not(sample, output)
        answer = output.answer if output is not None else None
        if problem is not None or answer is None:
            values[COVERAGE].append(JudgedValue(None, problem or NO_ANSWER))
            values[PASS].append(JudgedValue(None, problem or NO_ANSWER))
        else:
            items[q] = _Item(sample, answer, sample.metadata.expected_answers())
            values[COVERAGE].append(JudgedValue(None))
            values[PASS].append(JudgedValue(None))
    todo = list(items.items())
    if progress is not None and todo:
        progress("bertscore", 0, len(todo))
    for start in range(0, len(todo), GROUP):
        group = todo[start : start + GROUP]
        fn = matrix_fn
        if fn is None:  # one batched model call for every sentence pair of the group
            pairs = sorted(
                {
                    (a, r)
                    for _, item in group
                    for ref in item.expected
                    for a in split_sentences(item.answer)
                    for r in split_sentences(ref)
                }
            )
            fn = _lookup(dict(zip(pairs, scorer_for(config).pair_scores(pairs), strict=True)))
        for q, item in group:
            values[COVERAGE][q], values[PASS][q], detail = _verdicts(item, config, fn)
            if detail is not None:
                details[item.sample.id] = {"bertscore": detail}
        if progress is not None:
            progress("bertscore", start + len(group), len(todo))
    provenance = {
        "model": config.model,
        "num_layers": config.num_layers,
        "measure": config.measure,
        "threshold": config.threshold(),
        "scored": sum(v.value is not None for v in values[COVERAGE]),
        "seconds": round(time.perf_counter() - started, 6),
    }
    return CoverageJudgements(values, details, provenance)
