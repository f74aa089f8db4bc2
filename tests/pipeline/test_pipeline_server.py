from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pipeline_rag_server as rs
import pytest

VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"
QUESTION = "How often should I water the monstera?"


def _post(
    url: str, body: Any, *, headers: dict[str, str] | None = None, timeout: float = 5.0
) -> tuple[int, bytes]:
    data = json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method="POST", headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.read()


def _get(url: str, *, timeout: float = 5.0) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        with err:
            return err.code, json.loads(err.read())


@pytest.fixture
def server(demo_server: Any) -> Iterator[Any]:
    demo_server.reset()
    yield demo_server
    demo_server.reset()


def test_pipeline_server_answers_in_an_envelope(server: Any) -> None:
    status, raw = _post(server.ask_url, {"question": QUESTION, "k": 3})
    assert status == 200
    body = json.loads(raw)
    assert set(body) == {"data", "meta"}
    data, meta = body["data"], body["meta"]
    expected = server.pipeline.answer(QUESTION, k=3)
    assert {key: v for key, v in data.items() if key != "timings"} == {
        key: v for key, v in expected.items() if key != "timings"
    }
    assert data["references"][0]["rel_path"] == "personal/home/plants.md"
    assert meta["server"] == "ragmeter-test-rag" and meta["request_id"] == 1 and meta["behaviour"] == "ok"
    assert meta["index_version"] == server.pipeline.index_stats.index_version
    [recorded] = server.requests
    assert (recorded.method, recorded.question, recorded.k) == ("POST", QUESTION, 3)


def test_pipeline_server_get_and_health(server: Any) -> None:
    query = urllib.parse.urlencode({"question": QUESTION, "k": "2"})
    status, body = _get(f"{server.ask_url}?{query}")
    assert status == 200 and len(body["data"]["retrieved"]) == 2
    assert _get(f"{server.url}/health") == (200, {"status": "ok"})
    status, log = _get(f"{server.url}/requests")
    assert status == 200 and [r["question"] for r in log] == [QUESTION]


def test_pipeline_server_rejects_bad_requests(server: Any) -> None:
    assert _post(server.ask_url, {"k": 3})[0] == 400
    assert _post(server.ask_url, {"question": QUESTION, "k": 0})[0] == 400
    assert _post(server.ask_url, {"question": QUESTION, "k": "many"})[0] == 400
    request = urllib.request.Request(server.ask_url, data=b"{nope", method="POST")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=5)
    err.value.close()
    assert err.value.code == 400
    status, raw = _post(server.ask_url, {"question": QUESTION}, headers={"X-Rag-Behaviour": "explode"})
    assert status == 400 and "unknown behaviour 'explode'" in json.loads(raw)["error"]


def test_pipeline_server_slow_responses(server: Any) -> None:
    started = time.perf_counter()
    status, raw = _post(server.ask_url, {"question": QUESTION}, headers={"X-Rag-Behaviour": "slow:300"})
    assert status == 200 and time.perf_counter() - started >= 0.3
    assert json.loads(raw)["meta"]["behaviour"] == "slow:300"


def test_pipeline_server_injected_status(server: Any) -> None:
    status, raw = _post(server.ask_url, {"question": QUESTION}, headers={"X-Rag-Behaviour": "500"})
    assert status == 500 and json.loads(raw) == {"error": "injected HTTP 500"}
    assert _post(server.ask_url, {"question": QUESTION}, headers={"X-Rag-Behaviour": "status:429"})[0] == 429


def test_pipeline_server_hang_outlasts_the_client_timeout(server: Any) -> None:
    started = time.perf_counter()
    with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
        _post(server.ask_url, {"question": QUESTION}, headers={"X-Rag-Behaviour": "hang:3000"}, timeout=0.3)
    assert time.perf_counter() - started < 2.0
    assert server.requests[-1].behaviour == "hang:3000"


def test_pipeline_server_malformed_and_empty(server: Any) -> None:
    status, raw = _post(server.ask_url, {"question": QUESTION}, headers={"X-Rag-Behaviour": "malformed"})
    assert status == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)
    status, raw = _post(server.ask_url, {"question": QUESTION}, headers={"X-Rag-Behaviour": "slow:10,empty"})
    data = json.loads(raw)["data"]
    assert (data["answer"], data["retrieved"], data["references"]) == ("", [], [])


def test_pipeline_server_control_endpoint_queues_behaviours(server: Any) -> None:
    other = "What is Project Beacon?"
    status, raw = _post(
        f"{server.url}/control", {"queue": ["500", "ok"], "by_question": {other: ["status:503"]}}
    )
    view = json.loads(raw)
    assert status == 200 and view == {
        "queue": ["500", "ok"],
        "by_question": {other: ["status:503"]},
        "requests": 0,
    }
    assert _post(server.ask_url, {"question": other})[0] == 503  # the question's own queue first
    assert _post(server.ask_url, {"question": QUESTION})[0] == 500
    assert _post(server.ask_url, {"question": other})[0] == 200
    assert _post(server.ask_url, {"question": QUESTION})[0] == 200
    assert [r.behaviour for r in server.requests] == ["status:503", "500", "ok", "ok"]
    assert _post(f"{server.url}/control", {"queue": ["bogus"]})[0] == 400
    status, raw = _post(f"{server.url}/control", {"reset": True})
    assert json.loads(raw) == {"queue": [], "by_question": {}, "requests": 0}


def test_pipeline_server_python_control_and_header_precedence(server: Any) -> None:
    server.behave("500")
    assert _post(server.ask_url, {"question": QUESTION}, headers={"X-Rag-Behaviour": "ok"})[0] == 200
    assert _post(server.ask_url, {"question": QUESTION})[0] == 500
    with pytest.raises(ValueError, match="unknown behaviour"):
        server.behave("slow:fast")


def test_pipeline_serve_rag_yields_a_loopback_url_and_stops(make_vault: Any) -> None:
    vault = make_vault({"a/n.md": "# N\n\nThe answer is forty-two.\n"})
    with rs.serve_rag(vault, folder_mode="on") as base_url:
        assert base_url.startswith("http://127.0.0.1:")
        status, raw = _post(f"{base_url}/ask", {"question": "What is the answer?", "k": 1})
        data = json.loads(raw)["data"]
        assert status == 200 and data["folder_mode"] == "on" and data["selected_folders"] == ["a"]
    with pytest.raises(urllib.error.URLError):
        _post(f"{base_url}/ask", {"question": "again?"}, timeout=1)


def test_pipeline_stopping_releases_hanging_requests(make_vault: Any) -> None:
    import threading

    vault = make_vault({"a/n.md": "# N\n\ntext\n"})
    server = rs.RagServer(vault).start()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            _post(server.ask_url, {"question": "text"}, headers={"X-Rag-Behaviour": "hang"}, timeout=30)
        except Exception as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    deadline = time.monotonic() + 5
    while not server.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.perf_counter()
    server.stop()
    thread.join(timeout=5)
    assert not thread.is_alive() and time.perf_counter() - started < 3
    assert errors  # the connection was closed without a response
