"""A pytest-validated benchmark whose solver's code tries to escape: inside the sandbox both fail.

The solver (a ``python:`` hook) answers with code that writes a file outside its work dir and
opens a socket to a listener on 127.0.0.1. The benchmark's test passes only when both were
blocked. With bubblewrap every trial passes and nothing reaches the host; with
``--unsafe-no-sandbox`` (for contrast) the file appears, the listener is reached and the test fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.cli import main
from ragmeter.mining.session import DesignOptions, mine

TEST_FILE = """
from solution import probe


def test_escape_attempts_are_blocked():
    assert probe() == {"write": "blocked", "socket": "blocked"}
"""


def _registry(tmp_path: Path, registry_writer: Any, solvers_path: str, target: Path, port: int) -> Path:
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests" / "test_escape.py").write_text(TEST_FILE)
    (tmp_path / "docs.jsonl").write_text('{"id": "a.one", "text": "one"}\n{"id": "a.two", "text": "two"}\n')
    return registry_writer(
        tmp_path,
        {
            "corpora": {"docs": {"file": "docs.jsonl"}},
            "solver": {
                "kind": "python",
                "function": "mining_test_solvers:escape_code",
                "python_path": [solvers_path],
                "kwargs": {"target": str(target), "port": port},
                "concurrency": 2,
            },
            "benchmarks": [
                {
                    "name": "escape",
                    "corpus": "docs",
                    "validator": {"kind": "pytest", "timeout_s": 60},
                    "candidates": {"distractors": 2},
                    "questions": [
                        {"id": "probe", "question": "Write probe().", "test_files": ["tests/test_escape.py"]}
                    ],
                }
            ],
        },
    )


@pytest.mark.usefixtures("needs_bwrap")
def test_sandboxed_escape_attempts_fail(
    tmp_path: Path, registry_writer: Any, solvers_path: str, listener: tuple[int, list[object]]
) -> None:
    port, accepted = listener
    target = tmp_path / "escaped.txt"
    registry = _registry(tmp_path, registry_writer, solvers_path, target, port)
    outcome = mine(registry, tmp_path / "out.yaml", design_options=DesignOptions(name="fixed", trials=3))
    [mined] = outcome.mined
    assert mined.conclusion is not None and mined.conclusion.passes == 3  # every trial: both blocked
    assert not target.exists() and accepted == []
    data = yaml.safe_load((tmp_path / "out.yaml").read_text())
    assert data["ragmeter_mining"]["sandbox"]["kind"] == "bwrap"
    assert data["pairs"][0]["verification"]["sandbox"].startswith("bwrap: own root")


def test_without_the_sandbox_the_same_code_escapes(
    tmp_path: Path, registry_writer: Any, solvers_path: str, listener: tuple[int, list[object]]
) -> None:
    port, accepted = listener
    target = tmp_path / "escaped.txt"
    registry = _registry(tmp_path, registry_writer, solvers_path, target, port)
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "mine",
                str(registry),
                "--out",
                str(tmp_path / "out.yaml"),
                "--design",
                "fixed",
                "--trials",
                "1",
                "--unsafe-no-sandbox",
                "-q",
            ]
        )
    assert exit_info.value.code == 0
    assert target.read_text() == "escaped" and len(accepted) == 1
    data = yaml.safe_load((tmp_path / "out.yaml").read_text())
    assert data["ragmeter_mining"]["sandbox"]["description"].startswith("UNSANDBOXED")
    assert data["pairs"][0]["verification"]["passes"] == 0


def test_without_a_sandbox_tool_mine_refuses_in_one_line(
    tmp_path: Path,
    registry_writer: Any,
    solvers_path: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = tmp_path / "escaped.txt"
    registry = _registry(tmp_path, registry_writer, solvers_path, target, 9)
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # neither bubblewrap nor unshare
    with pytest.raises(SystemExit) as exit_info:
        main(
            ["mine", str(registry), "--out", str(tmp_path / "out.yaml"), "--design", "fixed", "--trials", "1"]
        )
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: benchmark 'escape': no sandbox can run"), lines
    assert "bubblewrap is not installed (apt-get install bubblewrap)" in lines[0]
    assert not target.exists() and not (tmp_path / "out.yaml").exists()
