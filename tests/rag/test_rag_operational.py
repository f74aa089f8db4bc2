"""Operational metrics: errors, timeouts, empty answers, latency percentiles (vs numpy), tokens, cost."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ragmeter import evaluate
from ragmeter.config import RagmeterConfig
from ragmeter.errors import ConfigError, InputError, MetricNameError, MissingFieldError
from ragmeter.metrics.names import parse_metric_name
from ragmeter.metrics.registry import resolve_metric

LATENCIES = [0.31, 0.42, 0.45, 0.52, 0.61, 0.77, 0.93, 1.2, 2.4, 9.8, 0.05]


def run(outputs: dict[str, Any], metrics: list[str], **kwargs: Any) -> Any:
    samples = [{"id": sid, "gold_supports": [{"rel_path": "a.md"}]} for sid in outputs]
    return evaluate(samples, {k: v for k, v in outputs.items() if v is not None}, metrics=metrics, **kwargs)


def test_error_timeout_and_empty_rates_are_disjoint_where_documented() -> None:
    outputs = {
        "ok": {"answer": "fine", "abstained": False},
        "err": {"error": "HTTP 500", "answer": None},
        "timeout": {"error": "timed out", "timed_out": True},
        "timeout-no-msg": {"timed_out": True},
        "empty": {"answer": "   "},
        "no-answer": {"retrieved": []},
        "abstained": {"answer": "", "abstained": True},
        "blank-error": {"answer": "x", "error": "  "},
        "missing": None,
    }
    metrics = ["error_rate", "timeout_rate", "empty_response_rate"]
    result = run(outputs, metrics)
    per = {q: tuple(v[m] for m in metrics) for q, v in result.per_query.items()}
    assert per == {
        "ok": (0.0, 0.0, 0.0),
        "err": (1.0, 0.0, 0.0),
        "timeout": (1.0, 1.0, 0.0),
        "timeout-no-msg": (1.0, 1.0, 0.0),
        "empty": (0.0, 0.0, 1.0),
        "no-answer": (0.0, 0.0, 1.0),
        "abstained": (0.0, 0.0, 0.0),  # an abstention is a response
        "blank-error": (0.0, 0.0, 0.0),  # a blank error string is no error
        "missing": (1.0, 0.0, 0.0),  # no recorded output is a failure of the system
    }
    assert result.aggregate == {"error_rate": 4 / 9, "timeout_rate": 2 / 9, "empty_response_rate": 2 / 9}
    assert result.operational["n_errors"] == 4
    assert result.operational["n_timeouts"] == 2
    assert result.operational["n_empty_answers"] == 2


def test_empty_response_rate_needs_answers_in_the_run() -> None:
    with pytest.raises(MissingFieldError, match="needs 'answer' in the outputs; none of them has it"):
        run({"a": {"retrieved": []}}, ["empty_response_rate"])


def test_rates_where_lower_is_better_say_so() -> None:
    for name in [
        "error_rate",
        "timeout_rate",
        "empty_response_rate",
        "scope_miss_rate",
        "hallucination_rate_unanswerable",
        "false_abstention_rate",
        "latency_p50",
        "latency_p95.retrieval",
        "tokens_prompt",
        "tokens_completion",
        "cost",
    ]:
        assert resolve_metric(name).definition.higher_is_better is False, name
    for name in ["recall_all@5", "attribution_hit_rate", "recency_rule_pass", "abstention_accuracy"]:
        assert resolve_metric(name).definition.higher_is_better is True, name


@pytest.mark.parametrize("q", [50, 95])
def test_latency_percentiles_agree_with_numpy(q: int) -> None:
    outputs = {f"s{i}": {"latency": v} for i, v in enumerate(LATENCIES)}
    result = run(outputs, [f"latency_p{q}"])
    expected = float(np.percentile(LATENCIES, q))  # numpy's default: linear interpolation
    assert result.aggregate[f"latency_p{q}"] == pytest.approx(expected, abs=1e-12)
    assert result.provenance["metrics"][f"latency_p{q}"]["aggregate"] == f"p{q}"


def test_latency_percentiles_by_hand() -> None:
    # four values: p50 = (0.4 + 1.0) / 2; p95 at position 0.95 * 3 = 2.85 -> 1.0 + 0.85 * (3.0 - 1.0)
    outputs = {f"s{i}": {"latency": v} for i, v in enumerate([1.0, 0.2, 3.0, 0.4])}
    result = run(outputs, ["latency_p50", "latency_p95"])
    assert result.aggregate["latency_p50"] == pytest.approx(0.7)
    assert result.aggregate["latency_p95"] == pytest.approx(2.7)
    assert result.per_query["s2"] == {"latency_p50": 3.0, "latency_p95": 3.0}  # per query: the latency


def test_stage_latencies_from_timings() -> None:
    retrieval = [0.1, 0.2, 0.3, 0.9]
    outputs: dict[str, Any] = {
        f"s{i}": {"timings": {"retrieval": r, "generation": 1.0 + r}, "latency": 2.0}
        for i, r in enumerate(retrieval)
    }
    outputs["s0"]["timings"]["folder_selection"] = 0.05
    result = run(outputs, ["latency_p95.retrieval", "latency_p50.generation", "latency_p50.folder_selection"])
    assert result.aggregate["latency_p95.retrieval"] == pytest.approx(float(np.percentile(retrieval, 95)))
    assert result.aggregate["latency_p50.generation"] == pytest.approx(
        float(np.percentile([1 + r for r in retrieval], 50))
    )
    assert result.aggregate["latency_p50.folder_selection"] == pytest.approx(0.05)
    assert result.n_skipped["latency_p50.folder_selection"] == 3
    assert result.provenance["metrics"]["latency_p50.folder_selection"]["skip_reason"] == (
        "no 'timings.folder_selection' in the output"
    )


def test_default_set_lists_every_recorded_stage_in_order() -> None:
    outputs = {
        "s": {"answer": "x", "latency": 1.0, "timings": {"custom": 0.1, "total": 1.0, "retrieval": 0.2}}
    }
    result = run(outputs, [])
    stage_names = [n for n in result.aggregate if n.startswith("latency")]
    assert stage_names == [
        "latency_p50",
        "latency_p95",
        "latency_p50.retrieval",
        "latency_p95.retrieval",
        "latency_p50.total",
        "latency_p95.total",
        "latency_p50.custom",
        "latency_p95.custom",
    ]


def test_latency_asked_for_but_never_recorded() -> None:
    with pytest.raises(
        MissingFieldError, match=r"metric latency_p50\.judge needs 'timings\.judge' in the outputs"
    ):
        run({"s": {"latency": 1.0, "timings": {"retrieval": 0.1}}}, ["latency_p50.judge"])


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
def test_bad_latencies_are_rejected(bad: float) -> None:
    with pytest.raises(InputError, match="latency must be a finite number of seconds"):
        run({"s": {"latency": bad}}, ["latency_p50"])
    with pytest.raises(InputError, match=r"timings\['retrieval'\] must be a finite number"):
        run({"s": {"timings": {"retrieval": bad}}}, ["latency_p50.retrieval"])


def test_metric_name_grammar_for_stages() -> None:
    assert str(parse_metric_name("latency_p50.retrieval")) == "latency_p50.retrieval"
    assert str(parse_metric_name("LATENCY_P95.total")) == "latency_p95.total"
    assert resolve_metric(str(resolve_metric("latency_p95.generation").name)).name == "latency_p95.generation"
    assert parse_metric_name("P.10").family == "precision"  # trec_eval spellings still win
    with pytest.raises(MetricNameError, match=r"mrr takes no '\.qualifier'"):
        parse_metric_name("mrr.retrieval")
    with pytest.raises(MetricNameError, match=r"qualifier after '\.' must be"):
        parse_metric_name("latency_p50.re trieval")


PRICING = {
    "pricing": {
        "small": {"prompt_per_1k": 0.5, "completion_per_1k": 1.5},
        "default": {"prompt_per_1k": 3.0, "completion_per_1k": 6.0},
    }
}


def test_tokens_and_cost() -> None:
    outputs = {
        "a": {"tokens": {"prompt": 2000, "completion": 100}, "model": "small"},
        "b": {"tokens": {"prompt": 1000, "completion": 500}, "model": "big"},  # priced by default
        "c": {"tokens": {"prompt": 400, "completion": 0}},  # no model: default
        "d": {"error": "HTTP 500"},
    }
    cfg = RagmeterConfig.model_validate(PRICING)
    result = run(outputs, ["tokens_prompt", "tokens_completion", "cost"], config=cfg)
    cost_a = 2 * 0.5 + 0.1 * 1.5
    cost_b = 1 * 3.0 + 0.5 * 6.0
    cost_c = 0.4 * 3.0
    assert result.per_query["a"]["cost"] == pytest.approx(cost_a)
    assert result.aggregate["cost"] == pytest.approx((cost_a + cost_b + cost_c) / 3)
    assert result.aggregate["tokens_prompt"] == pytest.approx(3400 / 3)
    assert result.n_skipped["cost"] == 1
    tokens = result.operational["tokens"]
    assert tokens["prompt"] == {"sum": 3400.0, "mean": pytest.approx(3400 / 3), "n": 3}
    assert tokens["completion"]["sum"] == 600.0
    assert result.operational["cost"]["sum"] == pytest.approx(cost_a + cost_b + cost_c)
    assert result.provenance["settings"]["pricing"]["small"] == {
        "prompt_per_1k": 0.5,
        "completion_per_1k": 1.5,
    }


def test_cost_without_a_price_table_or_price() -> None:
    outputs = {"a": {"tokens": {"prompt": 10, "completion": 1}, "model": "big"}}
    with pytest.raises(ConfigError, match="metric cost needs a price table"):
        run(outputs, ["cost"])
    cfg = RagmeterConfig.model_validate({"pricing": {"small": {"prompt_per_1k": 1, "completion_per_1k": 1}}})
    with pytest.raises(ConfigError, match=r"sample 'a': no price for model 'big' in 'pricing'"):
        run(outputs, ["cost"], config=cfg)


def test_bad_price_table_is_a_config_error(tmp_path: Any) -> None:
    path = tmp_path / "ragmeter.yaml"
    path.write_text("pricing:\n  small: {prompt_per_1k: -1, completion_per_1k: 1}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"pricing.small.prompt_per_1k"):
        run({"a": {}}, ["error_rate"], config=path)


def test_suite_seconds_sums_latencies() -> None:
    result = run({"a": {"latency": 1.5}, "b": {"latency": 2.0}, "c": {"error": "x"}}, ["error_rate"])
    assert result.operational["suite_seconds"] == 3.5
    assert result.operational["n_outputs"] == 3


def test_operational_metrics_need_recorded_outputs_not_a_trec_run(tmp_path: Any) -> None:
    from ragmeter import evaluate_trec

    (tmp_path / "q").write_text("1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "r").write_text("1 Q0 d1 1 1.0 t\n", encoding="utf-8")
    with pytest.raises(MissingFieldError, match="needs recorded outputs of a dataset"):
        evaluate_trec(tmp_path / "q", tmp_path / "r", metrics=["error_rate"])
