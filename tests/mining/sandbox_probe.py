"""Solver code that tries to escape the sandbox: one line per attempt, ``<attempt>\t<blocked|ESCAPED>\t<detail>``.

The tests copy this file into a sandbox's work dir with ``probe.json`` (what to aim at: host
paths, the test's listeners, the name of a secret in the test's environment, a token in a host
process's command line, the sandbox's limits) and run it there. The attempts follow the escape
checklist of research/speed_sandbox_anchors.md (B2): reads, writes, links, network, privilege,
file descriptors, processes and resources. The last attempt leaves a process behind (setsid and
a double fork) that holds a lock on ``survivor.lock`` forever; the tests check it died with the
sandbox. Standard library only: it runs inside the sandbox.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import Any

CONFIG: dict[str, Any] = {}  # probe.json, read by main()
MIB = 1024 * 1024


def report(attempt: str, escaped: bool, detail: object) -> None:
    text = " ".join(str(detail).split())[:160]
    print(f"{attempt}\t{'ESCAPED' if escaped else 'blocked'}\t{text}", flush=True)


def attempt(name: str, action: Callable[[], object]) -> None:
    """An action that must raise (``OSError`` and the like) to count as blocked."""
    try:
        result = action()
    except Exception as exc:  # any failure is the sandbox doing its job
        report(name, False, f"{type(exc).__name__}: {exc}")
    else:
        report(name, True, result)


def read(path: str) -> Callable[[], object]:
    def action() -> object:
        if os.path.isdir(path):
            return os.listdir(path)
        with open(path, "rb") as handle:
            return handle.read(64)

    return action


def write(path: str) -> Callable[[], object]:
    def action() -> object:
        with open(path, "w") as handle:
            handle.write("escaped")
        return f"wrote {path}"

    return action


def connect(family: int, address: object) -> Callable[[], object]:
    def action() -> object:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(3)
            sock.connect(address)
        return "connected"

    return action


def check(name: str, escaped: bool, detail: object) -> None:
    report(name, escaped, detail)


def secret_seen() -> list[str]:
    """Where the test's secret (its name) shows: this environment or any visible process's."""
    name = CONFIG["secret_name"].encode()
    seen = ["os.environ"] if CONFIG["secret_name"] in os.environ else []
    for pid in ["self", *sorted(p for p in os.listdir("/proc") if p.isdigit())]:
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if name in handle.read():
                    seen.append(f"/proc/{pid}/environ")
        except OSError:
            continue
    return seen


def host_process_seen() -> list[str]:
    token = CONFIG["token"].encode()
    seen = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if token in handle.read():
                    seen.append(pid)
        except OSError:
            continue
    return seen


def status(field: str) -> str:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].strip()
    return "?"


def host_root() -> bool:
    with open("/proc/self/uid_map") as handle:
        return os.geteuid() == 0 and handle.read().split()[:2] == ["0", "0"]


def become_root() -> object:
    os.setuid(0)  # a no-op where the sandbox is uid 0 of a user namespace (older util-linux): harmless
    if int(status("CapEff"), 16) == 0 and not host_root():
        raise PermissionError(f"uid {os.getuid()} of the sandbox's user namespace, no capabilities")
    return f"uid 0, CapEff {status('CapEff')}"


def mount_tmpfs() -> object:
    libc = ctypes.CDLL(None, use_errno=True)
    os.makedirs("mnt", exist_ok=True)
    if libc.mount(b"tmpfs", b"mnt", b"tmpfs", 0, None) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return "mounted"


def session_keyring() -> int | None:
    numbers = {"x86_64": 250, "aarch64": 219}
    machine = os.uname().machine
    if machine not in numbers:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.syscall(numbers[machine], 0, -3, 0))  # KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING


SYSCALLS = {  # machine: (io_uring_setup, userfaultfd, ptrace)
    "x86_64": (425, 323, 101),
    "aarch64": (425, 282, 117),
}


def syscall(name: str, *args: object) -> Callable[[], object]:
    """A raw system call by name (for this machine), failing with its errno."""

    def action() -> object:
        machine = os.uname().machine
        if machine not in SYSCALLS:
            raise OSError(f"no number for {name} on {machine}")
        number = SYSCALLS[machine][("io_uring_setup", "userfaultfd", "ptrace").index(name)]
        libc = ctypes.CDLL(None, use_errno=True)
        result = libc.syscall(number, *args)
        if result < 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return f"{name} returned {result}"

    return action


def unshare_user_namespace() -> object:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) != 0:  # CLONE_NEWUSER: no capabilities needed without a filter
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return "a new user namespace"


def type_into_the_terminal() -> object:
    import termios

    fcntl.ioctl(0, termios.TIOCSTI, b"x")  # stdin: refused by the filter before the tty check
    return "typed into the terminal"


def fork_bomb() -> None:
    """Fork (children wait on a pipe) until the process limit stops it."""
    limit = CONFIG["max_processes"]
    read_end, write_end = os.pipe()
    children, error = [], "none"
    for _ in range(limit * 4):
        try:
            pid = os.fork()
        except OSError as exc:
            error = errno.errorcode.get(exc.errno or 0, str(exc))
            break
        if pid == 0:
            os.close(write_end)
            os.read(read_end, 1)
            os._exit(0)
        children.append(pid)
    os.close(write_end)
    for pid in children:
        os.waitpid(pid, 0)
    check(
        "fork bomb beyond the process limit", len(children) >= limit, f"{len(children)} forks, then {error}"
    )


def cpu_spin() -> None:
    pid = os.fork()
    if pid == 0:
        while True:
            pass
    _, code = os.waitpid(pid, 0)
    killed = os.WIFSIGNALED(code) and os.WTERMSIG(code) in (signal.SIGXCPU, signal.SIGKILL)
    check("spin the CPU past its limit", not killed, f"child ended by {code}")


def leave_a_survivor() -> None:
    """setsid and a double fork: a grandchild holding survivor.lock, meant to outlive the sandbox."""
    ready_read, ready_write = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            handle = open("survivor.lock", "w")  # noqa: SIM115 - held until the process dies
            fcntl.flock(handle, fcntl.LOCK_EX)
            os.write(ready_write, b"1")
            while True:
                time.sleep(60)
        os._exit(0)
    os.read(ready_read, 1)
    check("leave a setsid/double-fork survivor", False, "survivor started; the test checks its lock")


def main() -> None:
    with open("probe.json", encoding="utf-8") as handle:
        CONFIG.update(json.load(handle))
    for path in CONFIG["read"]:
        attempt(f"read {path}", read(path))
    check("secret in an environment or /proc/*/environ", bool(secret_seen()), secret_seen())
    host_tmp = [name for name in os.listdir("/tmp") if name != "work"]
    check("list the host's /tmp", bool(host_tmp), host_tmp[:5])
    check("see a host process", bool(host_process_seen()), host_process_seen())
    for path in CONFIG["write"]:
        attempt(f"write {path}", write(path))
    attempt("write into the interpreter's prefix", write(os.path.join(sys.prefix, "escaped.txt")))
    attempt("hard link /etc/passwd into the work dir", lambda: os.link("/etc/passwd", "passwd-link"))
    attempt("tcp to the test's 127.0.0.1 listener", connect(socket.AF_INET, ("127.0.0.1", CONFIG["port"])))
    attempt("abstract unix socket of the test", connect(socket.AF_UNIX, "\0" + CONFIG["abstract"]))
    interfaces = [name for _, name in socket.if_nameindex() if name != "lo"]
    check("network interface other than lo", bool(interfaces), interfaces)
    check("capabilities left (CapEff)", int(status("CapEff"), 16) != 0, status("CapEff"))
    check("capabilities left (CapPrm)", int(status("CapPrm"), 16) != 0, status("CapPrm"))
    check("no_new_privs unset", status("NoNewPrivs") != "1", status("NoNewPrivs"))
    check("runs as the host's root", host_root(), f"uid {os.getuid()}")
    attempt("become root with capabilities (setuid 0)", become_root)
    attempt("mount a tmpfs", mount_tmpfs)
    attempt("chroot", lambda: os.chroot("/"))
    check("no seccomp filter", status("Seccomp") != "2", status("Seccomp"))
    params = ctypes.create_string_buffer(120)  # struct io_uring_params
    attempt("io_uring (bypasses syscall monitoring)", syscall("io_uring_setup", 4, params))
    attempt("userfaultfd", syscall("userfaultfd", 0))
    attempt("ptrace itself (PTRACE_TRACEME)", syscall("ptrace", 0, 0, 0, 0))
    attempt("ptrace the sandbox's init (PTRACE_ATTACH pid 1)", syscall("ptrace", 16, 1, 0, 0))
    attempt("unshare a new user namespace", unshare_user_namespace)
    attempt("type into the terminal (TIOCSTI)", type_into_the_terminal)
    keyring = session_keyring()
    check("the invoker's session keyring", keyring == CONFIG["keyring"], keyring)
    extra = sorted(set(os.listdir("/proc/self/fd")) - {"0", "1", "2"})
    check("inherited file descriptors", len(extra) > 1, extra)  # one is the listing's own
    fork_bomb()
    attempt("allocate twice the memory limit", lambda: len(bytearray(2 * CONFIG["memory_mb"] * MIB)))
    attempt("write a file past the size limit", lambda: write_big(2 * CONFIG["file_size_mb"] * MIB))
    cpu_spin()
    leave_a_survivor()


def write_big(size: int) -> object:
    with open("big.bin", "wb") as handle:
        handle.write(b"x" * size)
    return f"wrote {size} bytes"


if __name__ == "__main__":
    main()
