"""The robustness suite's one check: a bad input is refused cleanly.

Every case in ``tests/robustness/`` runs one ``ragmeter`` command in this process on a bad input
and asserts, through :func:`refused`:

- exit code 2;
- exactly one non-empty line on stderr, starting with ``Error:``, that names the file, line or
  field (each case gives the fragments it must contain);
- no traceback and no "internal error";
- no output file left behind or changed: every file under the case's folder is the same before
  and after the command (a new file, a changed one or a missing one fails the case).

Valid-but-odd inputs use :func:`accepted` instead: exit 0 and the same folder rules do not apply.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest


def snapshot(folder: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``folder``."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


Refused = Callable[..., str]


@pytest.fixture
def saved_results() -> Callable[[Path, dict[str, dict[str, float | None]]], Path]:
    """``saved_results(folder, per_query) -> folder``: a results folder written by ragmeter itself.

    Each metric's aggregate is the mean of its values (``None`` when no query has one).
    """
    from ragmeter.results import EvalResult

    def write(folder: Path, per_query: dict[str, dict[str, float | None]]) -> Path:
        names = list(dict.fromkeys(m for values in per_query.values() for m in values))
        scored = {m: [v for q in per_query.values() if (v := q.get(m)) is not None] for m in names}
        return EvalResult(
            aggregate={m: sum(vals) / len(vals) if vals else None for m, vals in scored.items()},
            per_query=per_query,
            n_queries=len(per_query),
            n_scored={m: len(vals) for m, vals in scored.items()},
            n_skipped={m: len(per_query) - len(vals) for m, vals in scored.items()},
        ).write(folder)

    return write


@pytest.fixture
def refused(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Refused:
    """``refused(argv, *fragments, folder=tmp_path) -> the error line``.

    Runs ``ragmeter ARGV`` with the case's folder as working directory and checks the rules in the
    module docstring; every fragment must appear in the error line (case-sensitive).
    """

    def check(argv: list[str], *fragments: str, folder: Path | None = None) -> str:
        where = folder or tmp_path
        monkeypatch.chdir(where)
        before = snapshot(where)
        code, out, err = cli([str(a) for a in argv])
        lines = [line for line in err.splitlines() if line.strip()]
        assert "Traceback" not in err, err
        assert "internal error" not in err, err
        assert code == 2, f"exit {code}; stdout={out[-500:]!r}; stderr={err[-500:]!r}"
        assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}: {err[-1000:]!r}"
        line = lines[0]
        assert line.startswith("Error: "), line
        for fragment in fragments:
            assert fragment in line, f"{fragment!r} not in {line!r}"
        assert snapshot(where) == before, "the command left a file behind or changed one"
        return line

    return check


@pytest.fixture
def accepted(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., str]:
    """``accepted(argv) -> stdout``: the command exits 0 with no error line."""

    def check(argv: Iterable[Any], folder: Path | None = None) -> str:
        monkeypatch.chdir(folder or tmp_path)
        code, out, err = cli([str(a) for a in argv])
        assert code == 0, f"exit {code}; stderr={err[-1000:]!r}"
        assert "Error:" not in err, err
        return out

    return check


@pytest.fixture
def results_folder() -> Callable[[Path], Path]:
    """``results_folder(path) -> path``: a valid results folder (``metrics.json`` + ``per_query.jsonl``).

    One query, ``mrr`` 0.5: what ``eval --out`` writes, to break one file of afterwards.
    """
    from ragmeter.results import EvalResult

    def write(folder: Path) -> Path:
        one = {"mrr": 1}
        return EvalResult(
            aggregate={"mrr": 0.5},
            per_query={"q1": {"mrr": 0.5}},
            n_queries=1,
            n_scored=one,
            n_skipped={"mrr": 0},
        ).write(folder)

    return write
