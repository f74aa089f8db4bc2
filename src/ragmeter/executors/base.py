"""The executor interface: where ragmeter's units of work run — this process, or a Ray cluster.

Three layers hand work to an executor, and keep everything that must be written on the
driver (the process that runs the command):

- the harness (:mod:`ragmeter.harness`) asks the system under test through a
  :class:`WorkerPool` holding the adapter; ``outputs.jsonl`` is written by the driver;
- the miner (:mod:`ragmeter.mining`) runs trials (solver call + validation) in a pool;
  the trial logs are written by the driver;
- the judges (:mod:`ragmeter.judges.client`) send each chat call through a pool; the
  judge cache and the judge log stay on the driver.

Large TREC evaluations use :meth:`Executor.map_unordered` (see
:mod:`ragmeter.partitioned_trec`).

An executor is made with :func:`~ragmeter.executors.factory.make_executor` (``"local"`` or
``"ray"``). A :class:`Limiter` caps the calls in flight to one endpoint; on Ray it is one
named actor for the whole cluster, so a rate limit holds however many workers (or ragmeter
processes) share the endpoint.

Executors run what their callers hand them — a state and plain functions, picklable for
Ray — and know nothing of suites, judges or trials.

>>> EXECUTOR_KINDS
('local', 'ray')
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager, AbstractContextManager, contextmanager
from typing import Any, Concatenate, Literal, ParamSpec, Protocol, TypeVar

ExecutorKind = Literal["local", "ray"]
EXECUTOR_KINDS: tuple[ExecutorKind, ...] = ("local", "ray")
RAY_MISSING = "--executor ray needs the 'ray' extra: pip install 'ragmeter[ray]'"
"""The error when Ray is asked for but not installed."""

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
S = TypeVar("S")
S_co = TypeVar("S_co", covariant=True)
I = TypeVar("I")  # noqa: E741 - the item type of map_unordered
R = TypeVar("R")
P = ParamSpec("P")


class Shared(Protocol[T_co]):
    """A value shipped once (to the object store on Ray) and read where it is needed."""

    def get(self) -> T_co:
        """The value (fetched from the object store on a Ray worker)."""
        ...


class Limiter(Protocol):
    """At most ``limit`` holders of ``key`` at once — across every worker of the executor."""

    key: str
    limit: int

    def hold(self) -> AbstractContextManager[None]:
        """Block until a slot is free; release it on exit."""
        ...

    def hold_async(self) -> AbstractAsyncContextManager[None]:
        """:meth:`hold` for coroutines."""
        ...


class WorkerPool(Protocol[S_co]):
    """Workers that each hold a copy of one state (an adapter, a solver) and run calls on it.

    ``fn(state, *args)`` runs on a worker; the state was shipped once when the pool was
    made. Up to :attr:`capacity` calls run at once.
    """

    @property
    def capacity(self) -> int:
        """How many calls can run at the same time."""
        ...

    def submit(
        self, fn: Callable[Concatenate[S_co, P], R], /, *args: P.args, **kwargs: P.kwargs
    ) -> Future[R]:
        """Run a plain function on a worker; the future has its result (or its exception)."""
        ...

    async def call_async(
        self, fn: Callable[Concatenate[S_co, P], Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """Run a coroutine function on a worker and await its result."""
        ...

    def close(self) -> None:
        """Stop the workers."""
        ...


class Executor(Protocol):
    """Where ragmeter runs its units of work (see the module docstring)."""

    kind: ExecutorKind

    @property
    def remote(self) -> bool:
        """True when work leaves this process (state and arguments must be picklable)."""
        ...

    def start(self) -> None:
        """Connect (Ray: start a local instance or join ``address``); errors are :class:`~ragmeter.errors.ConfigError`."""
        ...

    def describe(self) -> dict[str, Any]:
        """Provenance: the kind and, for Ray, the address, CPUs and version."""
        ...

    def cpus(self) -> int:
        """CPUs the work may use (the cluster's for Ray)."""
        ...

    def share(self, value: T) -> Shared[T]:
        """Ship ``value`` once; pass the handle in arguments instead of the value."""
        ...

    def map_unordered(
        self, fn: Callable[[I], R], items: Sequence[I], *, cpus: float = 1.0
    ) -> Iterator[tuple[int, R]]:
        """Run ``fn(item)`` for every item (a CPU each); yield ``(index, result)`` as each finishes.

        An exception raised by ``fn`` is raised here (after the other items are abandoned).
        """
        ...

    def pool(
        self,
        state: S,
        *,
        name: str,
        size: int,
        per_worker: int,
        cpus: float = 1.0,
        start: Callable[[S], Any] | None = None,
    ) -> WorkerPool[S]:
        """``size`` workers, each running up to ``per_worker`` calls at once on its copy of ``state``.

        ``start(state)`` (a function or a coroutine function) runs once per worker before its
        first call; ``cpus`` is what each worker reserves on Ray.
        """
        ...

    def limiter(self, key: str, limit: int, *, lease_s: float = 10.0) -> Limiter:
        """A concurrency cap for ``key`` (an endpoint); the slot of a holder that died is free within ``lease_s``."""
        ...

    def close(self) -> None:
        """Stop pools; disconnect from Ray if this executor started it."""
        ...


_CURRENT: contextvars.ContextVar[Executor | None] = contextvars.ContextVar("ragmeter_executor", default=None)


def current_executor() -> Executor | None:
    """The executor made current by :func:`use_executor` in this context (``None``: run locally).

    >>> current_executor() is None
    True
    """
    return _CURRENT.get()


@contextmanager
def use_executor(executor: Executor | None) -> Iterator[None]:
    """Make ``executor`` current while the block runs (judge clients made inside use it).

    Judge clients read it when they are made, on the thread that makes them; the judges'
    own worker threads then use the client as usual.

    >>> from ragmeter.executors.local import LocalExecutor
    >>> with use_executor(LocalExecutor()):
    ...     current_executor().kind
    'local'
    """
    token = _CURRENT.set(executor)
    try:
        yield
    finally:
        _CURRENT.reset(token)
