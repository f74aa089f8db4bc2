"""Fixtures for the harness tests: a scripted JSON server on 127.0.0.1, datasets and suites on disk."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

HERE = Path(__file__).resolve().parent

# The JMESPath mapping from the server's (deliberately different) response shape to the output contract.
RESPONSE_MAPPING = {
    "retrieved": "data.chunks[].{id: chunk_id, rel_path: path, heading_path: heading, text: content, score: score}",
    "answer": "data.reply",
    "abstained": "data.gave_up",
    "references": "data.citations[].{rel_path: path, heading_path: heading}",
    "timings": "data.stage_seconds",
    "tokens": "data.usage.{prompt: prompt_tokens, completion: completion_tokens}",
}


@dataclass
class Request:
    """One request the server received."""

    qid: str | None
    body: Any
    headers: dict[str, str]
    at: float


@dataclass
class ScriptedServer:
    """A JSON server whose behaviour per question id is scripted; it logs every request."""

    host: str = "127.0.0.1"
    port: int = 0
    requests: list[Request] = field(default_factory=list)
    script: dict[str, list[Any]] = field(default_factory=dict)
    delay: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)
    inflight: int = 0
    max_inflight: int = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/ask"

    def behave(self, qid: str, *steps: Any) -> None:
        """Steps, one per request for ``qid``: "ok", 500, 503, (429, retry_after), "hang", "malformed", ("slow", s)."""
        self.script[qid] = list(steps)

    def asked(self, qid: str) -> int:
        with self.lock:
            return sum(1 for r in self.requests if r.qid == qid)

    def ids(self) -> list[str | None]:
        with self.lock:
            return [r.qid for r in self.requests]


def answer_for(qid: str, question: str) -> dict[str, Any]:
    n = int(qid.split("-")[1]) if "-" in qid else 0
    return {
        "data": {
            "reply": f"answer to {question}",
            "gave_up": False,
            "chunks": [
                {
                    "chunk_id": f"doc-{n}",
                    "path": f"notes/{n}.md",
                    "heading": "Top > Sub",
                    "content": "x",
                    "score": 2.0,
                },
                {"chunk_id": "doc-x", "path": "notes/x.md", "heading": "Other", "content": "y", "score": 1.0},
            ],
            "citations": [{"path": f"notes/{n}.md", "heading": "Top"}],
            "stage_seconds": {"retrieval": 0.01, "generation": 0.02},
            "usage": {"prompt_tokens": 11, "completion_tokens": 3},
        }
    }


def _make_handler(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # silence the default stderr log
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._handle(json.loads(self.rfile.read(length) or b"null"))

        def do_GET(self) -> None:
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            self._handle({key: values[0] for key, values in query.items()})

        def _handle(self, body: Any) -> None:
            qid = body.get("id") if isinstance(body, dict) else None
            with server.lock:
                server.requests.append(Request(qid, body, dict(self.headers.items()), time.monotonic()))
                steps = server.script.get(str(qid))
                step = steps.pop(0) if steps else "ok"
                server.inflight += 1
                server.max_inflight = max(server.max_inflight, server.inflight)
            try:
                if server.delay:
                    server.stop.wait(server.delay)
                self._respond(step, str(qid), body)
            except (BrokenPipeError, ConnectionResetError):
                pass
            finally:
                with server.lock:
                    server.inflight -= 1

        def _respond(self, step: Any, qid: str, body: Any) -> None:
            if step == "hang":
                server.stop.wait(10)
                return
            if isinstance(step, tuple) and step[0] == "slow":
                server.stop.wait(step[1])
                step = "ok"
            if isinstance(step, tuple) and step[0] == 429:
                self._send(429, b'{"error": "slow down"}', {"Retry-After": str(step[1])})
            elif isinstance(step, int):
                self._send(step, b'{"error": "boom"}')
            elif step == "malformed":
                self._send(200, b'{"data": {"reply": "cut')
            elif step == "echo-auth":
                echoed = {"data": {"reply": f"you sent {self.headers.get('Authorization')}", "chunks": []}}
                self._send(200, json.dumps(echoed).encode())
            elif step == "401-echo":
                self._send(
                    401, json.dumps({"error": f"bad token {self.headers.get('Authorization')}"}).encode()
                )
            else:
                question = body.get("q") or body.get("question") or ""
                self._send(200, json.dumps(answer_for(qid, question)).encode())

    return Handler


@pytest.fixture
def rag_server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(scripted))
    httpd.daemon_threads = True
    scripted.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield scripted
    finally:
        scripted.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 with nothing listening (connections are refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_dataset(folder: Path, n: int, name: str = "tests.yaml") -> Path:
    samples = [
        {"id": f"q-{i}", "input": {"question": f"question {i}?"}, "expected_output": [f"doc-{i}"]}
        for i in range(1, n + 1)
    ]
    path = folder / name
    path.write_text(yaml.safe_dump({"samples": samples}, sort_keys=False), encoding="utf-8")
    return path


def write_suite(folder: Path, system: dict[str, Any], **fields: Any) -> Path:
    data: dict[str, Any] = {
        "name": "t",
        "dataset": "tests.yaml",
        "system": system,
        "metrics": ["hit@2", "mrr"],
        "k": 2,
        "concurrency": 2,
        "timeout_seconds": 2,
        "retries": 2,
        "backoff_seconds": 0.01,
        "results_dir": "out",
    }
    data.update(fields)
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def http_system(url: str, **fields: Any) -> dict[str, Any]:
    system: dict[str, Any] = {
        "type": "http",
        "url": url,
        "body": {"id": "{{ id }}", "q": "{{ question }}", "top_k": "{{ k }}"},
        "response": RESPONSE_MAPPING,
    }
    system.update(fields)
    return system


def read_outputs(path: Path) -> dict[str, dict[str, Any]]:
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), f"duplicate ids in {path}: {ids}"
    return {r["id"]: r["output"] for r in records}


@pytest.fixture
def h() -> SimpleNamespace:
    """The helpers above, as a fixture (test modules cannot import conftest by name)."""
    return SimpleNamespace(
        write_dataset=write_dataset,
        write_suite=write_suite,
        http_system=http_system,
        read_outputs=read_outputs,
        here=HERE,
    )
