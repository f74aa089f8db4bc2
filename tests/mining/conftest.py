"""Fixtures of the mining tests: registries on disk, the scripted chat server, sandbox availability."""

from __future__ import annotations

import importlib.util
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

HERE = Path(__file__).resolve().parent

_CHAT = HERE.parent / "judges" / "chat_server.py"
if "mining_chat_server" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("mining_chat_server", _CHAT)
    assert _spec is not None and _spec.loader is not None
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["mining_chat_server"] = _module
    _spec.loader.exec_module(_module)


def bwrap_reason() -> str | None:
    """``None`` when the bubblewrap sandbox works here, else why not (tests that need it skip loudly)."""
    from ragmeter.mining.sandbox import probe

    info = probe("bwrap")
    if info.kind == "bwrap":
        return None
    return (
        "SANDBOX TESTS SKIPPED: bubblewrap cannot run here "
        f"({info.reason}); install it with 'apt-get install bubblewrap' (make test does)"
    )


def write_registry(folder: Path, data: dict[str, Any], name: str = "registry.yaml") -> Path:
    """Write a registry file and return its path."""
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def registry_writer() -> Any:
    """``registry_writer(folder, data, name="registry.yaml") -> path``."""
    return write_registry


@pytest.fixture
def corpus_writer() -> Any:
    """``corpus_writer(folder, n=8) -> path`` of a corpus with the planted document ``zz.planted``."""
    return planted_corpus


@pytest.fixture
def needs_bwrap() -> None:
    """Skip (loudly) when bubblewrap cannot run here."""
    reason = bwrap_reason()
    if reason is not None:
        pytest.skip(reason)


def planted_corpus(folder: Path, n: int = 8) -> Path:
    """A corpus file: ``zz.planted`` holds the secret answer, the rest are distractors."""
    lines = [
        '{"id": "zz.planted", "text": "zz.planted()\\n\\nThe secret launch code is 4417."}',
        *(
            f'{{"id": "aa.filler{i}", "text": "aa.filler{i}()\\n\\nReturns filler number {i} for tests."}}'
            for i in range(n - 1)
        ),
    ]
    path = folder / "docs.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def solvers_path() -> str:
    """The folder of ``mining_test_solvers.py`` (for ``python:`` solver hooks)."""
    return str(HERE)


def _accepting(server: socket.socket) -> Iterator[list[object]]:
    """Accept (and record) every connection to ``server`` until the generator is closed."""
    server.listen()
    server.settimeout(0.2)
    accepted: list[object] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield accepted
    finally:
        stop.set()
        thread.join(timeout=2)
        server.close()


@pytest.fixture
def listener() -> Iterator[tuple[int, list[object]]]:
    """A TCP listener on 127.0.0.1 that records every connection it accepts."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    port = server.getsockname()[1]
    for accepted in _accepting(server):
        yield port, accepted


@pytest.fixture
def abstract_listener() -> Iterator[tuple[str, list[object]]]:
    """A listener on an abstract UNIX socket (network namespaces keep these apart) that records connections."""
    name = f"ragmeter-test-{uuid.uuid4().hex}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    for accepted in _accepting(server):
        yield name, accepted
