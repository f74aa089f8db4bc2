"""The sandbox that runs solver code: isolation, limits, fallback, and refusing to run without one.

Tests that need bubblewrap skip with a loud reason where it cannot run (``make test`` installs it).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ragmeter.errors import ConfigError
from ragmeter.mining import sandbox as sandbox_module
from ragmeter.mining.registry import BenchmarkSpec
from ragmeter.mining.sandbox import SandboxInfo, SandboxLimits, probe, run_sandboxed
from ragmeter.mining.session import build_validator
from ragmeter.mining.validators import GroundTruth, PytestValidator, ValidatorError

PROBE_CODE = """
import os, socket, sys
result = []
for target in sys.argv[1:3]:
    try:
        with open(target, "w") as handle:
            handle.write("escaped")
        result.append("write-ok")
    except OSError as exc:
        result.append("write-blocked")
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[3])), timeout=3).close()
    result.append("socket-ok")
except OSError:
    result.append("socket-blocked")
with open("inside.txt", "w") as handle:
    handle.write("ok")
result.append("workdir-ok")
print(" ".join(result))
"""


@pytest.mark.usefixtures("needs_bwrap")
def test_bwrap_blocks_writes_outside_and_the_network(
    tmp_path: Path, listener: tuple[int, list[object]]
) -> None:
    port, accepted = listener
    info = probe("bwrap")
    outside = tmp_path / "outside" / "escaped.txt"
    outside.parent.mkdir()
    workdir = tmp_path / "work"
    workdir.mkdir()
    venv_target = Path(sys.prefix) / "ragmeter-escape-test.txt"
    try:
        result = run_sandboxed(
            [sys.executable, "-c", PROBE_CODE, str(outside), str(venv_target), str(port)],
            workdir,
            limits=SandboxLimits(timeout_s=60),
            info=info,
        )
        escaped_into_venv = venv_target.exists()
    finally:
        venv_target.unlink(missing_ok=True)
    assert result.started and result.returncode == 0, result.output
    assert result.output.split() == ["write-blocked", "write-blocked", "socket-blocked", "workdir-ok"]
    assert not outside.exists() and not escaped_into_venv
    assert accepted == []
    assert (workdir / "inside.txt").read_text() == "ok"


@pytest.mark.usefixtures("needs_bwrap")
def test_bwrap_enforces_wall_memory_and_process_limits(tmp_path: Path) -> None:
    info = probe("bwrap")
    slow = run_sandboxed(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        tmp_path,
        limits=SandboxLimits(timeout_s=1.5),
        info=info,
    )
    assert slow.timed_out and slow.duration_s < 20
    hog = run_sandboxed(
        [sys.executable, "-c", "x = bytearray(1500 * 1024 * 1024)"],
        tmp_path,
        limits=SandboxLimits(memory_mb=512),
        info=info,
    )
    assert hog.returncode != 0 and "MemoryError" in hog.output
    if info.runs_as == "root":
        pytest.skip("the process limit is not enforced for root here: " + "; ".join(info.notes))
    fork_code = (
        "import os, time\nn = 0\ntry:\n    for _ in range(200):\n        if os.fork() == 0:\n"
        "            time.sleep(2); os._exit(0)\n        n += 1\nexcept OSError:\n    print('limited', n)\n"
    )
    forks = run_sandboxed(
        [sys.executable, "-c", fork_code], tmp_path, limits=SandboxLimits(max_processes=16), info=info
    )
    assert "limited" in forks.output, forks.output


def test_unshare_fallback_blocks_the_network(tmp_path: Path, listener: tuple[int, list[object]]) -> None:
    info = probe("unshare")
    if info.kind != "unshare":
        pytest.skip(f"FALLBACK SANDBOX TEST SKIPPED: unshare cannot run here ({info.reason})")
    port, accepted = listener
    result = run_sandboxed(
        [sys.executable, "-c", PROBE_CODE, str(tmp_path / "a"), str(tmp_path / "b"), str(port)],
        tmp_path,
        limits=SandboxLimits(timeout_s=60),
        info=info,
    )
    assert "socket-blocked" in result.output and accepted == []
    assert "filesystem NOT isolated" in " ".join(info.notes)  # and the provenance says so
    assert info.to_dict()["kind"] == "unshare"


def test_untrusted_code_never_runs_without_a_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    unavailable = SandboxInfo("unavailable", [], "bubblewrap is not installed", runs_as=None)
    monkeypatch.setattr(
        "ragmeter.mining.session.probe", lambda mode: unavailable if mode != "none" else probe("none")
    )
    bench = BenchmarkSpec.model_validate(
        {
            "name": "b",
            "corpus": "c",
            "validator": {"kind": "pytest"},
            "questions": [{"id": "q", "question": "q"}],
        }
    )
    with pytest.raises(ConfigError, match="--unsafe-no-sandbox"):
        build_validator(bench, unsafe_no_sandbox=False, sandbox_cache={})
    validator = build_validator(bench, unsafe_no_sandbox=True, sandbox_cache={})
    assert isinstance(validator, PytestValidator) and validator.sandbox.kind == "none"
    assert validator.sandbox.to_dict()["description"].startswith("UNSANDBOXED")
    with pytest.raises(ConfigError, match="no sandbox can run here"):
        run_sandboxed(["true"], ".", limits=SandboxLimits(), info=unavailable)


TESTS = b"from solution import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def pytest_validator(needs_bwrap: None) -> PytestValidator:
    return PytestValidator(probe("bwrap"), SandboxLimits(timeout_s=30, cpu_s=20))


@pytest.mark.parametrize(
    ("reply", "passed", "outcome"),
    [
        ("```python\ndef add(a, b):\n    return a + b\n```", True, "passed"),
        ("def add(a, b):\n    return a - b\n", False, "failed"),
        ("def add(a, b) return a\n", False, "failed"),  # syntax error: a collection error
        ("import time\n\ndef add(a, b):\n    while True:\n        pass\n", False, "timeout"),
    ],
)
def test_pytest_validator_outcomes(
    pytest_validator: PytestValidator, reply: str, passed: bool, outcome: str
) -> None:
    validator = pytest_validator
    if outcome == "timeout":
        validator = PytestValidator(validator.sandbox, SandboxLimits(timeout_s=4, cpu_s=2))
    result = validator.validate(reply, GroundTruth(test_files=(("test_add.py", TESTS),)))
    assert result.passed is passed, result.detail
    if outcome == "timeout":  # the CPU limit (2 s) or the wall clock ends it, whichever comes first
        assert result.detail["outcome"] in ("timeout", "crashed")
    else:
        assert result.detail["outcome"] == outcome
    assert result.detail["sandbox"].startswith("bwrap")


def test_a_benchmark_without_tests_is_not_a_fail(pytest_validator: PytestValidator) -> None:
    with pytest.raises(ValidatorError, match="no tests collected"):
        pytest_validator.validate("x = 1", GroundTruth(test_files=(("test_none.py", b"x = 1\n"),)))


def test_probe_is_cached() -> None:
    assert probe("auto") is probe("auto")
    assert sandbox_module.describe(probe("none")).startswith("UNSANDBOXED")
