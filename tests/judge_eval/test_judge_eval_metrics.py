"""The judge metrics in the registry: one entry each, kind ``judge``, kernels that only read the
verdicts — values pass through, unscored stays unscored with its reason, order does not matter — and
the abstention fallback that never overrides the system's own flag."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragmeter.errors import MissingFieldError
from ragmeter.metrics.inputs import JudgedValue, ScoringInput
from ragmeter.metrics.judged import ABSTAINED
from ragmeter.metrics.rag import ABSTAINED_MISSING
from ragmeter.metrics.records import RagBatch
from ragmeter.metrics.registry import METRICS, PerSample, resolve_metric
from ragmeter.metrics.relevance import RelevanceTable
from ragmeter.metrics.scoring import score_metrics
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.samples import Sample

JUDGE_METRICS = [m for m in METRICS if m.needs == "judge"]


def _input(verdicts: dict[str, list[JudgedValue]], n: int) -> ScoringInput:
    table = RelevanceTable.from_lists(
        [f"q{i}" for i in range(n)], [[] for _ in range(n)], [[] for _ in range(n)]
    )
    return ScoringInput.from_table(table, judged=verdicts)


def test_judge_eval_registry_has_one_judge_entry_per_metric() -> None:
    assert [m.family for m in JUDGE_METRICS] == [
        "groundedness",
        "correctness",
        "factual_match",
        "fuzzy_match",
        "bertscore_coverage",
        "bertscore_pass",
    ]
    for metric in JUDGE_METRICS:
        assert isinstance(metric.kernel, PerSample) and metric.cutoff == "none"
        assert resolve_metric(metric.family).name == metric.family


verdict = st.one_of(
    st.integers(0, 5).map(lambda v: JudgedValue(float(v))),
    st.sampled_from(["no_context: x", "unparseable_reply: y", "not judged"]).map(
        lambda r: JudgedValue(None, r)
    ),
)


@pytest.mark.parametrize("metric", JUDGE_METRICS, ids=lambda m: m.family)
@given(values=st.lists(verdict, min_size=1, max_size=12), seed=st.integers(0, 1000))
def test_judge_eval_kernels_pass_verdicts_through_in_any_order(metric, values, seed) -> None:
    n = len(values)
    scored = score_metrics([resolve_metric(metric.family)], _input({metric.family: values}, n), default_k=5)[
        0
    ]
    assert scored.values[scored.scored].tolist() == [v.value for v in values if v.value is not None]
    assert [scored.reason_of(q) for q in range(n)] == [v.reason if v.value is None else "" for v in values]
    assert scored.n_skipped == sum(v.value is None for v in values)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    again = score_metrics(
        [resolve_metric(metric.family)], _input({metric.family: [values[i] for i in order]}, n), default_k=5
    )[0]
    assert again.mean == pytest.approx(scored.mean) if scored.mean is not None else again.mean is None


@pytest.mark.parametrize("metric", JUDGE_METRICS, ids=lambda m: m.family)
def test_judge_eval_kernel_without_verdicts_says_it_needs_a_judge(metric) -> None:
    with pytest.raises(MissingFieldError, match="needs an LLM judge"):
        score_metrics([resolve_metric(metric.family)], _input({}, 1), default_k=5)


def test_judge_eval_abstention_fallback_never_overrides_the_flag() -> None:
    samples = [Sample.model_validate({"id": f"q{i}", "answerable": False}) for i in range(4)]
    outputs = [
        SystemOutput.from_raw({"answer": "x", "abstained": False}),  # own flag: answered
        SystemOutput.from_raw({"answer": "I can't tell."}),  # judged: abstained
        SystemOutput.from_raw({"answer": "y"}),  # the judge could not decide
        None,
    ]
    verdicts = [
        JudgedValue(1.0),  # ignored: the output has its own flag
        JudgedValue(1.0),
        JudgedValue(None, "call_failed: the judge endpoint failed"),
        JudgedValue(None, ""),
    ]
    table = RelevanceTable.from_lists([s.id for s in samples], [[]] * 4, [[]] * 4)
    batch = RagBatch(samples, outputs, [None] * 4)
    with_judge = ScoringInput.from_table(table, records=batch, judged={ABSTAINED: verdicts})
    [accuracy] = score_metrics([resolve_metric("abstention_accuracy")], with_judge, default_k=5)
    assert accuracy.values[accuracy.scored].tolist() == [0.0, 1.0]
    assert accuracy.scored.tolist() == [True, True, False, False]
    assert accuracy.reason_of(2) == "call_failed: the judge endpoint failed"
    assert accuracy.reason_of(3) == "no recorded output"
    assert outputs[1].abstained is None, "the caller's outputs are not changed"
    without = ScoringInput.from_table(table, records=batch)
    [plain] = score_metrics([resolve_metric("abstention_accuracy")], without, default_k=5)
    assert plain.scored.tolist() == [True, False, False, False]
    assert plain.reason_of(1) == ABSTAINED_MISSING
    assert np.array_equal(plain.values[:1], accuracy.values[:1])
