"""Ray's side of the executor's pools and tasks: actors that hold a state, values in the object store.

A pool is a set of :class:`PoolWorker` actors, each with one copy of the pool's state, driven
from the driver by a :class:`RayPool` that sends each call to the least busy actor. ``ray``
itself is imported by :func:`import_ray`, only when one of these is used.

>>> RayPool([], per_worker=4, name="judge").capacity
0
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from types import ModuleType
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from ragmeter.errors import ConfigError
from ragmeter.executors.base import RAY_MISSING

T = TypeVar("T")
S = TypeVar("S")
R = TypeVar("R")
P = ParamSpec("P")


def import_ray() -> ModuleType:
    """The ``ray`` module; a one-line :class:`~ragmeter.errors.ConfigError` when it is not installed."""
    try:
        import ray
    except ImportError:
        raise ConfigError(RAY_MISSING) from None
    return ray


class RayShared(Generic[T]):
    """A value in Ray's object store."""

    def __init__(self, ref: Any) -> None:
        self.ref = ref

    def get(self) -> T:
        """Fetch the value (from this node's object store when it is there)."""
        value: T = import_ray().get(self.ref)
        return value


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
def remote_item() -> Any:
    """The Ray task that runs one item of :meth:`~ragmeter.executors.ray_executor.RayExecutor.map_unordered`."""
    return import_ray().remote(_run_item)


@functools.cache
def remote_pool_worker() -> Any:
    """:class:`PoolWorker` as a Ray actor class."""
    return import_ray().remote(PoolWorker)


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
                    import_ray().cancel(ref)
            raise
        finally:
            self._done(index)

    def ready(self) -> list[int]:
        """Wait until every actor has run ``start``; their process ids."""
        ray = import_ray()
        pids: list[int] = ray.get([actor.ready.remote() for actor in self._actors])
        return pids

    def close(self) -> None:
        """Kill the actors (no restart)."""
        ray = import_ray()
        for actor in self._actors:
            with suppress(Exception):  # already gone
                ray.kill(actor, no_restart=True)
        self._actors = []
        self._inflight = []
