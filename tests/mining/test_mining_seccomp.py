"""The sandbox's seccomp filter, its BPF program run by a small interpreter (in force: test_mining_sandbox)."""

from __future__ import annotations

import struct

import pytest

from ragmeter.mining import sandbox_launcher as launcher

X86_64, I386, AARCH64 = 0xC000003E, 0x40000003, 0xC00000B7
ALLOW, EPERM, ENOSYS, KILL = 0x7FFF0000, 0x00050001, 0x00050026, 0x80000000


def run_filter(
    program: list[tuple[int, int, int, int]], nr: int, arch: int, args: tuple[int, ...] = ()
) -> int:
    """Classic BPF over ``struct seccomp_data`` (nr, arch, ip, args[6]), little-endian: the action."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    acc, pc = 0, 0
    for _ in range(len(program) + 1):  # no loops in classic BPF: each step moves forward
        code, jt, jf, k = program[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == 0x06:  # ret k
            return k
        elif code in (0x15, 0x35, 0x45):  # jeq / jge / jset k
            hit = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if hit else jf)
        else:
            raise AssertionError(f"unknown instruction {code:#x}")
    raise AssertionError("the program ran off its end")


@pytest.mark.parametrize(("machine", "arch"), [("x86_64", X86_64), ("aarch64", AARCH64)])
def test_denied_calls_fail_and_everything_else_runs(machine: str, arch: int) -> None:
    program = launcher.seccomp_program(machine)
    assert len(program) < 256  # every jump fits in a byte
    _, denied, ioctl, clone, clone3 = launcher._SECCOMP_ABI[machine]
    assert len(denied) == len(launcher._DENIED) == len(set(denied))
    for number in denied:
        assert run_filter(program, number, arch) == EPERM, number
    allowed = set(range(450)) - set(denied) - {ioctl, clone, clone3}
    assert {n for n in allowed if run_filter(program, n, arch) != ALLOW} == set()
    assert run_filter(program, clone3, arch) == ENOSYS  # the C library falls back to clone
    assert run_filter(program, clone, arch, (0x01200011,)) == ALLOW  # fork's flags
    assert run_filter(program, clone, arch, (0x003D0F00,)) == ALLOW  # a thread's flags
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000):
        assert run_filter(program, clone, arch, (0x01200011 | flag,)) == EPERM, hex(flag)  # CLONE_NEW*
    assert run_filter(program, ioctl, arch, (0, 0x5412)) == EPERM  # TIOCSTI
    assert run_filter(program, ioctl, arch, (0, 0x1_0000_5412)) == EPERM  # only the low 32 bits count
    assert run_filter(program, ioctl, arch, (0, 0x541C)) == EPERM  # TIOCLINUX
    assert run_filter(program, ioctl, arch, (0, 0x5401)) == ALLOW  # TCGETS
    assert run_filter(program, 0, I386) == KILL  # another architecture's calls
    assert run_filter(program, 0, 0) == KILL


def test_x32_calls_fail_on_x86_64() -> None:
    program = launcher.seccomp_program("x86_64")
    assert run_filter(program, 0x40000000 + 0, X86_64) == EPERM
    assert run_filter(program, 0x40000000 + 101, X86_64) == EPERM


def test_an_unknown_machine_refuses() -> None:
    with pytest.raises(launcher.SandboxSetupError, match=r"no seccomp filter for this machine \(ppc64le\)"):
        launcher.seccomp_program("ppc64le")
