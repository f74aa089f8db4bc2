"""Run untrusted code (a solver's solution and the benchmark's tests) in a sandbox.

Preferred: **bubblewrap** — a new root with the system (``/usr``, the Python installation, the
import path) mounted read-only, a private writable work dir, no network (all namespaces
unshared), a private ``/tmp``, a fresh ``/proc`` and ``/dev``; the process dies with its parent.

Fallback, where bubblewrap cannot run: **unshare** — a network namespace (no network) and a PID
namespace, but *no filesystem isolation* beyond user permissions. The provenance says so.

In both, limits are set with ``setrlimit`` before the code starts: CPU seconds, address space,
processes (counted inside the sandbox's user namespace), file size, no core dumps; and a wall
clock timeout kills the whole process group. When ragmeter runs as root, the sandboxed code
runs as an unprivileged uid of its own (one per concurrent sandbox): the kernel exempts root
from the process limit, and counts processes per uid.

Nothing runs without a sandbox unless the caller asks for ``mode="none"`` (the CLI's
``--unsafe-no-sandbox``); that is recorded as ``UNSANDBOXED``.

>>> SandboxLimits().rlimits()["nproc"]
64
>>> describe(SandboxInfo("none", [], "asked for --unsafe-no-sandbox", runs_as=None))
'UNSANDBOXED (asked for --unsafe-no-sandbox)'
"""

from __future__ import annotations

import contextlib
import os
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

_UID_BASE = 1_000_000 + (os.getpid() % 100_000) * 64
_UID_SLOTS = 64
_uids_in_use: set[int] = set()
_uid_lock = threading.Lock()
_MARKER = b"ragmeter-sandbox-started\n"
SANDBOX_WORKDIR = "/tmp/work"
"""Where the work dir appears inside a bubblewrap sandbox."""

_LAUNCHER = """
import os, resource, sys
cpu, mem, nproc, fsize, uid = (int(v) for v in sys.argv[1:6])
if uid >= 0:
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
limits = [(resource.RLIMIT_CPU, cpu, cpu + 1), (resource.RLIMIT_AS, mem, mem),
          (resource.RLIMIT_NPROC, nproc, nproc), (resource.RLIMIT_FSIZE, fsize, fsize),
          (resource.RLIMIT_CORE, 0, 0)]
for which, soft, hard in limits:
    resource.setrlimit(which, (soft, hard))
os.write(1, b"ragmeter-sandbox-started\\n")
os.execv(sys.argv[6], sys.argv[6:])
"""

Mode = Literal["auto", "bwrap", "unshare", "none"]


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits of one sandboxed run."""

    timeout_s: float = 60.0
    cpu_s: int = 30
    memory_mb: int = 1024
    max_processes: int = 64
    file_size_mb: int = 64

    def rlimits(self) -> dict[str, int]:
        """The values given to ``setrlimit`` (bytes for memory and file size)."""
        return {
            "cpu": self.cpu_s,
            "as": self.memory_mb * 1024 * 1024,
            "nproc": self.max_processes,
            "fsize": self.file_size_mb * 1024 * 1024,
        }


@dataclass(frozen=True)
class SandboxInfo:
    """Which sandbox is in use and why: ``kind`` (bwrap / unshare / none), isolation, notes."""

    kind: str
    isolation: list[str]
    reason: str
    runs_as: str | None
    notes: list[str] = field(default_factory=list)
    prefix: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """Provenance record."""
        return {
            "kind": self.kind,
            "isolation": list(self.isolation),
            "reason": self.reason,
            "runs_as": self.runs_as,
            "notes": list(self.notes),
            "description": describe(self),
        }


def describe(info: SandboxInfo) -> str:
    """One line for logs and provenance."""
    if info.kind == "none":
        return f"UNSANDBOXED ({info.reason})"
    return f"{info.kind}: {', '.join(info.isolation)}" + (f" ({info.reason})" if info.reason else "")


@dataclass(frozen=True)
class SandboxResult:
    """How a sandboxed command ended."""

    returncode: int | None
    timed_out: bool
    output: str
    duration_s: float
    started: bool = True
    """False when the sandbox itself failed before the command could start."""


def _who(plan: _Plan) -> str:
    if plan.drop_to_nobody:
        return "an unprivileged uid per sandbox"
    return "root" if _is_root() else f"uid {os.geteuid()}"


def _is_root() -> bool:
    return os.geteuid() == 0


def _pth_paths(site_dir: str) -> list[str]:
    """Folders that ``.pth`` files in a site-packages folder add to the import path (editable installs)."""
    out: list[str] = []
    try:
        names = sorted(n for n in os.listdir(site_dir) if n.endswith(".pth"))
    except OSError:
        return out
    for name in names:
        try:
            lines = Path(site_dir, name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith(("#", "import ", "import\t")):
                continue
            folder = os.path.realpath(os.path.join(site_dir, line))
            if os.path.isdir(folder):
                out.append(folder)
    return out


def _python_roots() -> list[str]:
    """Folders the sandboxed Python needs: its prefixes, site-packages and ``.pth`` folders.

    The current directory and the script's folder are deliberately left out.
    """
    import site

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots.add(str(Path(os.path.realpath(sys.executable)).parent.parent))
    site_dirs = [*site.getsitepackages(), site.getusersitepackages()]
    for site_dir in site_dirs:
        if os.path.isdir(site_dir):
            roots.add(os.path.realpath(site_dir))
            roots.update(_pth_paths(site_dir))
    out: list[str] = []
    for root in sorted((os.path.realpath(r) for r in roots), key=len):
        if root in ("/", "/tmp", "") or not os.path.exists(root) or _under(root, [SANDBOX_WORKDIR]):
            continue  # (a Python under /tmp, e.g. a venv in a clone there, is bound read-only like any other)
        if any(root == kept or root.startswith(kept.rstrip("/") + "/") for kept in out):
            continue
        out.append(root)
    return out


_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/ssl",
)


def _bwrap_args(workdir: str, *, setuid: bool) -> list[str]:
    """Bubblewrap arguments: a read-only root holding only the system and Python, a writable work dir."""
    if setuid:  # running as root: no user namespace, the launcher drops to an unprivileged uid itself
        args = [
            "bwrap",
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args = ["bwrap", "--unshare-all"]
    args += ["--die-with-parent", "--new-session", "--clearenv"]
    binds: list[tuple[str, str]] = []
    for path in _SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            binds.append(("--ro-bind", path))
    binds += [("--ro-bind", path) for path in _ETC if os.path.exists(path)]
    bound_dirs = [p for _, p in binds if os.path.isdir(p)]
    binds += [("--ro-bind", root) for root in _python_roots() if not _under(root, bound_dirs)]
    targets = [p for _, p in binds] + [SANDBOX_WORKDIR]
    parents: list[str] = []
    for target in targets:
        parent = os.path.dirname(target)
        chain: list[str] = []
        while parent not in ("/", "") and not _under(parent, bound_dirs) and parent not in parents:
            chain.append(parent)
            parent = os.path.dirname(parent)
        parents.extend(reversed(chain))
    for parent in sorted(set(parents), key=lambda p: (p.count("/"), p)):
        args += ["--perms", "0755", "--dir", parent]  # traversable by the unprivileged sandbox user
    for flag, path in binds:
        args += [flag, path, path]
    args += ["--proc", "/proc", "--dev", "/dev", "--bind", workdir, SANDBOX_WORKDIR]
    args += ["--remount-ro", "/", "--chdir", SANDBOX_WORKDIR]
    for key, value in _environment(SANDBOX_WORKDIR).items():
        args += ["--setenv", key, value]
    return [*args, "--"]


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _environment(workdir: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "NO_COLOR": "1",
    }


@dataclass(frozen=True)
class _Plan:
    kind: str
    variant: str  # bwrap: setuid | userns; unshare: userns | root
    drop_to_nobody: bool
    isolation: tuple[str, ...]
    notes: tuple[str, ...] = ()


_NO_NPROC = "runs as root: the kernel does not enforce the process limit for root"
_NO_FS = "filesystem NOT isolated (writes outside the work dir are limited only by user permissions)"


def _plans(mode: Mode) -> list[_Plan]:
    root = _is_root()
    plans: list[_Plan] = []
    full = ("read-only system", "private work dir", "no network", "pid namespace", "rlimits", "wall timeout")
    if mode in ("auto", "bwrap") and shutil.which("bwrap"):
        if root:
            plans.append(_Plan("bwrap", "setuid", True, full))
            plans.append(_Plan("bwrap", "userns", False, full, (_NO_NPROC,)))
        else:
            plans.append(_Plan("bwrap", "userns", False, full))
    partial = ("no network", "pid namespace", "rlimits", "wall timeout")
    if mode in ("auto", "unshare") and shutil.which("unshare"):
        if root:
            plans.append(_Plan("unshare", "root", True, partial, (_NO_FS,)))
            plans.append(_Plan("unshare", "root", False, partial, (_NO_FS, _NO_NPROC)))
        else:
            plans.append(_Plan("unshare", "userns", False, partial, (_NO_FS,)))
    return plans


def _prefix(plan: _Plan, workdir: str) -> list[str]:
    if plan.kind == "bwrap":
        return _bwrap_args(workdir, setuid=plan.variant == "setuid")
    if plan.variant == "userns":
        return ["unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child", "--"]
    return ["unshare", "--net", "--pid", "--fork", "--kill-child", "--"]


_CACHE: dict[Mode, SandboxInfo] = {}
_CACHE_LOCK = threading.Lock()


def probe(mode: Mode = "auto") -> SandboxInfo:
    """Find the best sandbox that can run here (cached per process); ``kind == "none"`` if none can.

    ``mode="none"`` returns the unsandboxed setting without probing.
    """
    if mode == "none":
        return SandboxInfo("none", ["rlimits", "wall timeout"], "asked for --unsafe-no-sandbox", runs_as=None)
    with _CACHE_LOCK:
        if mode in _CACHE:
            return _CACHE[mode]
        failures: list[str] = []
        info: SandboxInfo | None = None
        for plan in _plans(mode):
            error = _try(plan)
            if error is None:
                reason = "" if not failures else "fallback: " + "; ".join(failures)
                info = SandboxInfo(
                    plan.kind,
                    list(plan.isolation),
                    reason,
                    runs_as=_who(plan),
                    notes=list(plan.notes),
                    prefix=(plan.variant, "nobody" if plan.drop_to_nobody else "self"),
                )
                break
            who = " dropping privileges" if plan.drop_to_nobody else ""
            failures.append(f"{plan.kind}/{plan.variant}{who}: {error}")
        if info is None:
            missing = (
                [] if shutil.which("bwrap") else ["bubblewrap is not installed (apt-get install bubblewrap)"]
            )
            info = SandboxInfo(
                "unavailable", [], "; ".join(missing + failures) or "no sandbox tool found", runs_as=None
            )
        _CACHE[mode] = info
        return info


def _try(plan: _Plan) -> str | None:
    workdir = tempfile.mkdtemp(prefix="ragmeter-probe-")
    try:
        result = _run(
            plan, [sys.executable, "-c", "import sys; sys.exit(0)"], workdir, SandboxLimits(timeout_s=30)
        )
    except OSError as exc:
        return str(exc)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if result.timed_out:
        return "timed out"
    if result.returncode != 0 or not result.started:
        tail = result.output.strip().splitlines()[-1:] or [f"exit status {result.returncode}"]
        return tail[0][:200]
    return None


def _plan_of(info: SandboxInfo) -> _Plan:
    variant, who = info.prefix if info.prefix else ("none", "self")
    return _Plan(info.kind, variant, who == "nobody", tuple(info.isolation))


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


def _run(plan: _Plan, command: Sequence[str], workdir: str, limits: SandboxLimits) -> SandboxResult:
    uid = _acquire_uid() if plan.drop_to_nobody else -1
    try:
        return _run_as(plan, command, workdir, limits, uid)
    finally:
        if uid >= 0:
            _release_uid(uid)


def _run_as(
    plan: _Plan, command: Sequence[str], workdir: str, limits: SandboxLimits, uid: int
) -> SandboxResult:
    if uid >= 0:
        _give_to(workdir, uid)
    rl = limits.rlimits()
    launcher = [
        sys.executable,
        "-c",
        _LAUNCHER,
        *(str(rl[k]) for k in ("cpu", "as", "nproc", "fsize")),
        str(uid),
    ]
    argv = [*(_prefix(plan, workdir) if plan.kind != "none" else []), *launcher, *command]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")} if plan.kind == "bwrap" else _environment(workdir)
    output_fd, output_path = tempfile.mkstemp(prefix="ragmeter-sandbox-out-")
    started = time.monotonic()
    timed_out = False
    try:
        process = subprocess.Popen(
            argv,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output_fd,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            returncode: int | None = process.wait(timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            returncode = None
        _kill_group(process)  # on timeout, and for stragglers still in the session
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


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL ends it; never hang here
        process.wait(timeout=10)


def run_sandboxed(
    command: Sequence[str], workdir: str | Path, *, limits: SandboxLimits, info: SandboxInfo
) -> SandboxResult:
    """Run ``command`` in ``workdir`` inside the sandbox ``info`` (from :func:`probe`).

    ``info.kind == "unavailable"`` raises :class:`ConfigError`: untrusted code is never run
    without a sandbox unless the caller asked for ``mode="none"``.
    """
    if info.kind == "unavailable":
        raise ConfigError(
            f"no sandbox can run here ({info.reason}); install bubblewrap, or pass --unsafe-no-sandbox "
            "to run the solver's code without one"
        )
    return _run(_plan_of(info), command, str(workdir), limits)
