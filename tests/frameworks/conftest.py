"""Fixtures for the framework tests: the systems over the example vault, scripted chat servers, no phoning home.

The frameworks' telemetry and remote look-ups are switched off here, before any of them
is imported (Haystack's usage telemetry, LiteLLM's model price list, LangSmith tracing,
DSPy's disk cache in the home folder); ``_no_remote_lookups`` then fails any test during
which a library tried to resolve a host name outside the loopback range.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import socket
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

for _name, _value in {
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "DSPY_CACHEDIR": tempfile.mkdtemp(prefix="ragmeter-dspy-cache-"),
}.items():
    os.environ.setdefault(_name, _value)

HERE = Path(__file__).resolve().parent
SYSTEMS = HERE / "systems"
collect_ignore_glob = ["systems/*.py"]  # imported by the suites under their own names, never for doctests

EXTRAS = {  # framework -> (module to import, ragmeter extra)
    "langchain": ("langchain_core", "langchain"),
    "llamaindex": ("llama_index.core", "llamaindex"),
    "haystack": ("haystack", "haystack"),
    "dspy": ("dspy", "dspy"),
}
SYSTEM_MODULES = {
    "langchain": "lc_vault",
    "llamaindex": "li_vault",
    "haystack": "hs_vault",
    "dspy": "dspy_vault",
}


def _load_chat_server() -> ModuleType:
    path = HERE.parent / "judges" / "chat_server.py"
    spec = importlib.util.spec_from_file_location("ragmeter_test_chat_server", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


chat_server = _load_chat_server()


@pytest.fixture(autouse=True)
def _no_remote_lookups(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    looked_up: list[str] = []
    original = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in (None, "localhost", "127.0.0.1", "::1") and not str(host).startswith("127."):
            looked_up.append(str(host))
        return original(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield
    assert not looked_up, f"a library tried to reach the network: {sorted(set(looked_up))}"


def _reply(request: dict[str, Any]) -> Any:
    """The scripted generator: an answer with usage; a 500 or a hang for marked questions."""
    text = str(request.get("messages"))
    if "FAIL-500" in text:
        return chat_server.server_error()
    if "HANG" in text:
        return chat_server.hang(8.0, then=chat_server.ok("late"))
    return chat_server.Reply(content="See the notes.", usage=(52, 7), model="scripted-model")


@pytest.fixture(scope="session")
def chat_url() -> Iterator[str]:
    """A scripted OpenAI-compatible server (it fails on questions marked FAIL-500 or HANG)."""
    with chat_server.serve(_reply) as server:
        os.environ["RAGMETER_TEST_CHAT_URL"] = server.base_url
        yield server.base_url


@pytest.fixture(scope="session")
def framework_system(chat_url: str) -> Callable[[str], ModuleType]:
    """``framework_system(name)``: the module holding that framework's systems (skipped without its extra)."""

    def load(framework: str) -> ModuleType:
        module, extra = EXTRAS[framework]
        pytest.importorskip(
            module, reason=f"the {extra} extra is not installed (pip install 'ragmeter[{extra}]')"
        )
        if str(SYSTEMS) not in sys.path:
            sys.path.insert(0, str(SYSTEMS))
        return importlib.import_module(SYSTEM_MODULES[framework])

    return load
