"""docs/agentic.md documents every option, trace field, label field and metric."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from pydantic import BaseModel

from ragmeter.agentic.labels import LabelRecord
from ragmeter.agentic.metrics import SERIES
from ragmeter.agentic.trace import Iteration, ResultRef, Search, SearchResult, Trace, Turn

DOC = Path(__file__).resolve().parents[2] / "docs" / "agentic.md"


@pytest.mark.parametrize("model", [Trace, Turn, Iteration, Search, SearchResult, ResultRef, LabelRecord])
def test_docs_name_every_field(model: type[BaseModel]) -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in model.model_fields if f"`{name}`" not in text]
    assert not missing, f"docs/agentic.md does not document {model.__name__} fields {missing}"


def test_docs_name_every_series() -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [s.name for s in SERIES if f"`{s.name}`" not in text]
    assert not missing, f"docs/agentic.md does not document series {missing}"
    assert "IterationsForAllGoodResults" in text


def test_docs_name_every_cli_option() -> None:
    from ragmeter.cli import agentic_cmd

    text = DOC.read_text(encoding="utf-8")
    names = [
        p.name.replace("_", "-") for p in inspect.signature(agentic_cmd.agentic_command).parameters.values()
    ]
    flags = [f"--{n}" for n in names if n not in {"as-json", "trace-format"}] + ["--json", "--format"]
    missing = [flag for flag in flags if flag not in text]
    assert not missing, f"docs/agentic.md does not mention {missing}"
