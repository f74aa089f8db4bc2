"""Token usage and cost per call and in total; the max-cost budget; the estimate before a run."""

from __future__ import annotations

import judge_chat_server as cs
import pytest

from ragmeter.errors import ConfigError
from ragmeter.judges import estimate_cost, run_judges
from ragmeter.judges.config import Price
from ragmeter.judges.costs import CostMeter, call_cost, estimate_prompt_tokens, price_for

PRICES = {"test-judge": {"input_per_mtok": 2.0, "output_per_mtok": 10.0}}
ITEMS = [
    {"id": f"q{i}", "question": f"question {i}?", "answer": f"answer {i}", "contexts": [f"context {i}"]}
    for i in range(4)
]


def test_cost_totals_match_scripted_usage(chat_server, judge_config) -> None:
    usage = {"q0": (100, 20), "q1": (250, 40), "q2": (1000, 5), "q3": (7, 7)}

    def script(body: dict) -> cs.Reply:
        qid = next(q for q in usage if f"question {q[1:]}?" in body["messages"][-1]["content"])
        prompt, completion = usage[qid]
        return cs.ok({"reasoning": "r", "score": 3}, prompt_tokens=prompt, completion_tokens=completion)

    server = chat_server(script)
    result = run_judges(
        ITEMS, config=judge_config(server, prices=PRICES, concurrency=3), judges=["correctness"]
    )
    total_prompt = sum(p for p, _ in usage.values())
    total_completion = sum(c for _, c in usage.values())
    assert result.usage.prompt_tokens == total_prompt == 1357
    assert result.usage.completion_tokens == total_completion == 72
    expected = (1357 * 2.0 + 72 * 10.0) / 1e6
    assert result.usage.cost_usd == pytest.approx(expected, abs=1e-12)
    for outcome in result.outcomes:
        prompt, completion = usage[outcome.item_id]
        call = outcome.calls[0]
        assert (call.prompt_tokens, call.completion_tokens) == (prompt, completion)
        assert call.cost_usd == pytest.approx((prompt * 2 + completion * 10) / 1e6, abs=1e-12)
    assert result.provenance["price"] == {"input_per_mtok": 2.0, "output_per_mtok": 10.0}


def test_unpriced_model_reports_unknown_cost(chat_server, judge_config) -> None:
    server = chat_server(lambda body: cs.ok({"reasoning": "r", "score": 3}))
    result = run_judges(ITEMS[:2], config=judge_config(server), judges=["correctness"])
    assert result.usage.cost_usd is None
    assert result.usage.unpriced_calls == 2
    assert result.usage.prompt_tokens == 20
    assert result.estimate is not None and result.estimate.cost_usd_max is None


def test_missing_usage_is_counted(chat_server, judge_config) -> None:
    server = chat_server([cs.Reply(content='{"reasoning": "r", "score": 3}', usage=None)])
    result = run_judges(ITEMS[:1], config=judge_config(server, prices=PRICES), judges=["correctness"])
    assert result.usage.calls_without_usage == 1
    assert result.outcomes[0].calls[0].prompt_tokens is None
    # unknown usage is charged at the reserved worst case, never as free
    assert result.usage.cost_usd is not None and result.usage.cost_usd > 0


def test_budget_stops_before_spending_more(chat_server, judge_config) -> None:
    server = chat_server(
        lambda body: cs.ok({"reasoning": "r", "score": 3}, prompt_tokens=400, completion_tokens=100)
    )
    # each call reserves (prompt estimate ~500 * 2 + 256 * 10) / 1e6 ≈ 0.0036 USD and costs 0.0018:
    # two calls fit (0.0036 spent), a third could reach 0.0072 > 0.006
    cfg = judge_config(server, prices=PRICES, max_cost_usd=0.006)
    result = run_judges(ITEMS, config=cfg, judges=["correctness"])
    scored = [o for o in result.outcomes if o.value is not None]
    stopped = [o for o in result.outcomes if o.value is None]
    assert len(server.chat_requests) == len(scored) == 2
    assert len(stopped) == 2
    assert {o.unscored_code for o in stopped} == {"budget_exhausted"}
    assert all(o.retryable for o in stopped)
    assert stopped[0].unscored_reason.startswith("not judged: max_cost_usd 0.006 reached: spent 0.0036 USD")
    assert result.usage.budget_exhausted
    assert result.usage.budget_message.startswith("max_cost_usd 0.006 reached")
    assert result.usage.cost_usd == pytest.approx(0.0036)
    assert result.summary["correctness"].unscored_by_code == {"budget_exhausted": len(stopped)}
    # a later run with a larger budget judges the rest (the done ones come from the cache)
    more = run_judges(ITEMS, config={**cfg, "max_cost_usd": 1.0}, judges=["correctness"])
    assert all(o.value == 3.0 for o in more.outcomes)
    assert more.usage.cache_hits == len(scored)
    assert len(server.chat_requests) == len(ITEMS)


def test_budget_needs_a_price(chat_server, judge_config) -> None:
    server = chat_server([])
    with pytest.raises(
        ConfigError, match=r"judge\.prices: max_cost_usd is set but no price is known for model 'test-judge'"
    ):
        run_judges(ITEMS, config=judge_config(server, max_cost_usd=1.0), judges=["correctness"])


def test_estimate_before_a_run() -> None:
    cfg = {
        "base_url": "http://127.0.0.1:9/v1",
        "model": "test-judge",
        "prices": PRICES,
        "cache": False,
        "max_tokens": 100,
    }
    est = estimate_cost(ITEMS, config=cfg, judges=["correctness", "factual_match"])
    # factual_match has no expected answer here, so only correctness calls are planned
    assert (est.planned_calls, est.cached_calls, est.possible_extra_calls) == (4, 0, 0)
    assert est.completion_tokens_max == 400
    assert est.priced
    assert est.cost_usd_max == pytest.approx((est.prompt_tokens_estimate * 2 + 400 * 10) / 1e6)
    with_expected = [{**i, "expected_answer": "x"} for i in ITEMS]
    est2 = estimate_cost(with_expected, config=cfg, judges=["factual_match"])
    assert (est2.planned_calls, est2.possible_extra_calls) == (4, 4)
    assert est2.completion_tokens_max == 800


def test_estimate_is_an_upper_bound_of_real_prompt_tokens() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 20
    assert estimate_prompt_tokens([{"role": "user", "content": text}]) >= len(text) / 4


def test_price_table_and_overrides() -> None:
    assert price_for("gpt-4o-2024-08-06") == Price(input_per_mtok=2.5, output_per_mtok=10.0)
    assert price_for("gpt-4o-mini") == Price(input_per_mtok=0.15, output_per_mtok=0.6)
    assert price_for("gpt-4o-mini", {"gpt-4o-mini": Price(input_per_mtok=0, output_per_mtok=0)}) == Price(
        input_per_mtok=0, output_per_mtok=0
    )
    assert price_for("llama3.1:8b") is None
    assert call_cost(None, prompt_tokens=5, completion_tokens=5) is None


def test_meter_is_exhausted_for_good() -> None:
    meter = CostMeter(max_cost_usd=1.0)
    price = Price(input_per_mtok=1e6, output_per_mtok=0)
    r = meter.reserve(price, prompt_tokens=0, completion_tokens=0)
    meter.settle(r, price, prompt_tokens=0, completion_tokens=0)
    with pytest.raises(Exception, match="max_cost_usd 1 reached"):
        meter.reserve(price, prompt_tokens=2, completion_tokens=0)
    with pytest.raises(Exception, match="max_cost_usd 1 reached"):
        meter.reserve(price, prompt_tokens=0, completion_tokens=0)
    assert meter.exhausted


def test_estimate_does_not_create_a_cache(tmp_path) -> None:
    path = tmp_path / "never.sqlite"
    cfg = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "cache_path": str(path)}
    assert estimate_cost(ITEMS, config=cfg, judges=["correctness"]).planned_calls == 4
    assert not path.exists()
