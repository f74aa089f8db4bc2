"""`ragmeter synth` refuses bad input in one line, before it writes, opens or deletes anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

GENERATOR = (
    "generator: {kind: python, function: 'json:dumps'}\nsolver: {kind: python, function: 'json:dumps'}\n"
)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# A\n\n## B\n\nThe Orion budget is 5200 EUR for the year.\n")
    return tmp_path / "notes"


@pytest.mark.parametrize(
    ("config", "args", "fragments"),
    [
        (
            GENERATOR + "filters:\n  bertscore_treshold: 0.9\n",
            [],
            ["synth.yaml:4", "filters.bertscore_treshold", "bertscore_threshold"],
        ),
        (GENERATOR + "n: 0\n", [], ["synth.yaml:3", "n:"]),
        (GENERATOR, ["--categories", "factual,trivia"], ["--categories", "trivia"]),
        (
            GENERATOR + "prompt_versions: {synth_factual: v9}\n",
            [],
            ["synth_factual.v9.md", "prompt_versions"],
        ),
        (
            "generator: {kind: python, function: 'nowhere_at_all:f'}\nsolver: {kind: python, function: 'json:dumps'}\n",
            [],
            ["generator.function", "nowhere_at_all"],
        ),
        ("generator: {kind: python, function: 'json:dumps'}\n", [], ["a python generator needs a solver"]),
        (
            "generator: {base_url: 'http://127.0.0.1:9/v1', model: m, api_key_env: RAGMETER_NO_SUCH_KEY}\n",
            [],
            ["RAGMETER_NO_SUCH_KEY"],
        ),
    ],
)
def test_bad_settings_are_refused(
    refused: Any, tmp_path: Path, vault: Path, config: str, args: list[str], fragments: list[str]
) -> None:
    (tmp_path / "synth.yaml").write_text(config, encoding="utf-8")
    refused(["synth", "notes", "--config", "synth.yaml", "--out", "out/tests.yaml", *args], *fragments)


def test_a_missing_corpus_and_an_earlier_run_are_refused(refused: Any, tmp_path: Path, vault: Path) -> None:
    (tmp_path / "synth.yaml").write_text(GENERATOR, encoding="utf-8")
    refused(
        ["synth", "missing", "--config", "synth.yaml", "--out", "out/tests.yaml"],
        "missing",
        "corpus not found",
    )
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "tests.yaml").write_text("samples: []\n")
    refused(
        ["synth", "notes", "--config", "synth.yaml", "--out", "out/tests.yaml"], "out/tests.yaml", "--resume"
    )
    # --fresh with a bad corpus deletes nothing
    refused(
        ["synth", "missing", "--config", "synth.yaml", "--out", "out/tests.yaml", "--fresh"],
        "corpus not found",
    )
    refused(["synth", "notes", "--config", "synth.yaml", "--out", "out"], "out", "directory")


def test_a_corpus_with_nothing_to_ask_about_is_refused(refused: Any, tmp_path: Path) -> None:
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "a.md").write_text("# A\n\nToo short.\n")
    (tmp_path / "synth.yaml").write_text(GENERATOR, encoding="utf-8")
    refused(
        ["synth", "tiny", "--config", "synth.yaml", "--out", "out/tests.yaml"],
        "tiny",
        "corpus.min_source_tokens",
    )
