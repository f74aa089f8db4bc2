"""docs/harness.md documents every suite key and every option of `ragmeter run`."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from pydantic import BaseModel

from ragmeter.harness.framework_suite import FRAMEWORK_SYSTEMS, MetadataMapping
from ragmeter.harness.suite import BuiltinSystem, HttpSystem, PythonSystem, Suite

DOC = Path(__file__).resolve().parents[2] / "docs" / "harness.md"


@pytest.mark.parametrize("model", [Suite, HttpSystem, PythonSystem, BuiltinSystem])
def test_harness_docs_name_every_suite_key(model: type[BaseModel]) -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in model.model_fields if f"`{name}`" not in text and f"{name}:" not in text]
    assert not missing, f"docs/harness.md does not document {model.__name__} keys {missing}"


def test_harness_docs_name_every_run_option() -> None:
    from ragmeter.cli import run_cmd

    text = DOC.read_text(encoding="utf-8")
    names = [p.name.replace("_", "-") for p in inspect.signature(run_cmd.run_command).parameters.values()]
    flags = [f"--{n}" for n in names if n not in {"suite", "as-json", "quiet"}] + ["--json", "-q"]
    missing = [flag for flag in flags if flag not in text]
    assert not missing, f"docs/harness.md does not mention {missing}"


@pytest.mark.parametrize("model", [*FRAMEWORK_SYSTEMS.values(), MetadataMapping])
def test_framework_docs_name_every_suite_key(model: type[BaseModel]) -> None:
    text = (DOC.parent / "frameworks.md").read_text(encoding="utf-8")
    missing = [name for name in model.model_fields if f"`{name}`" not in text and f"{name}:" not in text]
    assert not missing, f"docs/frameworks.md does not document {model.__name__} keys {missing}"
