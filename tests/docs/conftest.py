"""Fixtures of the doc tests: the rules of ``doc_blocks.py`` as a module, the scripted judge and the
http system under test.

``doc_blocks`` is registered as a module (pytest runs with ``--import-mode=importlib``), so the test
modules here can ``from doc_blocks import ...``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def _load(name: str, path: Path) -> Any:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


_load("doc_blocks", HERE / "doc_blocks.py")
chat_server = _load("docs_chat_server", HERE.parent / "judges" / "chat_server.py")
rag_server = _load("pipeline_rag_server", HERE.parent / "pipeline" / "rag_server.py")

JUDGE_MODELS = ("Qwen/Qwen2.5-14B-Instruct", "qwen2.5-14b-instruct", "gpt-4o-mini")
"""The models the docs' judge blocks name: the scripted server lists them all under /models."""


@pytest.fixture(scope="session")
def doc_judge() -> Iterator[str]:
    """The base URL of a scripted OpenAI-compatible judge that answers every ragmeter judge prompt."""
    server = chat_server.ChatServer(chat_server.any_judge, models=JUDGE_MODELS).start()
    yield server.base_url
    server.stop()


@pytest.fixture(scope="session")
def doc_system() -> Iterator[str]:
    """The ``/ask`` URL of an http RAG service (the reference pipeline over ``examples/vault``,
    its output under ``data``: ``tests/pipeline/rag_server.py``)."""
    with rag_server.RagServer(HERE.parents[1] / "examples" / "vault") as server:
        yield server.ask_url
