"""The sandbox's file system: what is bound where, the interpreter's path inside it, its environment.

Both sandbox modes build the same layout (:mod:`ragmeter.mining.sandbox`): the system folders
and a few ``/etc`` files at their own paths, read-only; the interpreter's installation at
``/opt/ragmeter/python`` and the venv (its ``lib`` and a ``pyvenv.cfg`` pointing at the new home)
at ``/opt/ragmeter/venv``, so that no folder of the invoking user (``/root``, a home folder, the
project) has to be shown or traversed; the work dir at :data:`SANDBOX_WORKDIR`.

>>> under("/usr/lib/x", ["/usr"]), under("/usrx", ["/usr"])
(True, False)
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import sysconfig
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ragmeter.errors import ConfigError

SANDBOX_WORKDIR = "/tmp/work"
"""Where the work dir appears inside the sandbox."""
OPT = "/opt/ragmeter"
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
)


def under(path: str, roots: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or inside one."""
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


@dataclass(frozen=True)
class Layout:
    """The sandbox's file system (folders to make, symlinks, read-only binds), interpreter, environment.

    ``hidden``: folders on the host's import path that are not shown (editable installs);
    ``mountpoint``: an empty folder where the ``unshare`` mode mounts the new root.
    """

    dirs: list[str]
    symlinks: list[tuple[str, str]]
    binds: list[tuple[str, str]]
    python: str
    env: dict[str, str]
    hidden: list[str]
    mountpoint: str


_cache: list[Layout] = []
_lock = threading.Lock()


def current_layout() -> Layout:
    """The layout of this process (built once; its two small files live in a temporary folder until exit).

    >>> current_layout().env["HOME"]
    '/tmp/work'
    """
    with _lock:
        if not _cache:
            _cache.append(_build())
        return _cache[0]


def _build() -> Layout:
    """Bind the system at its own paths, the interpreter's prefix and the venv's packages under /opt/ragmeter."""
    symlinks: list[tuple[str, str]] = []
    binds: list[tuple[str, str]] = []
    for path in SYSTEM:
        if os.path.islink(path):
            symlinks.append((os.readlink(path), path))
        elif os.path.isdir(path):
            binds.append((path, path))
    binds += [(path, path) for path in ETC if os.path.exists(path)]
    system = [os.path.realpath(p) for p in SYSTEM if os.path.isdir(p)]
    prefixes: list[tuple[str, str]] = []  # host prefix -> its path inside
    for prefix in (sys.base_prefix, sys.base_exec_prefix):
        real = os.path.realpath(prefix)
        if not under(real, system) and not under(real, [p for p, _ in prefixes]):
            prefixes.append((real, f"{OPT}/python{len(prefixes) or ''}"))
    binds += prefixes

    def inside(path: str) -> str | None:
        real = os.path.realpath(path)
        if under(real, system):
            return real
        for host, mapped in prefixes:
            if under(real, [host]):
                return mapped + real[len(host) :]
        return None

    base = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)
    python = inside(base)
    if python is None:
        raise ConfigError(
            f"the sandbox cannot show the Python interpreter {base}: it is outside {sys.base_prefix}"
        )
    skeleton = tempfile.mkdtemp(prefix="ragmeter-sandbox-")
    atexit.register(shutil.rmtree, skeleton, True)
    os.chmod(skeleton, 0o755)
    mountpoint = os.path.join(skeleton, "root")
    os.mkdir(mountpoint)
    venv = os.path.realpath(sys.prefix)
    if venv != os.path.realpath(sys.base_prefix):
        python = _venv_layout(venv, python, skeleton, symlinks, binds)
    env = environment(SANDBOX_WORKDIR, f"{os.path.dirname(python)}:/usr/local/bin:/usr/bin:/bin")
    libdir = str(sysconfig.get_config_var("LIBDIR") or "")
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and libdir and inside(libdir) not in (None, libdir):
        env["LD_LIBRARY_PATH"] = str(inside(libdir))  # libpython found through an absolute RUNPATH
    targets = [dst for _, dst in binds] + [path for _, path in symlinks] + [SANDBOX_WORKDIR]
    bound = [dst for src, dst in binds if os.path.isdir(src)]
    dirs: set[str] = set()
    for target in targets:
        parent = os.path.dirname(target)
        while parent not in ("/", "") and not under(parent, bound):
            dirs.add(parent)
            parent = os.path.dirname(parent)
    hidden = [path for path in _pth_paths(venv) if inside(path) is None and not under(path, [venv])]
    return Layout(
        sorted(dirs, key=lambda p: (p.count("/"), p)), symlinks, binds, python, env, hidden, mountpoint
    )


def environment(workdir: str, path: str) -> dict[str, str]:
    """The whole environment of sandboxed code: an allowlist, nothing inherited (no secrets).

    >>> sorted(environment("/w", "/usr/bin"))[:3]
    ['HOME', 'LANG', 'NO_COLOR']
    """
    return {
        "PATH": path,
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "NO_COLOR": "1",
    }


def _venv_layout(
    venv: str,
    python: str,
    skeleton: str,
    symlinks: list[tuple[str, str]],
    binds: list[tuple[str, str]],
) -> str:
    """A venv at /opt/ragmeter/venv: its ``lib`` read-only, a ``pyvenv.cfg`` naming the interpreter's new home."""
    lines = Path(venv, "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line.split("=")[0].strip() not in ("home", "executable", "command")]
    config = os.path.join(skeleton, "pyvenv.cfg")
    Path(config).write_text("\n".join([f"home = {os.path.dirname(python)}", *kept]) + "\n", encoding="utf-8")
    os.chmod(config, 0o644)
    binds.append((config, f"{OPT}/venv/pyvenv.cfg"))
    for name in ("lib", "lib64"):
        path = os.path.join(venv, name)
        if os.path.islink(path):
            symlinks.append((os.readlink(path), f"{OPT}/venv/{name}"))
        elif os.path.isdir(path):
            binds.append((path, f"{OPT}/venv/{name}"))
    symlinks += [(python, f"{OPT}/venv/bin/{name}") for name in ("python", "python3")]
    return f"{OPT}/venv/bin/python"


def _pth_paths(venv: str) -> list[str]:
    """Folders that ``.pth`` files add to the import path (editable installs): not shown inside."""
    out: list[str] = []
    for site_dir in Path(venv).glob("lib*/python*/site-packages"):
        for pth in sorted(site_dir.glob("*.pth")):
            with contextlib.suppress(OSError):
                for line in pth.read_text(encoding="utf-8", errors="replace").splitlines():
                    line = line.strip()
                    if line and not line.startswith(("#", "import ", "import\t")):
                        folder = os.path.realpath(os.path.join(site_dir, line))
                        if os.path.isdir(folder) and folder not in out:
                            out.append(folder)
    return out
