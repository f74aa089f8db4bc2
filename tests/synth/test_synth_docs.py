"""docs/synth.md documents every setting, every option of `ragmeter synth` and every rejection reason."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from pydantic import BaseModel

from ragmeter.synth.config import CorpusSettings, FilterSettings, SynthConfig, VerificationSettings
from ragmeter.synth.report import REASONS

DOC = Path(__file__).resolve().parents[2] / "docs" / "synth.md"


@pytest.mark.parametrize(
    ("model", "prefix"),
    [
        (SynthConfig, ""),
        (CorpusSettings, "corpus."),
        (VerificationSettings, "verification."),
        (FilterSettings, "filters."),
    ],
)
def test_every_setting_is_documented(model: type[BaseModel], prefix: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    documented = (f"`{prefix}{name}`" in text or f"`{prefix}{name}." in text for name in model.model_fields)
    missing = [
        name for name, ok in zip(model.model_fields, documented, strict=True) if not ok and name != "version"
    ]
    assert not missing, f"docs/synth.md does not document {missing}"


def test_every_option_and_reason_is_documented() -> None:
    from ragmeter.cli import synth_cmd

    text = DOC.read_text(encoding="utf-8")
    names = [p.name.replace("_", "-") for p in inspect.signature(synth_cmd.synth_command).parameters.values()]
    flags = [f"--{n}" for n in names if n not in {"corpus", "as-json", "verify"}] + [
        "--json",
        "--verify/--no-verify",
    ]
    assert not [flag for flag in flags if flag not in text]
    assert not [reason for reason in REASONS if f"| `{reason}` |" not in text]
