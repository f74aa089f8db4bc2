"""The judge client against a real HTTP server on 127.0.0.1: pinning, retries, timeouts, errors."""

from __future__ import annotations

import time

import judge_chat_server as cs
import pytest

from ragmeter.errors import ConfigError
from ragmeter.judges import run_judges
from ragmeter.judges.chat import Endpoint, JudgeCallError
from ragmeter.judges.client import JudgeClient
from ragmeter.judges.prompt_files import load_prompt

GOOD = {"reasoning": "matches the reference", "score": 4}
ITEM = {"id": "q1", "question": "What is the capital of France?", "answer": "Paris.", "contexts": ["Paris."]}


def run(cfg: dict, items: list | None = None):
    return run_judges(items or [ITEM], config=cfg, judges=["correctness"])


def test_request_is_pinned(chat_server, judge_config) -> None:
    server = chat_server([cs.ok(GOOD)])
    result = run(judge_config(server))
    [request] = server.chat_requests
    body = request["json"]
    assert body["model"] == "test-judge"
    assert body["temperature"] == 0
    assert body["seed"] == 7
    assert body["max_tokens"] == 256
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "correctness_reply"
    prompt = load_prompt("correctness", "v1")
    assert request["headers"]["x-ragmeter-prompt"] == "correctness.v1"
    assert request["headers"]["x-ragmeter-prompt-sha256"] == prompt.sha256
    assert "What is the capital of France?" in body["messages"][-1]["content"]
    [outcome] = result.outcomes
    assert outcome.value == 4.0
    assert outcome.details == {"reasoning": "matches the reference"}
    # provenance: model as given and as reported, prompt identity, decoding
    call = outcome.calls[0]
    assert call.request == body
    assert call.raw_replies == [request_reply_text(GOOD)]
    assert call.prompt == {"id": "correctness", "version": "v1", "sha256": prompt.sha256}
    judge = result.provenance["judge"]
    assert judge["model"] == "test-judge"
    assert judge["models_reported"] == ["test-judge"]
    assert judge["system_fingerprints"] == ["fp_test"]
    assert judge["temperature"] == 0
    assert judge["seed"] == 7
    assert judge["server_model"] == {"id": "test-judge", "created": 1700000000, "owned_by": "chat-server"}
    assert result.provenance["prompts"]["correctness"]["sha256"] == prompt.sha256
    assert "api_key" not in str(result.provenance).replace("api_key_env", "")


def request_reply_text(obj: dict) -> str:
    return cs.ok(obj).content


def test_model_reported_differs_from_requested(chat_server, judge_config) -> None:
    server = chat_server([cs.ok(GOOD, model="test-judge-2024-07-18-q4")])
    result = run(judge_config(server))
    assert result.outcomes[0].calls[0].model_reported == "test-judge-2024-07-18-q4"
    assert result.provenance["judge"]["model"] == "test-judge"
    assert result.provenance["judge"]["models_reported"] == ["test-judge-2024-07-18-q4"]


def test_429_honours_retry_after(chat_server, judge_config) -> None:
    server = chat_server([cs.rate_limited(0.4), cs.ok(GOOD)])
    result = run(judge_config(server, retry_base_delay_s=0.0, retry_max_delay_s=5.0))
    first, second = server.chat_requests
    assert second["time"] - first["time"] >= 0.38
    assert result.outcomes[0].value == 4.0
    assert result.outcomes[0].calls[0].http_attempts == 2
    assert result.usage.http_attempts == 2
    assert result.usage.calls == 1


def test_retry_after_is_capped(chat_server, judge_config) -> None:
    server = chat_server([cs.rate_limited(30), cs.ok(GOOD)])
    started = time.monotonic()
    result = run(judge_config(server, retry_base_delay_s=0.0, retry_max_delay_s=0.05))
    assert time.monotonic() - started < 5
    assert result.outcomes[0].value == 4.0


def test_5xx_is_retried(chat_server, judge_config) -> None:
    server = chat_server([cs.server_error(500), cs.server_error(503), cs.ok(GOOD)])
    result = run(judge_config(server))
    assert len(server.chat_requests) == 3
    assert result.outcomes[0].value == 4.0
    assert result.outcomes[0].calls[0].http_attempts == 3


def test_hang_past_timeout_is_retried(chat_server, judge_config) -> None:
    server = chat_server([cs.hang(5.0), cs.ok(GOOD)])
    started = time.monotonic()
    result = run(judge_config(server, timeout_s=0.3))
    assert time.monotonic() - started < 3
    assert len(server.chat_requests) == 2
    assert result.outcomes[0].value == 4.0


def test_failures_after_all_retries_leave_the_item_unscored(chat_server, judge_config) -> None:
    server = chat_server([cs.server_error(), cs.server_error(), cs.server_error(), cs.ok(GOOD)])
    cfg = judge_config(server, max_retries=2)
    result = run(cfg)
    [outcome] = result.outcomes
    assert outcome.value is None
    assert outcome.status == "unscored"
    assert outcome.unscored_code == "call_failed"
    assert outcome.unscored_reason == "HTTP 500 (internal error); gave up after 3 attempts"
    assert outcome.retryable
    assert result.summary["correctness"].n_unscored == 1
    assert result.summary["correctness"].mean is None
    assert result.summary["correctness"].unscored_by_code == {"call_failed": 1}
    assert len(server.chat_requests) == 3
    # the failure was not cached: the next run asks again and gets the good reply
    again = run(cfg)
    assert again.outcomes[0].value == 4.0
    assert len(server.chat_requests) == 4


def test_other_4xx_is_not_retried(chat_server, judge_config) -> None:
    server = chat_server([cs.bad_request("maximum context length exceeded"), cs.ok(GOOD)])
    result = run(judge_config(server))
    assert len(server.chat_requests) == 1
    outcome = result.outcomes[0]
    assert outcome.unscored_code == "request_rejected"
    assert outcome.unscored_reason == "HTTP 400: maximum context length exceeded"
    assert not outcome.retryable
    assert outcome.calls[0].request["model"] == "test-judge"


@pytest.mark.parametrize("status", [401, 403, 404])
def test_auth_and_not_found_are_fatal(chat_server, judge_config, status: int) -> None:
    server = chat_server([cs.bad_request("nope", status=status)] * 3)
    with pytest.raises(ConfigError, match=f"HTTP {status} from http://127.0.0.1"):
        run(judge_config(server), [ITEM, {**ITEM, "id": "q2"}])
    assert len(server.chat_requests) == 1


def test_response_format_steps_down(chat_server, judge_config) -> None:
    def script(body: dict) -> cs.Reply:
        fmt = body.get("response_format")
        if fmt is not None and fmt["type"] == "json_schema":
            return cs.bad_request("response_format json_schema is not supported by this server")
        if fmt is not None:
            return cs.bad_request("unknown field: response_format")
        return cs.json_in_prose(GOOD)

    server = chat_server(script)
    result = run(judge_config(server), [ITEM, {**ITEM, "id": "q2", "question": "And of Italy?"}])
    assert [o.value for o in result.outcomes] == [4.0, 4.0]
    formats = [r["json"].get("response_format", {}).get("type") for r in server.chat_requests]
    assert formats == ["json_schema", "json_object", None, None]
    assert result.provenance["judge"]["response_format_used"] == "none"
    assert len(result.provenance["judge"]["response_format_notes"]) == 2


def test_json_object_mode_when_configured(chat_server, judge_config) -> None:
    server = chat_server([cs.ok(GOOD)])
    run(judge_config(server, response_format="json_object"))
    assert server.chat_requests[0]["json"]["response_format"] == {"type": "json_object"}


def test_no_response_format_when_configured(chat_server, judge_config) -> None:
    server = chat_server([cs.ok(GOOD)])
    run(judge_config(server, response_format="none", seed=None))
    body = server.chat_requests[0]["json"]
    assert "response_format" not in body
    assert "seed" not in body


def test_api_key_comes_from_the_environment(chat_server, judge_config, monkeypatch) -> None:
    monkeypatch.setenv("RAGMETER_TEST_JUDGE_KEY", "sk-test-123")
    server = chat_server([cs.ok(GOOD)])
    run(judge_config(server, api_key_env="RAGMETER_TEST_JUDGE_KEY"))
    assert server.chat_requests[0]["headers"]["authorization"] == "Bearer sk-test-123"


def test_missing_api_key_variable_is_a_config_error(chat_server, judge_config, monkeypatch) -> None:
    monkeypatch.delenv("RAGMETER_TEST_JUDGE_KEY", raising=False)
    server = chat_server([cs.ok(GOOD)])
    with pytest.raises(
        ConfigError, match=r"judge\.api_key_env: environment variable RAGMETER_TEST_JUDGE_KEY is not set"
    ):
        run(judge_config(server, api_key_env="RAGMETER_TEST_JUDGE_KEY"))
    assert server.requests == []


def test_client_directly_reports_attempts(chat_server) -> None:
    server = chat_server([cs.server_error(502), cs.server_error(502)])
    endpoint = Endpoint(
        base_url=server.base_url,
        model="m",
        api_key="x",
        temperature=0.0,
        seed=1,
        max_tokens=32,
        timeout_s=2.0,
        max_retries=1,
        retry_base_delay_s=0.0,
        retry_max_delay_s=0.0,
        response_format="none",
    )
    client = JudgeClient(endpoint)
    try:
        with pytest.raises(JudgeCallError) as info:
            client.complete([{"role": "user", "content": "hi"}])
    finally:
        client.close()
    assert info.value.code == "call_failed"
    assert info.value.attempts == 2
    assert info.value.retryable


def test_concurrency_is_bounded(chat_server, judge_config) -> None:
    import threading

    active = 0
    peak = 0
    lock = threading.Lock()

    def script(body: dict) -> cs.Reply:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.05)
        with lock:
            active -= 1
        return cs.ok(GOOD)

    server = chat_server(script)
    items = [{**ITEM, "id": f"q{i}", "question": f"question {i}"} for i in range(8)]
    result = run(judge_config(server, concurrency=3, cache=False), items)
    assert len(server.chat_requests) == 8
    assert peak <= 3
    assert peak >= 2
    assert [o.item_id for o in result.outcomes] == [f"q{i}" for i in range(8)]


def test_retry_after_parsing() -> None:
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from ragmeter.judges.client import backoff_delay, retry_after_seconds

    assert retry_after_seconds({"Retry-After": "1.5"}, cap=10) == 1.5
    assert retry_after_seconds({"retry-after": "120"}, cap=10) == 10
    assert retry_after_seconds({"retry-after-ms": "20", "retry-after": "5"}, cap=10) == 0.02
    assert retry_after_seconds({"retry-after": "soon"}, cap=10) is None
    assert retry_after_seconds({}, cap=10) is None
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=4), usegmt=True)
    assert 2 <= retry_after_seconds({"retry-after": when}, cap=10) <= 4
    assert [backoff_delay(a, base=0.5, cap=3, jitter=1.0) for a in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
