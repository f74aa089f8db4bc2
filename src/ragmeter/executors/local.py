"""The local executor: threads in this process (ragmeter's behaviour without ``--executor``).

Pools are thread pools sharing one state object; limiters are in-process semaphores;
:meth:`LocalExecutor.map_unordered` runs items on threads. Nothing is pickled.

>>> executor = LocalExecutor()
>>> sorted(executor.map_unordered(lambda x: x * x, [1, 2, 3]))
[(0, 1), (1, 4), (2, 9)]
>>> pool = executor.pool({"n": 2}, name="demo", size=1, per_worker=2)
>>> pool.submit(lambda state, x: state["n"] * x, 21).result()
42
>>> executor.close()
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

from ragmeter.executors.base import ExecutorKind

T = TypeVar("T")
S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the item type of map_unordered
R = TypeVar("R")
P = ParamSpec("P")


class LocalShared(Generic[T]):
    """A value kept as it is (nothing to ship)."""

    def __init__(self, value: T) -> None:
        self._value = value

    def get(self) -> T:
        """The value."""
        return self._value


class LocalLimiter:
    """A semaphore in this process."""

    def __init__(self, key: str, limit: int) -> None:
        self.key = key
        self.limit = max(1, limit)
        self._semaphore = threading.BoundedSemaphore(self.limit)

    @contextmanager
    def hold(self) -> Iterator[None]:
        """Block until a slot is free."""
        with self._semaphore:
            yield

    @asynccontextmanager
    async def hold_async(self) -> AsyncIterator[None]:
        """Wait (on a thread, so the event loop keeps running) until a slot is free."""
        await asyncio.to_thread(self._semaphore.acquire)
        try:
            yield
        finally:
            self._semaphore.release()


class LocalPool(Generic[S]):
    """``size * per_worker`` threads sharing one state."""

    def __init__(self, state: S, *, name: str, threads: int, start: Callable[[S], Any] | None) -> None:
        self.state = state
        self.name = name
        self._threads = max(1, threads)
        self._start = start
        self._started = False
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None

    @property
    def capacity(self) -> int:
        """The number of threads."""
        return self._threads

    def _ensure_started(self) -> None:
        with self._lock:
            if self._started:
                return
            if self._start is not None:
                result = self._start(self.state)
                if inspect.isawaitable(result):
                    asyncio.run(_awaited(result))
            self._started = True

    def submit(self, fn: Callable[Concatenate[S, P], R], /, *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        """Run ``fn(state, *args)`` on a thread."""
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(
                    max_workers=self._threads, thread_name_prefix=f"ragmeter-{self.name}"
                )
            executor = self._executor

        def run() -> R:
            self._ensure_started()
            return fn(self.state, *args, **kwargs)

        return executor.submit(run)

    async def call_async(
        self, fn: Callable[Concatenate[S, P], Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """Await ``fn(state, *args)`` on the current event loop."""
        if not self._started and self._start is not None:
            result = self._start(self.state)
            if inspect.isawaitable(result):
                await result
        self._started = True
        return await fn(self.state, *args, **kwargs)

    def close(self) -> None:
        """Wait for the calls in flight, then stop the threads."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


class LocalExecutor:
    """Run everything in this process, on threads."""

    kind: ExecutorKind = "local"

    def __init__(self, *, max_workers: int | None = None) -> None:
        self._max_workers = max_workers
        self._pools: list[LocalPool[Any]] = []
        self._limiters: dict[str, LocalLimiter] = {}
        self._lock = threading.Lock()

    @property
    def remote(self) -> bool:
        """Always False: nothing leaves this process."""
        return False

    def start(self) -> None:
        """Nothing to connect to."""

    def describe(self) -> dict[str, Any]:
        """``{"kind": "local"}``."""
        return {"kind": "local"}

    def cpus(self) -> int:
        """The CPUs of this machine (or ``max_workers``)."""
        return self._max_workers or os.cpu_count() or 1

    def share(self, value: T) -> LocalShared[T]:
        """The value itself, wrapped."""
        return LocalShared(value)

    def map_unordered(
        self, fn: Callable[[I], R], items: Sequence[I], *, cpus: float = 1.0
    ) -> Iterator[tuple[int, R]]:
        """Run the items on up to :meth:`cpus` threads; yield ``(index, result)`` as they finish."""
        if not items:
            return
        workers = max(1, min(len(items), self.cpus()))
        if workers == 1:
            for index, item in enumerate(items):
                yield index, fn(item)
            return
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ragmeter-map")
        try:
            pending = {pool.submit(fn, item): index for index, item in enumerate(items)}
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    yield index, future.result()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def pool(
        self,
        state: S,
        *,
        name: str,
        size: int,
        per_worker: int,
        cpus: float = 1.0,
        start: Callable[[S], Any] | None = None,
    ) -> LocalPool[S]:
        """A thread pool of ``size * per_worker`` threads over the one ``state``."""
        pool = LocalPool(state, name=name, threads=max(1, size) * max(1, per_worker), start=start)
        with self._lock:
            self._pools.append(pool)
        return pool

    def limiter(self, key: str, limit: int, *, lease_s: float = 10.0) -> LocalLimiter:
        """One in-process semaphore per key (the first limit given for a key wins)."""
        with self._lock:
            if key not in self._limiters:
                self._limiters[key] = LocalLimiter(key, limit)
            return self._limiters[key]

    def close(self) -> None:
        """Stop the thread pools."""
        with self._lock:
            pools, self._pools = self._pools, []
        for pool in pools:
            pool.close()
