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

Without an address (and without ``RAY_ADDRESS``) a private Ray instance is started for the
run and stopped after it; it binds to 127.0.0.1 only. ``ray`` itself is imported only
here, and only when the executor starts.

>>> RayExecutor(address="auto").describe()["kind"]
'ray'
>>> parse_address("ray://head.example:10001")
('head.example', 10001)
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager, suppress
from types import ModuleType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from ragmeter.errors import ConfigError
from ragmeter.executors.base import RAY_MISSING, ExecutorKind

T = TypeVar("T")
S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the item type of map_unordered
R = TypeVar("R")
P = ParamSpec("P")

MAX_RESTARTS = 3
"""How often a pool's actor is restarted after its process died."""
MAX_RETRIES = 3
"""How often a call (actor task or task) is run again after its worker died."""
LIMITS_ACTOR = "ragmeter-limits"
NAMESPACE = "ragmeter"
CONNECT_TIMEOUT_S = 5.0
LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Set to 0 before Ray starts, Ray treats the machine as a single node and binds to 127.0.0.1."""


def _import_ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise ConfigError(RAY_MISSING) from None
    return ray


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


class RayShared(Generic[T]):
    """A value in Ray's object store."""

    def __init__(self, ref: Any) -> None:
        self.ref = ref

    def get(self) -> T:
        """Fetch the value (from this node's object store when it is there)."""
        value: T = _import_ray().get(self.ref)
        return value


class RayLimiter:
    """Leases from the named ``ragmeter-limits`` actor; picklable, so workers use it too.

    A held lease is renewed every ``lease_s / 3`` seconds; when its holder dies the renewals
    stop and the slot is free again within ``lease_s``.
    """

    def __init__(self, key: str, limit: int, *, lease_s: float) -> None:
        self.key = key
        self.limit = max(1, limit)
        self.lease_s = lease_s

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Block until the cluster has a free slot for :attr:`key`."""
        ray = _import_ray()
        actor = _limits_actor()
        lease = ray.get(actor.acquire.remote(self.key, self.limit, self.lease_s))
        stop = threading.Event()

        def renew() -> None:
            while not stop.wait(self.lease_s / 3):
                actor.renew.remote(self.key, lease, self.lease_s)

        threading.Thread(target=renew, name="ragmeter-lease", daemon=True).start()
        try:
            yield
        finally:
            stop.set()
            actor.release.remote(self.key, lease)

    @asynccontextmanager
    async def hold_async(self) -> AsyncIterator[None]:
        """:meth:`hold` for coroutines."""
        actor = _limits_actor()
        lease = await actor.acquire.remote(self.key, self.limit, self.lease_s)

        async def renew() -> None:
            while True:
                await asyncio.sleep(self.lease_s / 3)
                actor.renew.remote(self.key, lease, self.lease_s)

        renewing = asyncio.ensure_future(renew())
        try:
            yield
        finally:
            renewing.cancel()
            actor.release.remote(self.key, lease)


@functools.cache
def _limits_actor() -> Any:
    """The cluster's limiter actor (made on first use; later processes find it by name)."""
    ray = _import_ray()
    actor_class = ray.remote(Limits)
    return actor_class.options(
        name=LIMITS_ACTOR,
        namespace=NAMESPACE,
        lifetime="detached",
        get_if_exists=True,
        num_cpus=0,
        max_concurrency=10_000,
        max_restarts=-1,
    ).remote()


class Limits:
    """The limiter actor: per key, leases with an expiry; ``acquire`` waits for a free slot."""

    def __init__(self) -> None:
        self._held: dict[str, dict[str, float]] = {}
        self._peak: dict[str, int] = {}
        self._conditions: dict[str, asyncio.Condition] = {}

    def _condition(self, key: str) -> asyncio.Condition:
        if key not in self._conditions:
            self._conditions[key] = asyncio.Condition()
        return self._conditions[key]

    def _expire(self, key: str, now: float) -> dict[str, float]:
        held = self._held.setdefault(key, {})
        for lease, expiry in list(held.items()):
            if expiry <= now:
                del held[lease]
        return held

    async def acquire(self, key: str, limit: int, lease_s: float) -> str:
        """Wait until fewer than ``limit`` leases of ``key`` are out; return a new lease."""
        condition = self._condition(key)
        async with condition:
            while True:
                now = time.monotonic()
                held = self._expire(key, now)
                if len(held) < limit:
                    lease = uuid.uuid4().hex
                    held[lease] = now + lease_s
                    self._peak[key] = max(self._peak.get(key, 0), len(held))
                    return lease
                until_expiry = min(held.values()) - now
                with suppress(TimeoutError):
                    await asyncio.wait_for(condition.wait(), timeout=max(0.01, min(until_expiry, 5.0)))

    async def renew(self, key: str, lease: str, lease_s: float) -> bool:
        """Extend a lease still held; False when it had expired (its slot may be taken)."""
        held = self._held.get(key, {})
        if lease not in held:
            return False
        held[lease] = time.monotonic() + lease_s
        return True

    async def release(self, key: str, lease: str) -> None:
        """Give a lease back (unknown or expired leases are ignored)."""
        condition = self._condition(key)
        async with condition:
            self._held.get(key, {}).pop(lease, None)
            condition.notify_all()

    def stats(self, key: str) -> dict[str, int]:
        """``{"held": n, "peak": most ever held at once}`` for ``key``."""
        held = self._expire(key, time.monotonic())
        return {"held": len(held), "peak": self._peak.get(key, 0)}

    def reset(self, key: str) -> None:
        """Forget ``key``'s peak (tests)."""
        self._peak.pop(key, None)


class PoolWorker:
    """A pool's actor: holds the state, runs ``fn(state, *args)``; ``start(state)`` first."""

    def __init__(self, state: Any, per_worker: int, start: Callable[[Any], Any] | None) -> None:
        self._state = state
        self._start = start
        self._started = False
        self._lock: asyncio.Lock | None = None
        self._threads = ThreadPoolExecutor(max_workers=max(1, per_worker), thread_name_prefix="ragmeter")

    async def _ensure_started(self) -> None:
        if self._started:
            return
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._started:
                return
            if self._start is not None:
                if inspect.iscoroutinefunction(self._start):
                    await self._start(self._state)
                else:
                    loop = asyncio.get_running_loop()
                    result = await loop.run_in_executor(self._threads, self._start, self._state)
                    if inspect.isawaitable(result):
                        await result
            self._started = True

    async def ready(self) -> int:
        """Run ``start`` now; return the worker's process id."""
        await self._ensure_started()
        return os.getpid()

    async def run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """One call: coroutine functions on the event loop, plain functions on a thread."""
        await self._ensure_started()
        if inspect.iscoroutinefunction(fn):
            return await fn(self._state, *args, **kwargs)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._threads, functools.partial(fn, self._state, *args, **kwargs))


def _run_item(fn: Callable[[Any], Any], item: Any) -> Any:
    return fn(item)


@functools.cache
def _remote_item() -> Any:
    return _import_ray().remote(_run_item)


@functools.cache
def _remote_pool_worker() -> Any:
    return _import_ray().remote(PoolWorker)


class RayPool(Generic[S]):
    """Actors holding one state each; calls go to the least busy actor."""

    def __init__(self, actors: list[Any], *, per_worker: int, name: str) -> None:
        self.name = name
        self._actors = actors
        self._per_worker = per_worker
        self._inflight = [0] * len(actors)
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        """Actors times calls per actor."""
        return len(self._actors) * self._per_worker

    @property
    def size(self) -> int:
        """The number of actors."""
        return len(self._actors)

    def _pick(self) -> int:
        with self._lock:
            index = min(range(len(self._inflight)), key=self._inflight.__getitem__)
            self._inflight[index] += 1
            return index

    def _done(self, index: int) -> None:
        with self._lock:
            self._inflight[index] -= 1

    def submit(self, fn: Callable[Concatenate[S, P], R], /, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        """Run ``fn(state, *args)`` on an actor; a ``concurrent.futures.Future`` of the result."""
        index = self._pick()
        try:
            ref = self._actors[index].run.remote(fn, args, kwargs)
            future: Future[R] = ref.future()
        except BaseException:
            self._done(index)
            raise
        future.add_done_callback(lambda _future: self._done(index))
        return future

    async def call_async(
        self, fn: Callable[Concatenate[S, P], Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """Await ``fn(state, *args)`` on an actor; cancelling the await cancels the call there."""
        index = self._pick()
        ref = None
        try:
            ref = self._actors[index].run.remote(fn, args, kwargs)
            result: R = await ref
            return result
        except asyncio.CancelledError:
            if ref is not None:
                with suppress(Exception):  # best effort: the call may have finished meanwhile
                    _import_ray().cancel(ref)
            raise
        finally:
            self._done(index)

    def ready(self) -> list[int]:
        """Wait until every actor has run ``start``; their process ids."""
        ray = _import_ray()
        pids: list[int] = ray.get([actor.ready.remote() for actor in self._actors])
        return pids

    def close(self) -> None:
        """Kill the actors (no restart)."""
        ray = _import_ray()
        for actor in self._actors:
            with suppress(Exception):  # already gone
                ray.kill(actor, no_restart=True)
        self._actors = []
        self._inflight = []


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
            ray = _import_ray()
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
            ray = _import_ray()
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
        total = int(_import_ray().cluster_resources().get("CPU", 1)) or 1
        return min(total, self.workers) if self.workers else total

    def share(self, value: T) -> RayShared[T]:
        """Put ``value`` in the object store."""
        self.start()
        return RayShared(_import_ray().put(value))

    def map_unordered(
        self, fn: Callable[[I], R], items: Sequence[I], *, cpus: float = 1.0
    ) -> Iterator[tuple[int, R]]:
        """One task per item (``cpus`` each, retried when its worker dies); results as they finish."""
        if not items:
            return
        self.start()
        ray = _import_ray()
        task = _remote_item().options(num_cpus=cpus, max_retries=MAX_RETRIES)
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
        actor_class = _remote_pool_worker().options(
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
        _limits_actor()
        return RayLimiter(key, limit, lease_s=lease_s)

    def limiter_stats(self, key: str) -> dict[str, int]:
        """How many leases of ``key`` are out and the most ever out at once."""
        stats: dict[str, int] = _import_ray().get(_limits_actor().stats.remote(key))
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
            for cached in (_limits_actor, _remote_item, _remote_pool_worker):
                cached.cache_clear()
            _import_ray().shutdown()
