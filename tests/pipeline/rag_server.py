"""A small, real HTTP RAG service on 127.0.0.1 wrapping the reference pipeline, for adapter tests.

``with serve_rag(vault) as base_url:`` starts it on an ephemeral port (stdlib
``http.server`` in a thread) and stops it on exit; ``with RagServer(vault) as
server:`` gives the object (``server.url``, ``server.requests``,
``server.behave(...)``) instead of only the URL.

Endpoints
---------
``POST /ask`` with ``{"question": "...", "k": 5}`` (``k`` optional, default 5), or
``GET /ask?question=...&k=5``, answers with the pipeline's output contract in an
envelope, so a response mapping is needed::

    {"data": {"retrieved": [...], "answer": "...", "references": [...], "abstained": false,
              "folder_mode": "off", "selected_folders": [], "timings": {...}, "tokens": {...}},
     "meta": {"request_id": 1, "server": "ragmeter-test-rag", "index_version": "...", "behaviour": "ok"}}

A bad request (not JSON, no ``question``, a bad ``k``) is ``400 {"error": "..."}``.
``GET /health`` → ``{"status": "ok"}``; ``GET /requests`` → every request so far.

Behaviours
----------
``ok``; ``slow:<ms>`` (sleep, then answer); ``status:<code>`` or a bare code such
as ``500`` (that status with ``{"error": ...}``); ``hang`` or ``hang:<ms>`` (send
nothing until the client gives up, the time passes, or the server stops; default
at most 60 s); ``malformed`` (200, ``application/json``, a truncated body);
``empty`` (200, the envelope with ``answer: ""`` and nothing retrieved or cited).
Several combine with commas: ``slow:200,empty``.

A request's behaviour is, in this order: its ``X-Rag-Behaviour`` header; the
next one queued for its question; the next one queued for any request; ``ok``.
Queue them with ``POST /control``::

    {"queue": ["500", "ok"]}                      # the next two requests, whatever they ask
    {"by_question": {"What is Beacon?": ["hang"]}}  # the next request with exactly this question
    {"reset": true}                               # clear the queues and the request log

or in Python with ``server.behave("500", "ok")`` / ``server.behave("hang", question="...")``.

A suite's mapping for ``ragmeter run`` (JMESPath)::

    response: {retrieved: data.retrieved, answer: data.answer, references: data.references,
               abstained: data.abstained, folder_mode: data.folder_mode,
               selected_folders: data.selected_folders, timings: data.timings, tokens: data.tokens}

Other test folders load this file by path (there is no package)::

    spec = importlib.util.spec_from_file_location("pipeline_rag_server", PATH_TO_THIS_FILE)
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

from ragmeter.errors import RagmeterError
from ragmeter.pipeline import ReferencePipeline

SERVER_NAME = "ragmeter-test-rag"
BEHAVIOUR_HEADER = "X-Rag-Behaviour"
MAX_HANG_SECONDS = 60.0


@dataclass(frozen=True)
class Behaviour:
    """What to do with one request (parsed from ``"slow:200,empty"`` and the like)."""

    delay: float = 0.0
    status: int | None = None
    hang: float | None = None
    malformed: bool = False
    empty: bool = False
    text: str = "ok"

    @classmethod
    def parse(cls, text: str) -> Behaviour:
        """Parse a comma-separated behaviour; ``ValueError`` names the part that is wrong."""
        delay, status, hang, malformed, empty = 0.0, None, None, False, False
        for raw in text.split(","):
            part = raw.strip().lower()
            name, _, arg = part.partition(":")
            if part in ("", "ok"):
                continue
            if part.isdigit():
                name, arg = "status", part
            if name == "slow" and arg.isdigit():
                delay = int(arg) / 1000.0
            elif name == "status" and arg.isdigit() and 100 <= int(arg) <= 599:
                status = int(arg)
            elif name == "hang" and (not arg or arg.isdigit()):
                hang = int(arg) / 1000.0 if arg else MAX_HANG_SECONDS
            elif part == "malformed":
                malformed = True
            elif part == "empty":
                empty = True
            else:
                raise ValueError(
                    f"unknown behaviour {raw.strip()!r} "
                    "(expected ok, slow:<ms>, status:<code>, <code>, hang, hang:<ms>, malformed, empty)"
                )
        return cls(delay, status, hang, malformed, empty, text.strip() or "ok")


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    question: str | None
    k: int | None
    body: Any
    headers: dict[str, str]
    behaviour: str
    at: float

    def to_json(self) -> dict[str, Any]:
        """A JSON-able view (for ``GET /requests``)."""
        return {
            "method": self.method,
            "path": self.path,
            "question": self.question,
            "k": self.k,
            "body": self.body,
            "headers": self.headers,
            "behaviour": self.behaviour,
            "at": self.at,
        }


@dataclass
class _State:
    queue: deque[str] = field(default_factory=deque)
    by_question: dict[str, deque[str]] = field(default_factory=dict)
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


class RagServer:
    """The RAG service over a vault; a context manager that starts and stops it."""

    def __init__(self, vault_path: str | Path, *, host: str = "127.0.0.1", **pipeline_settings: Any) -> None:
        self.pipeline = ReferencePipeline({"vault": Path(vault_path), **pipeline_settings})
        self.host = host
        self.stopping = threading.Event()
        self._state = _State()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> RagServer:
        """Build the index, bind an ephemeral port and serve in a daemon thread."""
        self.pipeline.build_index()
        self.stopping.clear()
        server = ThreadingHTTPServer((self.host, 0), _handler_class(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="rag-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging and sleeping requests, stop serving and close the socket."""
        self.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> RagServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The base URL, e.g. ``http://127.0.0.1:40123`` (no trailing slash)."""
        if self._server is None:
            raise RuntimeError("the server is not running")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def ask_url(self) -> str:
        """The URL of the ``/ask`` endpoint."""
        return f"{self.url}/ask"

    # -- control ---------------------------------------------------------------------------------
    def behave(self, *behaviours: str, question: str | None = None) -> None:
        """Queue behaviours for the next requests (of one ``question``, or of any)."""
        for text in behaviours:
            Behaviour.parse(text)
        with self._state.lock:
            if question is None:
                self._state.queue.extend(behaviours)
            else:
                self._state.by_question.setdefault(question, deque()).extend(behaviours)

    def reset(self) -> None:
        """Forget queued behaviours and recorded requests."""
        with self._state.lock:
            self._state.queue.clear()
            self._state.by_question.clear()
            self._state.requests.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests to ``/ask`` so far, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    def _next_behaviour(self, header: str | None, question: str | None) -> str:
        with self._state.lock:
            if header:
                return header
            queued = self._state.by_question.get(question or "")
            if queued:
                return queued.popleft()
            if self._state.queue:
                return self._state.queue.popleft()
        return "ok"

    def _record(self, request: RecordedRequest) -> int:
        with self._state.lock:
            self._state.requests.append(request)
            return len(self._state.requests)

    def _control(self, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise ValueError("control body must be a JSON object")
        if body.get("reset"):
            self.reset()
        queue = body.get("queue", [])
        by_question = body.get("by_question", {})
        if not isinstance(queue, list) or not all(isinstance(b, str) for b in queue):
            raise ValueError("'queue' must be a list of behaviour strings")
        if not isinstance(by_question, dict):
            raise ValueError("'by_question' must map questions to lists of behaviour strings")
        self.behave(*queue)
        for question, items in by_question.items():
            if not isinstance(items, list) or not all(isinstance(b, str) for b in items):
                raise ValueError(f"by_question[{question!r}] must be a list of behaviour strings")
            self.behave(*items, question=question)
        return self._control_view()

    def _control_view(self) -> dict[str, Any]:
        with self._state.lock:
            return {
                "queue": list(self._state.queue),
                "by_question": {q: list(v) for q, v in self._state.by_question.items() if v},
                "requests": len(self._state.requests),
            }


def _handler_class(server: RagServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = SERVER_NAME

        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet."""

        # -- plumbing ----------------------------------------------------------------------------
        def _send(self, status: int, payload: Any = None, *, raw: bytes | None = None) -> None:
            body = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _read_json(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return None
            return json.loads(raw)

        # -- routes ------------------------------------------------------------------------------
        def do_GET(self) -> None:
            parsed = urllib.parse.urlsplit(self.path)
            if parsed.path == "/health":
                self._send(200, {"status": "ok"})
            elif parsed.path == "/requests":
                self._send(200, [r.to_json() for r in server.requests])
            elif parsed.path == "/control":
                self._send(200, server._control_view())
            elif parsed.path == "/ask":
                params = dict(urllib.parse.parse_qsl(parsed.query))
                self._ask(params, body=params)
            else:
                self._send(404, {"error": f"no route {parsed.path}"})

        def do_POST(self) -> None:
            path = urllib.parse.urlsplit(self.path).path
            try:
                body = self._read_json()
            except (ValueError, UnicodeDecodeError) as exc:
                self._send(400, {"error": f"request body is not JSON: {exc}"})
                return
            if path == "/ask":
                self._ask(body, body=body)
            elif path == "/control":
                try:
                    self._send(200, server._control(body))
                except ValueError as exc:
                    self._send(400, {"error": str(exc)})
            else:
                self._send(404, {"error": f"no route {path}"})

        def _ask(self, params: Any, *, body: Any) -> None:
            question = params.get("question") if isinstance(params, dict) else None
            raw_k = params.get("k", 5) if isinstance(params, dict) else 5
            k: int | None = None
            error: str | None = None
            if not isinstance(question, str) or not question.strip():
                error = "'question' must be a non-empty string"
            else:
                try:
                    k = int(raw_k)
                except (TypeError, ValueError):
                    error = f"'k' must be a whole number >= 1, got {raw_k!r}"
                if k is not None and (k < 1 or isinstance(raw_k, bool)):
                    error = f"'k' must be a whole number >= 1, got {raw_k!r}"
            header = self.headers.get(BEHAVIOUR_HEADER)
            text = server._next_behaviour(header, question if isinstance(question, str) else None)
            request_id = server._record(
                RecordedRequest(
                    self.command,
                    self.path,
                    question if isinstance(question, str) else None,
                    k,
                    body,
                    {key: value for key, value in self.headers.items()},
                    text,
                    time.time(),
                )
            )
            try:
                behaviour = Behaviour.parse(text)
            except ValueError as exc:
                self._send(400, {"error": str(exc)})
                return
            if behaviour.delay and server.stopping.wait(behaviour.delay):
                self.close_connection = True
                return
            if behaviour.hang is not None:
                server.stopping.wait(behaviour.hang)
                self.close_connection = True
                return
            if behaviour.status is not None:
                self._send(behaviour.status, {"error": f"injected HTTP {behaviour.status}"})
                return
            if behaviour.malformed:
                self._send(200, raw=b'{"data": {"retrieved": [{"id": "broken", ')
                return
            if error is not None or k is None or not isinstance(question, str):
                self._send(400, {"error": error or "bad request"})
                return
            try:
                output = server.pipeline.answer(question, k=k)
            except RagmeterError as exc:
                self._send(400, {"error": str(exc)})
                return
            if behaviour.empty:
                output = {**output, "retrieved": [], "answer": "", "references": []}
            meta = {
                "request_id": request_id,
                "server": SERVER_NAME,
                "index_version": server.pipeline.index_stats.index_version,
                "behaviour": behaviour.text,
            }
            self._send(200, {"data": output, "meta": meta})

    return Handler


@contextmanager
def serve_rag(vault_path: str | Path, **pipeline_settings: Any) -> Iterator[str]:
    """Serve the reference pipeline over ``vault_path`` on 127.0.0.1; yield the base URL."""
    with RagServer(vault_path, **pipeline_settings) as server:
        yield server.url
