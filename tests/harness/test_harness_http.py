"""The http system against a real server on 127.0.0.1: mapping, latency, retries, timeouts, failures, secrets."""

from __future__ import annotations

import asyncio
import json
import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ragmeter.cli import main
from ragmeter.harness.http import HttpAdapter
from ragmeter.harness.journal import OutputsJournal
from ragmeter.harness.runner import RunAborted, RunSettings, run_calls
from ragmeter.harness.suite import load_suite
from ragmeter.harness.suite_run import run_suite
from ragmeter.io.datasets import load_dataset


def _run(tmp_path: Path, h: SimpleNamespace, n: int, system: dict[str, Any], **fields: Any) -> Any:
    h.write_dataset(tmp_path, n)
    return run_suite(h.write_suite(tmp_path, system, **fields))


def test_harness_http_maps_response_with_jmespath_and_records_latency(
    tmp_path: Path, h: SimpleNamespace, rag_server: Any
) -> None:
    rag_server.delay = 0.15
    outcome = _run(tmp_path, h, 4, h.http_system(rag_server.url))
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert sorted(outputs) == ["q-1", "q-2", "q-3", "q-4"]
    out = outputs["q-3"]
    assert out["retrieved"] == [
        {"id": "doc-3", "rel_path": "notes/3.md", "heading_path": "Top > Sub", "text": "x", "score": 2.0},
        {"id": "doc-x", "rel_path": "notes/x.md", "heading_path": "Other", "text": "y", "score": 1.0},
    ]
    assert out["answer"] == "answer to question 3?"
    assert out["abstained"] is False
    assert out["references"] == [{"rel_path": "notes/3.md", "heading_path": "Top"}]
    assert out["timings"] == {"retrieval": 0.01, "generation": 0.02}
    assert out["tokens"] == {"prompt": 11, "completion": 3}
    assert out["attempts"] == 1
    assert 0.15 <= out["latency"] < 2.0
    assert "error" not in out and "timed_out" not in out
    # the request body came from the template: id, question and k (an int, not a string)
    bodies = {r.qid: r.body for r in rag_server.requests}
    assert bodies["q-3"] == {"id": "q-3", "q": "question 3?", "top_k": 2}
    assert outcome.result.aggregate == {"hit@2": 1.0, "mrr": 1.0}
    assert (outcome.summary.n_called, outcome.summary.n_ok) == (4, 4)
    for name in ("metrics.json", "per_query.jsonl", "config.json"):
        assert (tmp_path / "out" / name).is_file()


def test_harness_http_concurrency_is_bounded(tmp_path: Path, h: SimpleNamespace, rag_server: Any) -> None:
    rag_server.delay = 0.1
    _run(tmp_path, h, 9, h.http_system(rag_server.url), concurrency=3)
    assert 2 <= rag_server.max_inflight <= 3


def test_harness_http_retries_5xx_and_429_then_succeeds(
    tmp_path: Path, h: SimpleNamespace, rag_server: Any
) -> None:
    rag_server.behave("q-1", 500, 503, "ok")
    rag_server.behave("q-2", (429, "0.4"), "ok")
    outcome = _run(tmp_path, h, 3, h.http_system(rag_server.url), backoff_seconds=0.01)
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert (rag_server.asked("q-1"), rag_server.asked("q-2"), rag_server.asked("q-3")) == (3, 2, 1)
    assert outputs["q-1"]["attempts"] == 3 and "error" not in outputs["q-1"]
    assert outputs["q-2"]["attempts"] == 2 and "error" not in outputs["q-2"]
    first, second = [r.at for r in rag_server.requests if r.qid == "q-2"]
    assert second - first >= 0.35, "Retry-After: 0.4 was not honoured"
    assert outcome.summary.n_ok == 3


def test_harness_http_gives_up_after_retries_and_does_not_retry_4xx(
    tmp_path: Path, h: SimpleNamespace, rag_server: Any
) -> None:
    rag_server.behave("q-1", 500, 500, 500, 500)
    rag_server.behave("q-2", 404)
    outcome = _run(tmp_path, h, 3, h.http_system(rag_server.url), retries=2)
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert rag_server.asked("q-1") == 3
    assert rag_server.asked("q-2") == 1
    assert outputs["q-1"]["error"] == (
        'HTTP 500 Internal Server Error: \'{"error": "boom"}\' (after 3 attempts)'
    )
    assert outputs["q-2"]["error"] == 'HTTP 404 Not Found: \'{"error": "boom"}\''
    for qid in ("q-1", "q-2"):
        assert outputs[qid]["retrieved"] == [] and outputs[qid]["answer"] is None
        assert "timed_out" not in outputs[qid]
    assert (outcome.summary.n_ok, outcome.summary.n_errors) == (1, 2)
    # failed questions are scored as empty rankings, never dropped
    assert outcome.result.per_query["q-1"]["hit@2"] == 0.0
    assert outcome.result.n_queries == 3


def test_harness_http_timeout_is_recorded_and_not_retried(
    tmp_path: Path, h: SimpleNamespace, rag_server: Any
) -> None:
    rag_server.behave("q-2", "hang")
    started = time.monotonic()
    outcome = _run(tmp_path, h, 3, h.http_system(rag_server.url), timeout_seconds=0.5)
    assert time.monotonic() - started < 5
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert outputs["q-2"]["timed_out"] is True
    assert outputs["q-2"]["error"] == "timed out after 0.5 s"
    assert 0.5 <= outputs["q-2"]["latency"] < 2
    assert rag_server.asked("q-2") == 1
    assert "timed_out" not in outputs["q-1"]
    assert (outcome.summary.n_ok, outcome.summary.n_timeouts) == (2, 1)


def test_harness_http_malformed_json_is_an_error(tmp_path: Path, h: SimpleNamespace, rag_server: Any) -> None:
    rag_server.behave("q-1", "malformed")
    _run(tmp_path, h, 2, h.http_system(rag_server.url))
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert outputs["q-1"]["error"] == (
        'malformed JSON in the response (Unterminated string starting at): \'{"data": {"reply": "cut\''
    )
    assert rag_server.asked("q-1") == 1
    assert "error" not in outputs["q-2"]


def test_harness_http_get_with_query_params(tmp_path: Path, h: SimpleNamespace, rag_server: Any) -> None:
    system = h.http_system(rag_server.url, method="GET", params={"id": "{{ id }}", "q": "Q: {{ question }}"})
    del system["body"]
    _run(tmp_path, h, 2, system)
    assert {r.qid: r.body["q"] for r in rag_server.requests} == {
        "q-1": "Q: question 1?",
        "q-2": "Q: question 2?",
    }
    assert h.read_outputs(tmp_path / "out" / "outputs.jsonl")["q-2"]["answer"] == "answer to Q: question 2?"


def test_harness_http_unreachable_stops_early_with_one_clear_error(
    tmp_path: Path, h: SimpleNamespace, closed_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{closed_port}/ask"
    h.write_dataset(tmp_path, 40)
    suite = h.write_suite(tmp_path, h.http_system(url), concurrency=2, retries=1)
    started = time.monotonic()
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(suite), "-q"])
    assert time.monotonic() - started < 10
    assert exit_info.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert re.fullmatch(
        rf"Error: {re.escape(str(suite))}(:\d+)?: system\.url: cannot reach {re.escape(url)} \(connection refused\)",
        last,
    ), last
    # nothing was recorded as done, so a later --resume asks every question
    assert (tmp_path / "out" / "outputs.jsonl").read_text(encoding="utf-8") == ""
    config = json.loads((tmp_path / "out" / "config.json").read_text(encoding="utf-8"))
    assert config["sessions"][-1]["aborted"] == f"cannot reach {url} (connection refused)"
    # the folder holds no answer, so running again needs neither --resume nor --fresh
    with pytest.raises(SystemExit):
        main(["run", str(suite), "-q"])
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert re.fullmatch(
        rf"Error: {re.escape(str(suite))}(:\d+)?: system\.url: cannot reach {re.escape(url)} \(connection refused\)",
        last,
    ), last


def test_harness_http_unreachable_gives_a_clear_error_per_question(
    tmp_path: Path, h: SimpleNamespace, closed_port: int
) -> None:
    url = f"http://127.0.0.1:{closed_port}/ask"
    h.write_dataset(tmp_path, 10)
    loaded = load_suite(h.write_suite(tmp_path, h.http_system(url), concurrency=3, retries=1))
    adapter = HttpAdapter(loaded.suite.system, concurrency=3, timeout_seconds=2)  # type: ignore[arg-type]
    samples = load_dataset(loaded.dataset_path)
    settings = RunSettings(concurrency=3, timeout_seconds=2, retries=1, backoff_seconds=0.01)

    async def go() -> None:
        await adapter.start()
        try:
            with OutputsJournal(tmp_path / "o.jsonl") as journal:
                await run_calls(samples, adapter, settings=settings, journal=journal)
        finally:
            await adapter.aclose()

    with pytest.raises(RunAborted) as aborted:
        asyncio.run(go())
    records = aborted.value.records
    assert len(records) == 3, "stops after one round of concurrent calls, not after all 10 questions"
    for record in records:
        assert record.error == f"connection refused: {url} (after 2 attempts)"
        assert record.attempts == 2


def test_harness_http_secrets_never_written(
    tmp_path: Path,
    h: SimpleNamespace,
    rag_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    secret = "s3cr3t-Token-4242"
    monkeypatch.setenv("RAG_TEST_SECRET", secret)
    rag_server.behave("q-1", "echo-auth")
    rag_server.behave("q-2", "401-echo")
    system = h.http_system(
        rag_server.url,
        headers={"Authorization": "Bearer ${RAG_TEST_SECRET}", "X-Api-Key": "literal-key-123"},
        params={"key": "${RAG_TEST_SECRET}"},
    )
    system["response"] = {**system["response"], "answer": "data.reply"}
    h.write_dataset(tmp_path, 3)
    suite = h.write_suite(tmp_path, system)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(suite)])
    assert exit_info.value.code == 0
    printed = capsys.readouterr()
    # the server did get the secret ...
    assert {r.headers["Authorization"] for r in rag_server.requests} == {f"Bearer {secret}"}
    # ... but no file, line of output or message has it
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {"outputs.jsonl", "metrics.json", "per_query.jsonl", "config.json"}
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert secret not in text, path
        assert "literal-key-123" not in text, path
    assert secret not in printed.out + printed.err
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert outputs["q-1"]["answer"] == "you sent Bearer [REDACTED]"
    assert outputs["q-2"]["error"] == 'HTTP 401 Unauthorized: \'{"error": "bad token Bearer [REDACTED]"}\''

    config = json.loads((tmp_path / "out" / "config.json").read_text(encoding="utf-8"))
    assert config["suite"]["system"]["headers"] == {
        "Authorization": "Bearer ${RAG_TEST_SECRET}",
        "X-Api-Key": "[REDACTED]",
    }
    assert config["suite"]["system"]["params"] == {"key": "${RAG_TEST_SECRET}"}
