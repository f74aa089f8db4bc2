"""The first program of every sandbox: build its root, drop every privilege, set the limits, run the command.

:mod:`ragmeter.mining.sandbox` runs this file's text as ``python -I -S -c <text> CONFIG COMMAND...``.
It uses the standard library only: ragmeter is not visible inside the sandbox. ``CONFIG`` is JSON:

- ``root``: ``null`` when bubblewrap has built the sandbox's root already; for the ``unshare``
  mode, the layout to build in the fresh mount namespace that ``unshare`` made (``mountpoint``,
  ``dirs``, ``symlinks``, read-only ``binds``, ``workdir`` shown at ``sandbox_workdir``), then
  pivot into it.
- ``confine``: the process is PID 1 of the sandbox's new PID namespace (both modes). It forks
  the command and stays as its init, reaping orphans; when the command ends, it exits with the
  command's status and the kernel kills whatever the command left behind before the sandbox
  tool (bwrap ``--as-pid-1``, ``unshare --fork``) sees the init exit. The command then drops
  every capability (and keeps them dropped across ``execve``), sets ``no_new_privs``, joins a
  new session keyring and starts a new session. False only for ``--unsafe-no-sandbox``: the
  command just gets the limits.
- ``uid``: when ragmeter runs as root, the unprivileged uid the command runs as; else ``-1``.
- ``rlimits``: ``[[name, value], ...]`` with names of the :mod:`resource` module.
- ``chdir``: the folder the command starts in (entered after dropping privileges).
- ``marker``: written to stdout just before the command starts (the start of its output).

Before the command starts, the result is checked (no capability left, ``no_new_privs`` set, not
the host's root). Any failure prints one line ``sandbox: ...`` and exits 126: nothing ever runs
half-confined.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import sys
from typing import Any

FAILED = 126

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
_LOCKED: tuple[tuple[int, int], ...] = ((1, MS_RDONLY), (2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC))
_LOCKED += ((1024, MS_NOATIME), (2048, MS_NODIRATIME), (4096, MS_RELATIME))
"""Linux statvfs flags (ST_RDONLY...) -> mount flags: a bind remount inside a user namespace must keep them."""

_SYSCALLS = {  # machine: (pivot_root, keyctl)
    "x86_64": (155, 250),
    "aarch64": (41, 219),
    "riscv64": (41, 219),
    "loongarch64": (41, 219),
    "ppc64le": (203, 280),
    "s390x": (217, 280),
}
PR_CAPBSET_DROP, PR_SET_SECUREBITS, PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT = 24, 28, 38, 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECURE_NOROOT_ALL = 0x2F  # NOROOT, NO_SETUID_FIXUP, each locked, and KEEP_CAPS_LOCKED
KEYCTL_JOIN_SESSION_KEYRING = 1
DEVICES = ("null", "zero", "full", "random", "urandom")
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus")

_LIBC: list[Any] = []

# -- seccomp -------------------------------------------------------------------------------------------
# System calls refused with EPERM: a confined, capability-less process needs none of them, and each
# is kernel attack surface or a way around the other layers (research B2: ptrace and
# process_vm_* on other processes, mounts and new namespaces, keyrings, bpf, perf, userfaultfd,
# io_uring that bypasses syscall monitoring, kernel modules and kexec, file handles, reboot, swap,
# the kernel log, accounting, quotas). Numbers from the kernel's tables (unistd_64.h, asm-generic).
_DENIED: dict[str, tuple[int, int]] = {  # name: (x86_64, asm-generic: aarch64, riscv64, loongarch64)
    "ptrace": (101, 117),
    "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "bpf": (321, 280),
    "perf_event_open": (298, 241),
    "userfaultfd": (323, 282),
    "mount": (165, 40),
    "umount2": (166, 39),
    "pivot_root": (155, 41),
    "chroot": (161, 51),
    "unshare": (272, 97),
    "setns": (308, 268),
    "open_tree": (428, 428),
    "move_mount": (429, 429),
    "fsopen": (430, 430),
    "fsconfig": (431, 431),
    "fsmount": (432, 432),
    "fspick": (433, 433),
    "mount_setattr": (442, 442),
    "kexec_load": (246, 104),
    "kexec_file_load": (320, 294),
    "init_module": (175, 105),
    "finit_module": (313, 273),
    "delete_module": (176, 106),
    "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264),
    "reboot": (169, 142),
    "swapon": (167, 224),
    "swapoff": (168, 225),
    "syslog": (103, 116),
    "acct": (163, 89),
    "quotactl": (179, 60),
    "io_uring_setup": (425, 425),
    "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427),
}
_X86_64_NUMBERS = tuple(x86_64 for x86_64, _ in _DENIED.values())
_GENERIC_NUMBERS = tuple(generic for _, generic in _DENIED.values())
_SECCOMP_ABI = {  # machine: (AUDIT_ARCH_*, denied numbers, ioctl, clone, clone3)
    "x86_64": (0xC000003E, _X86_64_NUMBERS, 16, 56, 435),
    "aarch64": (0xC00000B7, _GENERIC_NUMBERS, 29, 220, 435),
    "riscv64": (0xC00000F3, _GENERIC_NUMBERS, 29, 220, 435),
    "loongarch64": (0xC0000102, _GENERIC_NUMBERS, 29, 220, 435),
}
_TTY_INJECTION = (0x5412, 0x541C)  # ioctl TIOCSTI (type into the terminal, CVE-2017-5226), TIOCLINUX
_NEW_NAMESPACES = 0x7E020000  # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_X32_SYSCALL_BIT = 0x40000000
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_KILL_PROCESS, _ALLOW, _ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
_EPERM, _ENOSYS = 1, 38
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


def seccomp_program(machine: str) -> list[tuple[int, int, int, int]]:
    """The filter for ``machine`` as BPF instructions ``(code, jt, jf, k)``.

    Another architecture's system calls (i386 on x86_64) kill the process; x32 calls, the
    calls of ``_DENIED``, ``ioctl`` TIOCSTI/TIOCLINUX and ``clone`` with a new-namespace flag
    fail with EPERM; ``clone3`` (whose flags a filter cannot read) fails with ENOSYS, so that
    the C library falls back to ``clone``. Everything else is allowed.

    >>> program = seccomp_program("x86_64")
    >>> program[0], program[-1]
    ((32, 0, 0, 4), (6, 0, 0, 327681))
    """
    if machine not in _SECCOMP_ABI:
        raise SandboxSetupError(f"no seccomp filter for this machine ({machine}); nothing runs unfiltered")
    arch, denied, ioctl, clone, clone3 = _SECCOMP_ABI[machine]
    body: list[tuple[int, int, int, int]] = [(_LD_W_ABS, 0, 0, 0)]  # the call's number
    deny: list[int] = []  # indexes of the jumps to the EPERM return, resolved below
    if machine == "x86_64":
        deny.append(len(body))
        body.append((_JGE, 0, 0, _X32_SYSCALL_BIT))
    for number in denied:
        deny.append(len(body))
        body.append((_JEQ, 0, 0, number))
    body.append((_JEQ, 0, 1, clone3))
    body.append((_RET, 0, 0, _ERRNO | _ENOSYS))
    # ioctl: the command is an unsigned int, the low 32 bits of args[1] (offset 24, little-endian)
    body.append((_JEQ, 0, 2 + len(_TTY_INJECTION), ioctl))
    body.append((_LD_W_ABS, 0, 0, 24))
    for command in _TTY_INJECTION:
        deny.append(len(body))
        body.append((_JEQ, 0, 0, command))
    body.append((_RET, 0, 0, _ALLOW))
    body.append((_JEQ, 0, 2, clone))  # clone: its flags are args[0] (offset 16)
    body.append((_LD_W_ABS, 0, 0, 16))
    deny.append(len(body))
    body.append((_JSET, 0, 0, _NEW_NAMESPACES))
    body.append((_RET, 0, 0, _ALLOW))
    eperm = len(body)
    body.append((_RET, 0, 0, _ERRNO | _EPERM))
    for i in deny:  # jump-if-true to the EPERM return
        code, _, jf, k = body[i]
        body[i] = (code, eperm - i - 1, jf, k)
    header = [(_LD_W_ABS, 0, 0, 4), (_JEQ, 1, 0, arch), (_RET, 0, 0, _KILL_PROCESS)]
    return header + body


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def install_seccomp() -> None:
    """Load :func:`seccomp_program` for this machine (needs ``no_new_privs``); verify it is in force."""
    program = seccomp_program(os.uname().machine)
    filters = (_SockFilter * len(program))(*(_SockFilter(*ins) for ins in program))
    fprog = _SockFprog(len(program), filters)
    libc = _libc()
    result = libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0)
    _check(result, "seccomp filter")
    if _status().get("Seccomp", "0").strip() != "2":
        raise SandboxSetupError("the seccomp filter is not in force")


def _libc() -> Any:
    """The C library (loaded on first use, so that importing this module works anywhere)."""
    if not _LIBC:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mount.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_ulong,
            ctypes.c_char_p,
        ]
        libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
        libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        _LIBC.append(libc)
    return _LIBC[0]


class SandboxSetupError(Exception):
    """The sandbox could not be set up; the command must not run."""


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise SandboxSetupError(f"{what}: {os.strerror(errno)}")


def _b(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    result = _libc().mount(_b(source), _b(target), _b(fstype), flags, _b(data))
    _check(result, f"mount {source or fstype or ''} on {target}")


def _locked_flags(path: str) -> int:
    flags = os.statvfs(path).f_flag
    return sum(mount_flag for stat_flag, mount_flag in _LOCKED if flags & stat_flag)


def _bind(source: str, target: str, *, readonly: bool) -> None:
    """Bind ``source`` at ``target`` (not its sub-mounts), then make it nosuid, nodev and maybe read-only."""
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "a"):
            pass
    _mount(source, target, None, MS_BIND)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | _locked_flags(source)
    _mount(None, target, None, flags | (MS_RDONLY if readonly else 0))


def _syscall_numbers() -> tuple[int, int]:
    machine = os.uname().machine
    if machine not in _SYSCALLS:
        raise SandboxSetupError(f"the unshare mode does not know this machine ({machine}); use bubblewrap")
    return _SYSCALLS[machine]


def build_root(root: dict[str, Any]) -> None:
    """Build the sandbox's file system in a fresh mount namespace and make it the root (``unshare`` mode)."""
    os.umask(0o022)
    top = root["mountpoint"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the host
    _mount("tmpfs", top, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096")
    for path in root["dirs"]:
        os.makedirs(top + path, exist_ok=True)
    for target, path in root["symlinks"]:
        os.makedirs(os.path.dirname(top + path), exist_ok=True)
        os.symlink(target, top + path)
    for source, path in root["binds"]:
        _bind(source, top + path, readonly=True)
    _bind(root["workdir"], top + root["sandbox_workdir"], readonly=False)
    os.makedirs(top + "/proc")
    _mount("proc", top + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_READ_ONLY:  # as bubblewrap does: the kernel's knobs stay read-only
        path = f"{top}/proc/{name}"
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND)
            _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    dev = top + "/dev"
    os.makedirs(dev)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64")
    for name in DEVICES:
        with open(f"{dev}/{name}", "a"):
            pass
        _mount(f"/dev/{name}", f"{dev}/{name}", None, MS_BIND)
    for name, target in (("fd", ""), ("stdin", "/0"), ("stdout", "/1"), ("stderr", "/2")):
        os.symlink(f"/proc/self/fd{target}", f"{dev}/{name}")
    _mount(None, dev, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    _mount(None, top, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    pivot_root, _ = _syscall_numbers()
    os.chdir(top)
    _check(_libc().syscall(pivot_root, b".", b"."), "pivot_root")
    _check(_libc().umount2(b".", MNT_DETACH), "detaching the host's root")
    os.chdir("/")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _read(path: str) -> str:
    """A small file's text (binary read: after the pivot, no codec module can be imported any more)."""
    with open(path, "rb") as handle:
        return handle.read().decode()


def _status() -> dict[str, str]:
    lines = _read("/proc/self/status").splitlines()
    return dict(line.split(":\t", 1) for line in lines if ":\t" in line)


def _is_host_root() -> bool:
    """Whether this is uid 0 of the initial user namespace (not uid 0 of a user namespace mapped to someone else)."""
    if os.getuid() != 0 and os.geteuid() != 0:
        return False
    return _read("/proc/self/uid_map").split()[:2] == ["0", "0"]


def drop_privileges(uid: int) -> None:
    """Switch to ``uid`` (when root), drop every capability for good, set ``no_new_privs``; verify."""
    if int(_status().get("CapEff", "0"), 16) != 0:
        if (
            uid < 0 and os.getuid() == 0
        ):  # uid 0 of a user namespace: execve must never give capabilities back
            _check(_libc().prctl(PR_SET_SECUREBITS, SECURE_NOROOT_ALL, 0, 0, 0), "securebits")
        for cap in range(int(_read("/proc/sys/kernel/cap_last_cap")) + 1):
            _check(_libc().prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"dropping capability {cap}")
    if uid >= 0:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    _libc().prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(0x20080522, 0)
    _check(_libc().capset(ctypes.byref(header), (_CapData * 2)()), "dropping capabilities")
    _check(_libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    machine = os.uname().machine
    if machine in _SYSCALLS:  # the invoker's session keyring stays outside (best effort: may be filtered)
        _libc().syscall(_SYSCALLS[machine][1], KEYCTL_JOIN_SESSION_KEYRING, None)
    status = _status()
    for field in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        if int(status.get(field, "1"), 16) != 0:
            raise SandboxSetupError(f"capabilities left after dropping them ({field} {status.get(field)})")
    if status.get("NoNewPrivs", "0").strip() != "1":
        raise SandboxSetupError("no_new_privs is not set")
    if _is_host_root():
        raise SandboxSetupError("still the host's root after dropping privileges")


def set_limits(rlimits: list[tuple[str, int]]) -> None:
    """Lower each limit to ``value`` (never above the hard limit already in force)."""
    for name, value in rlimits:
        which = getattr(resource, name)
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        soft = value
        if name == "RLIMIT_CPU":  # SIGXCPU at the soft limit, SIGKILL one second later
            hard = value + 1 if hard == resource.RLIM_INFINITY else min(value + 1, hard)
        else:
            hard = value
        resource.setrlimit(which, (soft, hard))


def start(config: dict[str, Any], command: list[str]) -> None:
    """Confine this process as ``config`` says and replace it with ``command``."""
    if config["confine"]:
        if os.getsid(0) != os.getpid():
            os.setsid()
        drop_privileges(config["uid"])
        install_seccomp()
    os.chdir(config["chdir"])
    set_limits([(name, int(value)) for name, value in config["rlimits"]])
    os.closerange(3, 1 << 20)
    os.write(1, config["marker"].encode())
    os.execv(command[0], command)


def _init(child: int) -> int:
    """PID 1 of the sandbox: reap every orphan until the command ends; return its exit status."""
    while True:
        pid, status = os.wait()
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return code if code >= 0 else 128 - code


def main(argv: list[str]) -> int:
    """``CONFIG COMMAND...`` (see the module's docstring)."""
    try:
        config = json.loads(argv[0])
        command = argv[1:]
        if not config["confine"]:
            start(config, command)
            return FAILED  # pragma: no cover - start() replaced this process
        if config["root"] is not None:
            build_root(config["root"])
        child = os.fork()
        if child == 0:
            try:
                start(config, command)
            except BaseException as exc:
                os.write(2, f"sandbox: {exc}\n".encode())
            os._exit(FAILED)
        os.closerange(3, 1 << 20)
        return _init(child)
    except (OSError, SandboxSetupError, ValueError, KeyError) as exc:
        os.write(2, f"sandbox: {exc}\n".encode())
        return FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
