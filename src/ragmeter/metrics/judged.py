"""Answer-quality metrics made before scoring: LLM judges, the fuzzy match, BERTScore coverage.

The judges run before scoring (:mod:`ragmeter.judges.answers`); their verdicts
arrive in :attr:`~ragmeter.metrics.inputs.ScoringInput.judged` as one
:class:`~ragmeter.metrics.inputs.JudgedValue` per query. The kernels here only
read them: a verdict's value, or its reason for being unscored — never a 0 in
place of a missing verdict.

The abstention metrics fall back on the abstention judge (verdicts under
``abstained``) for outputs without an explicit ``abstained`` field:
:func:`with_judged_abstention` wraps the kernels of :mod:`ragmeter.metrics.rag`.

>>> from ragmeter.metrics.relevance import RelevanceTable
>>> table = RelevanceTable.from_lists(["a", "b"], [[], []], [[], []])
>>> verdicts = [JudgedValue(4.0), JudgedValue(None, "no_context: no context chunks were given")]
>>> scores = groundedness(ScoringInput.from_table(table, judged={"groundedness": verdicts}), None,
...                       MetricName("groundedness"))
>>> scores.values.tolist(), scores.scored.tolist(), scores.reasons
([4.0, 0.0], [True, False], ['', 'no_context: no context chunks were given'])
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from ragmeter.errors import MissingFieldError
from ragmeter.metrics.inputs import JudgedValue, SampleScores, ScoringInput
from ragmeter.metrics.names import MetricName
from ragmeter.metrics.rag import ABSTAINED_MISSING, ScoreBuilder, batch_of
from ragmeter.metrics.relevance import Int64Array

SampleKernel = Callable[[ScoringInput, Int64Array | None, MetricName], SampleScores]

ABSTAINED = "abstained"
"""The abstention judge's metric: 1 = the answer abstains, 0 = it answers."""

NOT_JUDGED = "not judged"


def _verdicts(inp: ScoringInput, metric: MetricName, name: str) -> Sequence[JudgedValue]:
    verdicts = (inp.judged or {}).get(name)
    if verdicts is None:
        raise MissingFieldError(
            f"metric {metric} needs an LLM judge: add a 'judge:' block to the config or pass a judge "
            "config (see docs/judges.md)"
        )
    if len(verdicts) != len(inp.query_ids):
        raise ValueError(f"{len(verdicts)} {name} verdicts for {len(inp.query_ids)} queries")
    return verdicts


def judged_scores(inp: ScoringInput, metric: MetricName, name: str) -> SampleScores:
    """The verdicts under ``name`` as scores: values where judged, the reason elsewhere."""
    verdicts = _verdicts(inp, metric, name)
    out = ScoreBuilder(len(verdicts))
    for q, verdict in enumerate(verdicts):
        if verdict.value is None:
            out.skip(q, verdict.reason or NOT_JUDGED)
        else:
            out.set(q, verdict.value)
    return out.done()


def groundedness(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """0-5: how well the top-k context supports (and the answer cites) the answer's claims."""
    return judged_scores(inp, metric, "groundedness")


def correctness(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """0-5: how correctly and completely the answer addresses the question."""
    return judged_scores(inp, metric, "correctness")


def factual_match(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1/0: fuzzy match and judge agree that the answer states the expected answer's facts."""
    return judged_scores(inp, metric, "factual_match")


def fuzzy_match(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1/0: an expected answer is (fuzzily) contained in the answer; no LLM involved."""
    return judged_scores(inp, metric, "fuzzy_match")


def bertscore_coverage(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """0-1: how well the answer's sentences cover the expected answer's (BERTScore, min over max)."""
    return judged_scores(inp, metric, "bertscore_coverage")


def bertscore_pass(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1/0: the BERTScore coverage reaches the threshold calibrated for the model."""
    return judged_scores(inp, metric, "bertscore_pass")


def with_judged_abstention(kernel: SampleKernel) -> SampleKernel:
    """An abstention kernel that uses the judge's verdict where the output has no ``abstained``.

    The system's own flag always wins. Where the judge could not decide, the
    query stays unscored with the judge's reason instead of
    :data:`~ragmeter.metrics.rag.ABSTAINED_MISSING`.
    """

    def judged_kernel(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
        verdicts = (inp.judged or {}).get(ABSTAINED)
        if verdicts is None:
            return kernel(inp, k, metric)
        batch = batch_of(inp, metric)
        outputs = [
            output.model_copy(update={"abstained": verdict.value == 1.0})
            if output is not None and output.abstained is None and verdict.value is not None
            else output
            for output, verdict in zip(batch.outputs, verdicts, strict=True)
        ]
        filled = dataclasses.replace(inp, records=dataclasses.replace(batch, outputs=outputs))
        scores = kernel(filled, k, metric)
        reasons = [
            verdict.reason if reason == ABSTAINED_MISSING and verdict.reason else reason
            for reason, verdict in zip(scores.reasons, verdicts, strict=True)
        ]
        return SampleScores(scores.values, scores.scored, reasons)

    judged_kernel.__name__ = kernel.__name__
    judged_kernel.__doc__ = kernel.__doc__
    return judged_kernel
