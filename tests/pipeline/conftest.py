"""Fixtures for the pipeline tests: the demo vault, small vaults on disk, the test RAG server.

``rag_server.py`` is loaded by path and registered as ``pipeline_rag_server`` so
test modules here can ``import pipeline_rag_server``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
VAULT = EXAMPLES / "vault"
DATASET = EXAMPLES / "tests.yaml"

_PATH = Path(__file__).with_name("rag_server.py")
_spec = importlib.util.spec_from_file_location("pipeline_rag_server", _PATH)
assert _spec is not None and _spec.loader is not None
rag_server_module = importlib.util.module_from_spec(_spec)
sys.modules["pipeline_rag_server"] = rag_server_module
_spec.loader.exec_module(rag_server_module)


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Write ``{rel_path: text}`` under a fresh folder and return it."""

    def make(notes: dict[str, str]) -> Path:
        root = tmp_path / "vault"
        root.mkdir(exist_ok=True)
        for rel_path, text in notes.items():
            path = root / rel_path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return root

    return make


@pytest.fixture(scope="session")
def demo_server() -> Iterator[object]:
    """One RAG server over the demo vault for the whole session."""
    with rag_server_module.RagServer(VAULT) as server:
        yield server
