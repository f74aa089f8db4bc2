"""The CLI's last resort: an unexpected exception is still one ``Error:`` line (the traceback with --debug)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ragmeter.evaluation.trec
from ragmeter.cli import main


def _qrels_and_run(tmp_path: Path) -> list[str]:
    (tmp_path / "q").write_text("q 0 a 1\n")
    (tmp_path / "r").write_text("q Q0 a 1 1.0 t\n")
    return ["eval", "--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r"), "-m", "mrr"]


@pytest.mark.parametrize("extra", [[], ["--json"]])  # the full command, and the quick start
def test_a_defect_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any, extra: list[str]
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("something unforeseen")

    monkeypatch.setattr(ragmeter.evaluation.trec, "match_trec", broken)
    code, _, err = cli([*_qrels_and_run(tmp_path), *extra])
    assert code == 2
    assert err.strip() == (
        "Error: internal error (ValueError: something unforeseen); rerun with --debug for the traceback "
        "and please report it"
    )
    with pytest.raises(ValueError, match="something unforeseen"):
        main([*_qrels_and_run(tmp_path), *extra, "--debug"])


def test_an_os_error_names_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any) -> None:
    def unwritable(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", "/nowhere/out.json")

    monkeypatch.setattr(ragmeter.evaluation.trec, "match_trec", unwritable)
    code, _, err = cli(_qrels_and_run(tmp_path))
    assert (code, err.strip()) == (2, "Error: /nowhere/out.json: Permission denied")
