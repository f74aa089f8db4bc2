"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests.

Speaks ``POST /v1/chat/completions`` and ``GET /v1/models``; answers from a
*script* and records every request it gets. Standard library only, so any
test suite can use it::

    with serve([ok({"score": 5}), rate_limited(0.1), server_error()]) as server:
        client = OpenAI(base_url=server.base_url, api_key="x")
        ...
        assert server.chat_requests[0]["json"]["temperature"] == 0

A script is either a list of replies, used one per chat request in arrival
order (when it runs out, the server answers 500 ``script exhausted``), or a
callable ``(request_json) -> Reply`` (thread-safe, called once per request).
A reply may also be a plain ``str`` (the assistant content) or a ``dict``
(serialised as the assistant content).

Other suites load it without a package import (pytest runs with
``--import-mode=importlib``)::

    import importlib.util, pathlib, sys
    path = pathlib.Path(__file__).parents[1] / "judges" / "chat_server.py"
    spec = importlib.util.spec_from_file_location("ragmeter_test_chat_server", path)
    chat_server = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = chat_server
    spec.loader.exec_module(chat_server)

Inside ``tests/judges`` the conftest has done this already (as
``judge_chat_server``) and offers the ``chat_server`` fixture, a factory
``chat_server(script) -> ChatServer`` whose servers stop after the test.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "JUDGE_REPLIES",
    "ChatServer",
    "Reply",
    "any_judge",
    "bad_request",
    "broken_json",
    "hang",
    "json_in_prose",
    "ok",
    "rate_limited",
    "serve",
    "server_error",
]


@dataclass
class Reply:
    """One scripted answer.

    ``content`` is the assistant message; ``status`` != 200 sends ``error_body``
    instead. ``delay`` seconds pass before the answer (a hang when longer than
    the client's timeout). ``usage`` is ``(prompt_tokens, completion_tokens)``
    or ``None`` to leave usage out.
    """

    content: str = ""
    status: int = 200
    usage: tuple[int, int] | None = (10, 5)
    model: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    error_body: dict[str, Any] | None = None
    system_fingerprint: str | None = "fp_test"
    finish_reason: str = "stop"


def ok(
    content: str | dict[str, Any],
    *,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    model: str | None = None,
    delay: float = 0.0,
) -> Reply:
    """A good reply; a dict is sent as its JSON text."""
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(content=text, usage=(prompt_tokens, completion_tokens), model=model, delay=delay)


def json_in_prose(obj: dict[str, Any], **kwargs: Any) -> Reply:
    """The JSON object wrapped in chatty prose and a code fence."""
    text = f"Sure! Here is my judgement.\n\n```json\n{json.dumps(obj, indent=2)}\n```\n\nHope this helps."
    return ok(text, **kwargs)


def broken_json(text: str = '{"score": 4, "supported_claims": ["a"', **kwargs: Any) -> Reply:
    """A reply that is not valid JSON."""
    return ok(text, **kwargs)


def rate_limited(retry_after: float | str = 0.1) -> Reply:
    """HTTP 429 with a ``Retry-After`` header (seconds)."""
    return Reply(
        status=429,
        headers={"Retry-After": str(retry_after)},
        error_body={"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
    )


def server_error(status: int = 500) -> Reply:
    """An HTTP 5xx error."""
    return Reply(status=status, error_body={"error": {"message": "internal error", "type": "server_error"}})


def bad_request(message: str = "bad request", status: int = 400) -> Reply:
    """An HTTP 4xx error with ``message`` (e.g. ``"response_format is not supported"``)."""
    return Reply(status=status, error_body={"error": {"message": message, "type": "invalid_request_error"}})


def hang(seconds: float = 5.0, then: Reply | None = None) -> Reply:
    """Wait ``seconds`` before answering (``then``, or a good empty object)."""
    base = then or ok("{}")
    return Reply(
        content=base.content,
        status=base.status,
        usage=base.usage,
        model=base.model,
        headers=dict(base.headers),
        delay=seconds,
        error_body=base.error_body,
    )


Script = Sequence[Reply | str | dict[str, Any]] | Callable[[dict[str, Any]], Reply | str | dict[str, Any]]


def _as_reply(value: Reply | str | dict[str, Any]) -> Reply:
    if isinstance(value, Reply):
        return value
    return ok(value)


class ChatServer:
    """A running scripted server: ``base_url`` (ends in ``/v1``) and the ``requests`` it got."""

    def __init__(self, script: Script, *, models: Sequence[str] = ("test-judge",)) -> None:
        self._script = script
        self._index = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.models = list(models)
        self.requests: list[dict[str, Any]] = []
        """Every request: ``method``, ``path``, ``headers``, ``json`` (or ``None``), ``time``."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The ``POST /v1/chat/completions`` requests, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def start(self) -> ChatServer:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; pending hangs end at once."""
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        if callable(self._script):
            return _as_reply(self._script(body))
        with self._lock:
            index = self._index
            self._index += 1
        if index >= len(self._script):
            return Reply(status=500, error_body={"error": {"message": "script exhausted"}})
        return _as_reply(self._script[index])

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # headers and body go out in two writes: without this, Nagle + delayed ACK add 40 ms
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output clean

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True

            def _record(self, body: dict[str, Any] | None) -> None:
                with server._lock:
                    server.requests.append(
                        {
                            "method": self.command,
                            "path": self.path,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "json": body,
                            "time": time.monotonic(),
                        }
                    )

            def do_GET(self) -> None:
                self._record(None)
                if self.path.rstrip("/").endswith("/models"):
                    data = [
                        {"id": m, "object": "model", "created": 1700000000, "owned_by": "chat-server"}
                        for m in server.models
                    ]
                    self._send(200, {"object": "list", "data": data})
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"null")
                except json.JSONDecodeError:
                    body = None
                self._record(body)
                if not self.path.rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                reply = server._next_reply(body)
                if reply.delay and server._stop.wait(reply.delay):
                    self.close_connection = True
                    return
                if reply.status != 200:
                    self._send(
                        reply.status, reply.error_body or {"error": {"message": "error"}}, reply.headers
                    )
                    return
                payload: dict[str, Any] = {
                    "id": f"chatcmpl-{len(server.requests)}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": reply.model or str(body.get("model", "unknown")),
                    "system_fingerprint": reply.system_fingerprint,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply.content},
                            "finish_reason": reply.finish_reason,
                        }
                    ],
                }
                if reply.usage is not None:
                    prompt, completion = reply.usage
                    payload["usage"] = {
                        "prompt_tokens": prompt,
                        "completion_tokens": completion,
                        "total_tokens": prompt + completion,
                    }
                self._send(200, payload, reply.headers)

        return Handler


JUDGE_REPLIES: dict[str, dict[str, Any]] = {
    "groundedness": {
        "supported_claims": ["the answer's claim"],
        "unsupported_claims": [],
        "makes_claims": True,
        "score": 4,
    },
    "correctness": {"reasoning": "The answer states what the reference says.", "score": 4},
    "abstention": {"reasoning": "The reply commits to an answer.", "abstained": False},
    "conflict": {
        "reasoning": "The answer names both notes and says they disagree.",
        "acknowledges_conflict": True,
    },
    "factual_match": {"reasoning": "Both state the same fact.", "match": True},
    "factual_verify": {"key_facts": ["the fact"], "reasoning": "Checked fact by fact.", "match": True},
    "relevance": {"intent": "what the user wants", "reasoning": "The result delivers part of it.", "gain": 2},
}
"""A valid reply for each of ragmeter's judge prompts, by prompt id."""


def any_judge(body: dict[str, Any]) -> Reply:
    """A script for every ragmeter judge: the reply of :data:`JUDGE_REPLIES` for the prompt whose
    JSON schema the request names (``<prompt id>_reply``); an empty object (unparseable) otherwise.

    >>> any_judge({"response_format": {"json_schema": {"name": "correctness_reply"}}}).content
    '{"reasoning": "The answer states what the reference says.", "score": 4}'
    """
    name = str(((body.get("response_format") or {}).get("json_schema") or {}).get("name", ""))
    return ok(JUDGE_REPLIES.get(name.removesuffix("_reply"), {}))


@contextmanager
def serve(script: Script, *, models: Sequence[str] = ("test-judge",)) -> Iterator[ChatServer]:
    """Run a :class:`ChatServer` for the duration of a ``with`` block."""
    server = ChatServer(script, models=models).start()
    try:
        yield server
    finally:
        server.stop()
