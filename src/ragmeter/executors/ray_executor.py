"""The Ray executor: pools of actors, tasks and a cluster-wide limiter on a Ray cluster.

- **Pools** (:meth:`RayExecutor.pool`) are actors, each holding one copy of the state
  (shipped once through the object store) and running up to ``per_worker`` calls at once
  (coroutines on the actor's event loop, plain functions on its threads). An actor whose
  process dies is restarted (``max_restarts``) and the calls it had are run again
  (``max_task_retries``), so a crashed worker costs time, never a result.
- **Tasks** (:meth:`RayExecutor.map_unordered`) reserve one CPU each and are retried when
  their worker dies (``max_retries``).
- **Limiters** are one named, detached actor (``ragmeter-limits`` in the ``ragmeter``
  namespace) that hands out leases per key: a semaphore for the whole cluster, shared by
  every ragmeter process connected to it. Holders renew their leases; the lease of a
  holder that died is reclaimed within ``lease_s`` seconds.

The actors and tasks are in :mod:`ragmeter.executors.ray_pool`, the limiter in
:mod:`ragmeter.executors.ray_limits`; this module connects to (or starts) Ray and hands out
pools, tasks and limiters.

Without an address (and without ``RAY_ADDRESS``) a private Ray instance is started for the
run and stopped after it; it binds to 127.0.0.1 only. ``ray`` itself is imported only
when the executor starts.

>>> RayExecutor(address="auto").describe()["kind"]
'ray'
>>> parse_address("ray://head.example:10001")
('head.example', 10001)
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from types import ModuleType
from typing import Any, TypeVar

from ragmeter.errors import ConfigError
from ragmeter.executors.base import ExecutorKind
from ragmeter.executors.ray_limits import RayLimiter, limits_actor
from ragmeter.executors.ray_pool import RayPool, RayShared, import_ray, remote_item, remote_pool_worker

T = TypeVar("T")
S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the item type of map_unordered
R = TypeVar("R")

MAX_RESTARTS = 3
"""How often a pool's actor is restarted after its process died."""
MAX_RETRIES = 3
"""How often a call (actor task or task) is run again after its worker died."""
CONNECT_TIMEOUT_S = 5.0
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Set to 0 before Ray starts, Ray treats the machine as a single node and binds to 127.0.0.1."""


def parse_address(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` or ``ray://HOST:PORT`` address; ``None`` for ``auto``/``local``.

    >>> parse_address("127.0.0.1:6379"), parse_address("auto")
    (('127.0.0.1', 6379), None)
    >>> parse_address("head")
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: --ray-address: 'head' is not a Ray address (auto, HOST:PORT or ray://HOST:PORT)
    """
    if address in ("auto", "local"):
        return None
    target = address.removeprefix("ray://")
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(
            f"{address!r} is not a Ray address (auto, HOST:PORT or ray://HOST:PORT)", where="--ray-address"
        )
    return host.strip("[]"), int(port)


def check_reachable(address: str, *, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Fail fast (one line) when nothing answers at ``address``, before Ray retries for minutes."""
    target = parse_address(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=timeout_s).close()
    except ConnectionRefusedError:
        reason = "connection refused"
    except TimeoutError:
        reason = f"no answer within {timeout_s:g} s"
    except socket.gaierror:
        reason = "unknown host"
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
    else:
        return
    raise ConfigError(
        f"cannot reach a Ray cluster at {address} ({reason}); start one with 'ray start --head' "
        "or check the address",
        where="--ray-address",
    )


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:299] + "…"


def _keep_local_instance_on_loopback() -> None:
    """Make the Ray instance about to be started bind to 127.0.0.1 only (see :data:`LOOPBACK_ENV`)."""
    os.environ.setdefault(LOOPBACK_ENV, "0")
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None and os.environ[LOOPBACK_ENV] == "0":
        constants.ENABLE_RAY_CLUSTER = False  # type: ignore[attr-defined]  # ray read it at import


def _raylet_messages_to_stderr() -> None:
    """Ray prints the raylet's messages (a worker died, a task is retried) on stdout; send them to stderr.

    ``ragmeter ... --json`` promises one JSON object on stdout. Ray looks the printer up at
    each message, so wrapping it is enough; nothing happens if a Ray version has no such printer.
    """
    worker = sys.modules.get("ray._private.worker")
    printer = getattr(worker, "print_to_stdstream", None)
    if worker is None or printer is None or getattr(printer, "ragmeter_wrapped", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        printer(dict(data, is_err=True), ignore_prefix)

    to_stderr.ragmeter_wrapped = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr  # type: ignore[attr-defined]


class RayExecutor:
    """Run work on a Ray cluster (see the module docstring)."""

    kind: ExecutorKind = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        workers: int | None = None,
        runtime_env: dict[str, Any] | None = None,
        num_cpus: int | None = None,
    ) -> None:
        self.address = address or os.environ.get("RAY_ADDRESS") or None
        self.workers = workers
        self.runtime_env = runtime_env
        self.num_cpus = num_cpus
        self._started = False
        self._owned = False
        self._pools: list[RayPool[Any]] = []
        self._lock = threading.Lock()

    @property
    def remote(self) -> bool:
        """Always True: state and arguments are pickled and sent to workers."""
        return True

    def start(self) -> None:
        """Join the cluster at :attr:`address`, reuse the Ray this process already joined, or start one."""
        with self._lock:
            if self._started:
                return
            if self.address is not None:
                check_reachable(self.address)
            else:
                _keep_local_instance_on_loopback()
            ray = import_ray()
            if not ray.is_initialized():
                self._init(ray)
                self._owned = True
            self._started = True

    def _init(self, ray: ModuleType) -> None:
        options: dict[str, Any] = {
            "log_to_driver": False,
            "logging_level": logging.ERROR,
            "runtime_env": self.runtime_env,
        }
        if self.address is None:
            options.update(include_dashboard=False, _node_ip_address="127.0.0.1", num_cpus=self.num_cpus)
        from rich.console import Console

        what = (
            "starting a private Ray instance"
            if self.address is None
            else f"connecting to Ray at {self.address}"
        )
        try:
            with Console(stderr=True).status(f"{what} …"):  # a spinner on a terminal, nothing otherwise
                ray.init(address=self.address, **options)
            _raylet_messages_to_stderr()
        except Exception as exc:
            if self.address is None:
                raise ConfigError(f"cannot start a local Ray instance: {_one_line(exc)}") from None
            if self.address == "auto":
                raise ConfigError(
                    "no running Ray cluster found on this machine; start one with 'ray start --head' "
                    f"({_one_line(exc)})",
                    where="--ray-address auto",
                ) from None
            raise ConfigError(
                f"cannot connect to the Ray cluster at {self.address}: {_one_line(exc)}",
                where="--ray-address",
            ) from None

    def describe(self) -> dict[str, Any]:
        """Kind, address (``None``: a private local instance), CPUs, nodes and Ray's version."""
        info: dict[str, Any] = {"kind": "ray", "address": self.address}
        if self._started:
            ray = import_ray()
            info.update(
                ray_version=ray.__version__,
                cpus=self.cpus(),
                nodes=sum(1 for node in ray.nodes() if node.get("Alive")),
                started_here=self._owned,
            )
        return info

    def cpus(self) -> int:
        """The cluster's CPUs (at most ``workers`` when given)."""
        self.start()
        total = int(import_ray().cluster_resources().get("CPU", 1)) or 1
        return min(total, self.workers) if self.workers else total

    def share(self, value: T) -> RayShared[T]:
        """Put ``value`` in the object store."""
        self.start()
        return RayShared(import_ray().put(value))

    def map_unordered(
        self, fn: Callable[[I], R], items: Sequence[I], *, cpus: float = 1.0
    ) -> Iterator[tuple[int, R]]:
        """One task per item (``cpus`` each, retried when its worker dies); results as they finish."""
        if not items:
            return
        self.start()
        ray = import_ray()
        task = remote_item().options(num_cpus=cpus, max_retries=MAX_RETRIES)
        pending = {task.remote(fn, item): index for index, item in enumerate(items)}
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                for ref in done:
                    index = pending.pop(ref)
                    yield index, ray.get(ref)
        finally:
            for ref in pending:
                with suppress(Exception):  # already finished
                    ray.cancel(ref, force=True)

    def pool(
        self,
        state: S,
        *,
        name: str,
        size: int,
        per_worker: int,
        cpus: float = 1.0,
        start: Callable[[S], Any] | None = None,
    ) -> RayPool[S]:
        """``size`` actors (at most ``workers``), each with a copy of ``state``."""
        self.start()
        if self.workers:
            size = min(size, self.workers)
        size = max(1, size)
        per_worker = max(1, per_worker)
        actor_class = remote_pool_worker().options(
            num_cpus=cpus,
            max_concurrency=per_worker + 2,
            max_restarts=MAX_RESTARTS,
            max_task_retries=MAX_RETRIES,
            scheduling_strategy="SPREAD",
        )
        # The state goes by value (Ray keeps an actor's arguments to restart it). States are
        # small: a suite, a solver and its validators, an endpoint.
        actors = [actor_class.remote(state, per_worker, start) for _ in range(size)]
        pool: RayPool[S] = RayPool(actors, per_worker=per_worker, name=name)
        with self._lock:
            self._pools.append(pool)
        return pool

    def limiter(self, key: str, limit: int, *, lease_s: float = 10.0) -> RayLimiter:
        """A cluster-wide cap for ``key``; the limiter actor is made now, on the driver."""
        self.start()
        limits_actor()
        return RayLimiter(key, limit, lease_s=lease_s)

    def limiter_stats(self, key: str) -> dict[str, int]:
        """How many leases of ``key`` are out and the most ever out at once."""
        stats: dict[str, int] = import_ray().get(limits_actor().stats.remote(key))
        return stats

    def close(self) -> None:
        """Kill the pools' actors; stop Ray if this executor started it."""
        with self._lock:
            pools, self._pools = self._pools, []
            started, owned = self._started, self._owned
            self._started = self._owned = False
        if not started:
            return
        for pool in pools:
            pool.close()
        if owned:
            for cached in (limits_actor, remote_item, remote_pool_worker):
                cached.cache_clear()
            import_ray().shutdown()
