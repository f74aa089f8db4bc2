"""Run untrusted code (a solver's solution and the benchmark's tests) in a sandbox.

Two modes confine the code in the same way; they differ only in who builds the sandbox:

- **bwrap** — bubblewrap builds it;
- **unshare** — util-linux ``unshare`` makes the namespaces and ragmeter's launcher
  (:mod:`ragmeter.mining.sandbox_launcher`) builds the root inside them;
- ``auto`` takes bwrap, else unshare.

Either way the code gets: a root of its own holding only the system (``/usr``, a few ``/etc``
files) and the Python installation, read-only, the interpreter and the venv's packages at
neutral paths (``/opt/ragmeter/...``: nothing of ``/root``, the home folder or the project is
there); a writable work dir (``/tmp/work``) and nothing else writable; its own network (no
network), PID, IPC and UTS namespaces; an unprivileged uid (when ragmeter runs as root, a uid of
its own per sandbox, so the process limit holds), no capabilities, ``no_new_privs``, a new
session keyring; an environment reduced to an allowlist; no inherited file descriptors; a
seccomp filter that refuses the system calls confined code has no use for (ptrace, mounts, new
namespaces, keyrings, bpf, io_uring, kernel modules, tty injection: see the launcher); CPU,
memory, process and file-size limits; a wall clock that kills the whole PID namespace. Not
there: a quota on the work dir's total size (each file is capped).

A mode that cannot give all of that refuses to run, with one line saying what is missing
(:func:`refusal`). Nothing runs unconfined unless the caller asks for ``mode="none"`` (the CLI's
``--unsafe-no-sandbox``); that is recorded as ``UNSANDBOXED``.

>>> SandboxLimits().rlimits()["RLIMIT_NPROC"]
64
>>> describe(SandboxInfo("none", ["clean environment"], "asked for --unsafe-no-sandbox", runs_as=None))
'UNSANDBOXED (asked for --unsafe-no-sandbox): clean environment only'
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ragmeter.errors import ConfigError
from ragmeter.mining.sandbox_layout import SANDBOX_WORKDIR, Layout, current_layout, environment

_UID_BASE = 1_000_000 + (os.getpid() % 100_000) * 64
_UID_SLOTS = 64
_uids_in_use: set[int] = set()
_uid_lock = threading.Lock()
_LAUNCHER = Path(__file__).with_name("sandbox_launcher.py").read_text(encoding="utf-8")
_MARKER = b"ragmeter-sandbox-started\n"

Mode = Literal["auto", "bwrap", "unshare", "none"]
Kind = Literal["bwrap", "unshare"]
RunKind = Literal["bwrap", "unshare", "none"]
_TOOLS: dict[Kind, tuple[str, str]] = {
    "bwrap": ("bubblewrap", "apt-get install bubblewrap"),
    "unshare": ("unshare", "apt-get install util-linux"),
}
LAYERS = [
    "own root (system and Python read-only)",
    "writable work dir only",
    "no network",
    "own pid/ipc/uts namespaces",
    "unprivileged uid, no capabilities, no_new_privs",
    "clean environment",
    "seccomp filter (no ptrace, mounts, new namespaces, keyrings, bpf, io_uring, kernel modules, tty injection)",
    "cpu/memory/process/file-size limits",
    "wall timeout kills the namespace",
]
"""What both modes give; :data:`MISSING` is what neither gives."""
MISSING = ["disk quota (each file is capped, not the total)"]


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandboxed run."""

    timeout_s: float = 60.0
    cpu_s: int = 30
    memory_mb: int = 1024
    max_processes: int = 64
    file_size_mb: int = 64

    def rlimits(self) -> dict[str, int]:
        """The values given to ``setrlimit`` (bytes for memory and file size); no core dumps."""
        return {
            "RLIMIT_CPU": self.cpu_s,
            "RLIMIT_AS": self.memory_mb * 1024 * 1024,
            "RLIMIT_NPROC": self.max_processes,
            "RLIMIT_FSIZE": self.file_size_mb * 1024 * 1024,
            "RLIMIT_CORE": 0,
        }


@dataclass(frozen=True)
class SandboxInfo:
    """Which sandbox is in use: ``kind`` (bwrap / unshare / none / unavailable), its layers, why."""

    kind: str
    isolation: list[str]
    reason: str
    runs_as: str | None
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """Provenance record."""
        return {
            "kind": self.kind,
            "isolation": list(self.isolation),
            "missing": list(self.missing),
            "reason": self.reason,
            "runs_as": self.runs_as,
            "notes": list(self.notes),
            "description": describe(self),
        }


def describe(info: SandboxInfo) -> str:
    """One line for logs and provenance: the layers the sandbox has, and those it lacks."""
    if info.kind == "none":
        return f"UNSANDBOXED ({info.reason}): {', '.join(info.isolation)} only"
    if info.kind == "unavailable":
        return f"no sandbox ({info.reason})"
    text = f"{info.kind}: {', '.join(info.isolation)}"
    if info.missing:
        text += f"; without {', '.join(info.missing)}"
    return text + (f" ({info.reason})" if info.reason else "")


def refusal(info: SandboxInfo) -> str:
    """The one line that refuses to run untrusted code without a sandbox."""
    return (
        f"no sandbox can run untrusted code here: {info.reason}; "
        "or pass --unsafe-no-sandbox to run it unconfined at your own risk"
    )


@dataclass(frozen=True)
class SandboxResult:
    """How a sandboxed command ended."""

    returncode: int | None
    timed_out: bool
    output: str
    duration_s: float
    started: bool = True
    """False when the sandbox itself failed before the command could start."""


def _is_root() -> bool:
    return os.geteuid() == 0


_CACHE: dict[tuple[object, ...], SandboxInfo] = {}
_CACHE_LOCK = threading.Lock()
_USER_FLAGS: dict[str, list[str]] = {}
_USER_FLAGS_LOCK = threading.Lock()
_UNSHARE = (
    "--mount",
    "--net",
    "--pid",
    "--ipc",
    "--uts",
    "--fork",
    "--kill-child",
    "--propagation",
    "private",
)


def _bwrap_args(layout: Layout, workdir: str) -> list[str]:
    """Bubblewrap's arguments: the layout, the namespaces, and the capabilities the launcher needs as root."""
    args = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if _is_root():  # no user namespace: the launcher switches to an unprivileged uid itself
        args += ["--cap-drop", "ALL"]
        args += [arg for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP") for arg in ("--cap-add", cap)]
    else:
        args.insert(0, "--unshare-user")
    args += ["--as-pid-1", "--die-with-parent", "--new-session", "--clearenv"]  # the launcher is the init
    for path in layout.dirs:
        args += ["--perms", "0755", "--dir", path]
    for target, path in layout.symlinks:
        args += ["--symlink", target, path]
    for source, path in layout.binds:
        args += ["--ro-bind", source, path]
    args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", "--bind", workdir, SANDBOX_WORKDIR]
    args += ["--remount-ro", "/", "--chdir", "/"]  # the launcher enters the work dir as the sandbox's uid
    for key, value in layout.env.items():
        args += ["--setenv", key, value]
    return args


def _unshare_args(tool: str) -> list[str]:
    """``unshare``'s arguments; without root, a user namespace (the invoker's uid, else uid 0, mapped to it)."""
    user: list[str] = []
    if not _is_root():
        with _USER_FLAGS_LOCK:
            if tool not in _USER_FLAGS:
                usage = subprocess.run([tool, "--help"], capture_output=True, text=True, check=False).stdout
                current = "--map-current-user" in usage and "--keep-caps" in usage  # util-linux 2.38+
                _USER_FLAGS[tool] = ["--map-current-user", "--keep-caps"] if current else ["--map-root-user"]
            user = ["--user", *_USER_FLAGS[tool]]
    return [*user, *_UNSHARE]


def _runs_as() -> str:
    if _is_root():
        return "an unprivileged uid of its own (ragmeter runs as root)"
    return f"uid {os.geteuid()} (mapped into a user namespace)"


def probe(mode: Mode = "auto") -> SandboxInfo:
    """The sandbox that can run here (cached); ``kind == "unavailable"`` with the reason if none can.

    ``mode="none"`` returns the unsandboxed setting without probing.
    """
    if mode == "none":
        layers = ["clean environment", "cpu/memory/process/file-size limits", "wall timeout"]
        return SandboxInfo("none", layers, "asked for --unsafe-no-sandbox", runs_as=None)
    kinds: list[Kind] = ["bwrap", "unshare"] if mode == "auto" else [mode]
    key = (mode, os.geteuid(), *(shutil.which(kind) for kind in kinds))
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
        failures: list[str] = []
        info: SandboxInfo | None = None
        for kind in kinds:
            error = _try(kind)
            if error is None:
                notes = [
                    f"not visible inside: {path} (an editable install's folder)"
                    for path in current_layout().hidden
                ]
                info = SandboxInfo(kind, LAYERS, "; ".join(failures), _runs_as(), notes, MISSING)
                break
            failures.append(error)
        if info is None:
            info = SandboxInfo("unavailable", [], "; ".join(failures), runs_as=None)
        _CACHE[key] = info
        return info


def _try(kind: Kind) -> str | None:
    """``None`` when ``kind`` confines a trivial program here, else one line saying what is missing."""
    name, install = _TOOLS[kind]
    if shutil.which(kind) is None:
        return f"{name} is not installed ({install})"
    workdir = tempfile.mkdtemp(prefix="ragmeter-probe-")
    try:
        result = _run(kind, [sys.executable, "-c", "pass"], workdir, SandboxLimits(timeout_s=30))
    except (OSError, ConfigError) as exc:
        return " ".join(f"{name} cannot run here: {exc}".split())
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if result.started and result.returncode == 0:
        return None
    lines = [line for line in result.output.splitlines() if line.strip()]
    detail = "timed out" if result.timed_out else (lines[-1] if lines else f"exit status {result.returncode}")
    hint = "user namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces)"
    if _is_root():
        hint = "it needs CAP_SYS_ADMIN (a container must allow new namespaces, e.g. --privileged)"
    return " ".join(f"{name} cannot build the sandbox here ({detail[:200]}); {hint}".split())


def _acquire_uid() -> int:
    """An unprivileged uid no other running sandbox of this process uses.

    The kernel counts RLIMIT_NPROC per uid, so concurrent sandboxes need distinct uids or one
    trial's fork bomb would make another trial fail. The uids have no passwd entry and own
    nothing outside the work dir.
    """
    with _uid_lock:
        for slot in range(_UID_SLOTS):
            uid = _UID_BASE + slot
            if uid not in _uids_in_use:
                _uids_in_use.add(uid)
                return uid
    raise RuntimeError(f"more than {_UID_SLOTS} sandboxes at once")


def _release_uid(uid: int) -> None:
    with _uid_lock:
        _uids_in_use.discard(uid)


def _give_to(path: str, uid: int) -> None:
    for folder, dirs, files in os.walk(path):
        os.chown(folder, uid, uid)
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, uid, follow_symlinks=False)


def _argv(kind: RunKind, command: Sequence[str], workdir: str, limits: SandboxLimits, uid: int) -> list[str]:
    """The whole command line: the sandbox tool, the launcher and its configuration, the command."""
    config: dict[str, object] = {
        "confine": kind != "none",
        "uid": uid,
        "rlimits": sorted(limits.rlimits().items()),
        "root": None,
        "chdir": SANDBOX_WORKDIR if kind != "none" else os.path.realpath(workdir),
        "marker": _MARKER.decode(),
    }
    if kind == "none":
        return [sys.executable, "-I", "-S", "-c", _LAUNCHER, json.dumps(config), *command]
    layout = current_layout()
    python = {sys.executable, os.path.realpath(sys.executable), getattr(sys, "_base_executable", "")}
    command = [layout.python if i == 0 and arg in python else arg for i, arg in enumerate(command)]
    tool = shutil.which(kind)
    if tool is None:
        raise ConfigError(f"{_TOOLS[kind][0]} is not installed here ({_TOOLS[kind][1]})")
    if kind == "bwrap":
        launcher = [layout.python, "-I", "-S", "-c", _LAUNCHER, json.dumps(config)]
        return [tool, *_bwrap_args(layout, workdir), "--", *launcher, *command]
    config["root"] = {
        "mountpoint": layout.mountpoint,
        "dirs": layout.dirs,
        "symlinks": layout.symlinks,
        "binds": layout.binds,
        "workdir": os.path.realpath(workdir),
        "sandbox_workdir": SANDBOX_WORKDIR,
    }
    launcher = [os.path.realpath(sys.executable), "-I", "-S", "-c", _LAUNCHER, json.dumps(config)]
    return [tool, *_unshare_args(tool), "--", *launcher, *command]


def _run(kind: RunKind, command: Sequence[str], workdir: str, limits: SandboxLimits) -> SandboxResult:
    uid = _acquire_uid() if _is_root() and kind != "none" else -1
    try:
        if uid >= 0:
            _give_to(workdir, uid)
        argv = _argv(kind, command, workdir, limits, uid)
        env = current_layout().env if kind != "none" else environment(workdir, "/usr/local/bin:/usr/bin:/bin")
        return _execute(argv, workdir if kind == "none" else "/", env, limits.timeout_s)
    finally:
        if uid >= 0:
            _release_uid(uid)


def _execute(argv: list[str], cwd: str, env: dict[str, str], timeout_s: float) -> SandboxResult:
    output_fd, output_path = tempfile.mkstemp(prefix="ragmeter-sandbox-out-")
    started = time.monotonic()
    timed_out = False
    try:
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output_fd,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            returncode: int | None = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            returncode = None
        _end(process)  # on timeout, and for stragglers
    finally:
        os.close(output_fd)
    duration = time.monotonic() - started
    try:
        with open(output_path, "rb") as handle:
            head = handle.read(len(_MARKER))
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            start = len(_MARKER) if head == _MARKER else 0
            handle.seek(max(start, size - 20_000))
            output = handle.read().decode("utf-8", "replace")
    finally:
        os.unlink(output_path)
    return SandboxResult(returncode, timed_out, output, duration, started=head == _MARKER)


def _end(process: subprocess.Popen[bytes]) -> None:
    """Kill the sandbox's PID namespace and wait until it is gone, then the process group.

    The namespace's init is the sandbox tool's child; once it is dead, so is every process the
    code started (setsid and double forks included): the kernel kills them before the init exits.
    """
    if process.poll() is None:
        try:
            with open(f"/proc/{process.pid}/task/{process.pid}/children", encoding="ascii") as handle:
                inits = [int(pid) for pid in handle.read().split()]
        except (OSError, ValueError):
            inits = []
        for pid in inits:
            try:
                handle_fd = os.pidfd_open(pid)
            except OSError:
                continue
            try:
                os.kill(pid, signal.SIGKILL)
                select.select([handle_fd], [], [], 10)  # readable once the init and its namespace are gone
            except OSError:
                pass
            finally:
                os.close(handle_fd)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL ends it; never hang here
        process.wait(timeout=10)


def run_sandboxed(
    command: Sequence[str], workdir: str | Path, *, limits: SandboxLimits, info: SandboxInfo
) -> SandboxResult:
    """Run ``command`` in ``workdir`` inside the sandbox ``info`` (from :func:`probe`).

    A command starting with ``sys.executable`` runs the same interpreter (and venv) as seen
    inside the sandbox. ``info.kind == "unavailable"`` raises :class:`ConfigError`
    (:func:`refusal`): untrusted code never runs unconfined unless the caller asked for ``mode="none"``.
    """
    kinds: dict[str, RunKind] = {"bwrap": "bwrap", "unshare": "unshare", "none": "none"}
    if info.kind not in kinds:
        raise ConfigError(refusal(info))
    return _run(kinds[info.kind], command, str(workdir), limits)
