"""Fixtures of the judge tests: a scripted OpenAI-compatible server on 127.0.0.1.

``chat_server.py`` is loaded by path and registered as ``judge_chat_server`` so
test modules here can ``import judge_chat_server as cs`` (pytest runs with
``--import-mode=importlib``, so sibling modules are not importable by name).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_PATH = Path(__file__).with_name("chat_server.py")
_spec = importlib.util.spec_from_file_location("judge_chat_server", _PATH)
assert _spec is not None and _spec.loader is not None
chat_server_module = importlib.util.module_from_spec(_spec)
sys.modules["judge_chat_server"] = chat_server_module
_spec.loader.exec_module(chat_server_module)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "bertscore_model: loads the bundled all-MiniLM-L6-v2 weights (offline, a few seconds)"
    )


@pytest.fixture
def chat_server() -> Iterator[Callable[..., Any]]:
    """Factory: ``chat_server(script, models=("test-judge",))`` -> a started ChatServer."""
    servers: list[Any] = []

    def start(script: Any, **kwargs: Any) -> Any:
        server = chat_server_module.ChatServer(script, **kwargs).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def judge_config(tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """Factory: a fast ``judge:`` mapping for a server (tiny backoff, short timeout, a temp cache)."""

    def make(server: Any, **overrides: Any) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "base_url": server.base_url,
            "model": "test-judge",
            "seed": 7,
            "max_tokens": 256,
            "concurrency": 1,
            "timeout_s": 2.0,
            "max_retries": 2,
            "retry_base_delay_s": 0.01,
            "retry_max_delay_s": 1.0,
            "cache_path": str(tmp_path / "judge_cache.sqlite"),
        }
        cfg.update(overrides)
        return cfg

    return make
