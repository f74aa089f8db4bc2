"""The sandbox that runs solver code: every mode confines the code or refuses, never runs it unconfined.

The escape probe (``sandbox_probe.py``) runs once per mode as solver code and tries every attempt
of the escape checklist; each must fail. CI runs this as root, the hardest case for the
process limit and for dropping privileges. A mode whose tool is not installed skips, saying so;
a mode whose tool works but cannot build a sandbox here must refuse, in one line.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragmeter.errors import ConfigError
from ragmeter.mining import sandbox as sandbox_module
from ragmeter.mining.registry import BenchmarkSpec
from ragmeter.mining.sandbox import SandboxInfo, SandboxLimits, probe, run_sandboxed
from ragmeter.mining.session import build_validator
from ragmeter.mining.validators import GroundTruth, PytestValidator, ValidatorError

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent.parent
PROBE_LIMITS = SandboxLimits(timeout_s=120, cpu_s=1, memory_mb=256, max_processes=16, file_size_mb=1)
MODES = ["bwrap", "unshare", "auto", "auto without bwrap"]
SURVIVOR = """
import fcntl, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        handle = open("survivor.lock", "w")
        fcntl.flock(handle, fcntl.LOCK_EX)
        print("locked", flush=True)
        while True:
            time.sleep(60)
    os._exit(0)
time.sleep(600)
"""


def _raw_namespaces_work(tool: str) -> bool:
    """Can this process make the namespaces at all (without ragmeter)? Decides skip versus failure."""
    program = [sys.executable, "-c", "pass"]
    if tool == "bwrap":
        args = ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--", *program]
    else:
        user = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
        args = ["unshare", *user, "--mount", "--net", "--pid", "--fork", *program]
    return subprocess.run(args, capture_output=True, check=False).returncode == 0


@pytest.fixture
def mode_info(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> SandboxInfo:
    """The sandbox of the mode under test; skips only when that mode's tool is not installed."""
    mode = request.param
    if mode == "auto without bwrap":  # a PATH holding unshare but not bubblewrap
        tools = tmp_path / "bin"
        tools.mkdir()
        unshare = shutil.which("unshare")
        if unshare is None:
            pytest.skip("SANDBOX TEST SKIPPED: unshare is not installed (apt-get install util-linux)")
        (tools / "unshare").symlink_to(unshare)
        monkeypatch.setenv("PATH", str(tools))
        info = probe("auto")
        assert info.kind in ("unshare", "unavailable"), info
        return _confining(info, "unshare")
    needed = ["bwrap", "unshare"] if mode == "auto" else [mode]
    if not any(shutil.which(tool) for tool in needed):
        pytest.skip(
            f"SANDBOX TEST SKIPPED: {' and '.join(needed)} not installed (.ci/system-deps.sh installs bwrap)"
        )
    info = probe(mode)
    return _confining(info, mode if mode != "auto" else next(t for t in needed if shutil.which(t)))


def _confining(info: SandboxInfo, tool: str) -> SandboxInfo:
    if info.kind == "unavailable":
        assert "\n" not in info.reason and info.reason, info
        assert "\n" not in sandbox_module.refusal(info)
        if _raw_namespaces_work(tool):
            pytest.fail(f"{tool} works here but the sandbox refuses: {info.reason}")
        pytest.skip(f"SANDBOX TEST SKIPPED: this machine forbids the namespaces {tool} needs: {info.reason}")
    return info


def _session_keyring() -> int | None:
    numbers = {"x86_64": 250, "aarch64": 219}
    if os.uname().machine not in numbers:
        return None
    return int(ctypes.CDLL(None).syscall(numbers[os.uname().machine], 0, -3, 0))


@pytest.fixture
def host_targets(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Host files to read and paths to write, a secret file in the home folder, a host canary process."""
    token = f"ragmeter-probe-{uuid.uuid4().hex}"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    home_secret = Path.home() / f".{token}"
    try:
        home_secret.write_text("secret")
    except OSError:
        home_secret = outside / "secret.txt"
    canary = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)", token])
    targets = {
        "token": token,
        "read": sorted(
            {"/etc/shadow", "/root", str(Path.home()), str(home_secret), str(outside / "secret.txt")}
            | {str(PROJECT / "pyproject.toml"), str(PROJECT), "/home", f"/proc/{os.getpid()}/environ"}
        ),
        "write": [
            f"/tmp/{token}",
            f"/dev/shm/{token}",
            str(outside / "written.txt"),
            str(Path(sys.prefix) / token),
            f"/etc/{token}",
            str(PROJECT / token),
            str(Path.home() / f"{token}.written"),
        ],
    }
    try:
        yield targets
    finally:
        canary.kill()
        canary.wait()
        home_secret.unlink(missing_ok=True)
        for path in targets["write"]:
            Path(path).unlink(missing_ok=True)


def _parse(output: str) -> dict[str, tuple[str, str]]:
    results = {}
    for line in output.splitlines():
        name, verdict, detail = [*line.split("\t"), "", ""][:3]
        results[name] = (verdict, detail)
    return results


def _lock_is_free(path: Path) -> bool:
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


@pytest.mark.parametrize("mode_info", MODES, indirect=True)
def test_every_escape_attempt_fails(
    mode_info: SandboxInfo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    listener: tuple[int, list[object]],
    abstract_listener: tuple[str, list[object]],
    host_targets: dict[str, Any],
) -> None:
    secret = f"RAGMETER_PROBE_SECRET_{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv(secret, "hunter2")
    port, accepted = listener
    abstract, abstract_accepted = abstract_listener
    workdir = tmp_path / "work"
    workdir.mkdir()
    shutil.copy(HERE / "sandbox_probe.py", workdir / "probe.py")
    limits = PROBE_LIMITS
    config = {
        **host_targets,
        "secret_name": secret,
        "port": port,
        "abstract": abstract,
        "keyring": _session_keyring(),
        "max_processes": limits.max_processes,
        "memory_mb": limits.memory_mb,
        "file_size_mb": limits.file_size_mb,
    }
    (workdir / "probe.json").write_text(json.dumps(config))
    leak = os.open(tmp_path / "host-log.txt", os.O_CREAT | os.O_WRONLY)
    os.set_inheritable(leak, True)  # a descriptor the sandbox must not inherit
    try:
        result = run_sandboxed([sys.executable, "probe.py"], workdir, limits=limits, info=mode_info)
    finally:
        os.close(leak)

    assert result.started and result.returncode == 0 and not result.timed_out, result.output
    results = _parse(result.output)
    print(f"\n{mode_info.kind}, {mode_info.runs_as}:\n{result.output}")  # the table, with -s
    escaped = {name: detail for name, (verdict, detail) in results.items() if verdict != "blocked"}
    assert escaped == {}, result.output
    assert "leave a setsid/double-fork survivor" in results, result.output  # the probe ran to its end
    attempted = {f"read {path}" for path in host_targets["read"]} | {
        f"write {p}" for p in host_targets["write"]
    }
    assert attempted <= set(results), result.output
    assert accepted == [] and abstract_accepted == []
    assert not [path for path in host_targets["write"] if Path(path).exists()]
    assert _lock_is_free(workdir / "survivor.lock")  # the survivor died with the sandbox


THREADS_AND_CHILDREN = """
import subprocess, threading
out = []
thread = threading.Thread(target=out.append, args=("thread ran",))
thread.start()
thread.join()
print(out[0])
print(subprocess.run(["/bin/sh", "-c", "echo child ran"], capture_output=True, text=True).stdout.strip())
print([l.split()[1] for l in open("/proc/self/status") if l.startswith("Seccomp:")][0])
"""


@pytest.mark.parametrize("mode_info", ["bwrap", "unshare"], indirect=True)
def test_the_filter_is_in_force_and_ordinary_code_runs(mode_info: SandboxInfo, tmp_path: Path) -> None:
    result = run_sandboxed(
        [sys.executable, "-c", THREADS_AND_CHILDREN],
        tmp_path,
        limits=SandboxLimits(timeout_s=60),
        info=mode_info,
    )
    assert result.returncode == 0, result.output
    assert result.output.split() == ["thread", "ran", "child", "ran", "2"]


@pytest.mark.parametrize("mode_info", ["bwrap", "unshare"], indirect=True)  # what auto runs, too
def test_the_wall_clock_kills_the_whole_tree(mode_info: SandboxInfo, tmp_path: Path) -> None:
    result = run_sandboxed(
        [sys.executable, "-c", SURVIVOR], tmp_path, limits=SandboxLimits(timeout_s=3), info=mode_info
    )
    assert result.timed_out and result.returncode is None
    assert "locked" in result.output
    assert _lock_is_free(tmp_path / "survivor.lock")


def test_without_any_sandbox_tool_auto_refuses_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # neither bwrap nor unshare
    info = probe("auto")
    assert info.kind == "unavailable"
    assert info.reason == (
        "bubblewrap is not installed (apt-get install bubblewrap); unshare is not installed (apt-get install util-linux)"
    )
    with pytest.raises(ConfigError) as error:
        run_sandboxed([sys.executable, "-c", "open('ran', 'w')"], tmp_path, limits=SandboxLimits(), info=info)
    message = str(error.value)
    assert (
        "\n" not in message and "apt-get install bubblewrap" in message and "--unsafe-no-sandbox" in message
    )
    assert not (tmp_path / "ran").exists()
    for mode in ("bwrap", "unshare"):
        refused = probe(mode)  # type: ignore[arg-type]
        assert refused.kind == "unavailable" and "is not installed (apt-get install" in refused.reason


def test_a_sandbox_that_fails_to_start_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A tool that is there but cannot build the sandbox: one line with its error, never a fallback."""
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    info = probe("bwrap")
    assert info.kind == "unavailable" and "\n" not in info.reason
    assert info.reason.startswith("bubblewrap cannot build the sandbox here (bwrap: Creating new namespace")


def test_untrusted_code_never_runs_without_a_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    unavailable = SandboxInfo(
        "unavailable", [], "bubblewrap is not installed (apt-get install bubblewrap)", None
    )
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
    with pytest.raises(ConfigError, match="--unsafe-no-sandbox") as error:
        build_validator(bench, unsafe_no_sandbox=False, sandbox_cache={})
    assert "\n" not in str(error.value) and "apt-get install bubblewrap" in str(error.value)
    validator = build_validator(bench, unsafe_no_sandbox=True, sandbox_cache={})
    assert isinstance(validator, PytestValidator) and validator.sandbox.kind == "none"
    assert validator.sandbox.to_dict()["description"].startswith("UNSANDBOXED")
    with pytest.raises(ConfigError, match="no sandbox can run untrusted code here"):
        run_sandboxed(["true"], ".", limits=SandboxLimits(), info=unavailable)


def test_provenance_names_the_layers_each_mode_has_and_lacks(needs_bwrap: None) -> None:
    info = probe("bwrap")
    text = info.to_dict()["description"]
    assert isinstance(text, str)
    for layer in ("own root", "no network", "no capabilities", "clean environment", "wall timeout"):
        assert layer in text
    assert "seccomp filter" in text and "without disk quota" in text and "without seccomp" not in text
    assert probe("none").to_dict()["description"] == (
        "UNSANDBOXED (asked for --unsafe-no-sandbox): clean environment, cpu/memory/process/file-size limits,"
        " wall timeout only"
    )


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
