"""Suite-wide guards and shared fixtures.

* Tests may only talk to the loopback range (127.0.0.0/8, ::1).
* ``ray_cluster``: one local Ray instance per session (per xdist worker), bound to 127.0.0.1, shared
  by the executor tests and the doc tests (mark Ray tests ``ray`` and ``xdist_group("ray")`` so
  ``--dist loadgroup`` runs them on one worker). Starting one takes ~10 s. Ray binds to the
  machine's address unless told it is a single-machine instance;
  ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (set before ``ray`` is imported) keeps every Ray process
  on 127.0.0.1, and the fixture checks it did.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import settings

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

# Hypothesis's per-example deadline is a wall-clock assertion: on a loaded 2-core machine an
# example can take 300 ms once and 0.5 ms the next time. No test asserts a time, so none here.
settings.register_profile("ragmeter", deadline=None)
settings.load_profile("ragmeter")

pytest_plugins = ["pytester"]  # tests of ragmeter's own pytest plugin

_original_connect = socket.socket.connect
_original_connect_ex = socket.socket.connect_ex


def _check(address: Any) -> None:
    if not isinstance(address, tuple) or not address:
        return  # unix sockets and the like
    host = address[0]
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        if host == "localhost":
            return
        raise RuntimeError(
            f"test tried to connect to {host!r}: only 127.0.0.0/8 is allowed in tests"
        ) from None
    if not ip.is_loopback:
        raise RuntimeError(f"test tried to connect to {host}: only 127.0.0.0/8 is allowed in tests")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(address)
    _original_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(address)
    return _original_connect_ex(self, address)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ray: starts (or uses) the session's local Ray instance")


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """The session's Ray instance (2 CPUs, no dashboard, loopback only)."""
    ray = pytest.importorskip("ray")
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:  # ray was imported before this conftest set the variable
        constants.ENABLE_RAY_CLUSTER = False
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        logging_level=logging.ERROR,
    )
    try:
        info = ray._private.worker.global_worker.node.address_info
        assert info["node_ip_address"] == "127.0.0.1", info
        assert info["gcs_address"].startswith("127.0.0.1:"), info
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(autouse=True, scope="session")
def _loopback_only() -> Iterator[None]:
    socket.socket.connect = _guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _guarded_connect_ex  # type: ignore[method-assign]
    yield
    socket.socket.connect = _original_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = _original_connect_ex  # type: ignore[method-assign]


@pytest.fixture(autouse=True)
def _history_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands that record run history write into a temporary database, never the repository."""
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path_factory.mktemp("history") / "history.sqlite"))


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Any:
    """``cli(argv) -> (exit code, stdout, stderr)``: run ``ragmeter ARGV`` in this process."""
    from ragmeter.cli import main

    def run(argv: list[str]) -> tuple[int, str, str]:
        with pytest.raises(SystemExit) as exc:
            main(argv)
        captured = capsys.readouterr()
        code = exc.value.code
        return (code if isinstance(code, int) else 0), captured.out, captured.err

    return run
