"""The harness on an executor: the system under test is called from the workers of a pool.

:class:`RemoteAdapter` is an :class:`~ragmeter.harness.calls.Adapter` for the runner: the
runner keeps its timeouts, retries, back-off, refused-connection stop and the
``outputs.jsonl`` journal on the driver; only the call itself runs on a worker. Each worker
builds its own adapter from the suite (:func:`~ragmeter.harness.adapters.make_adapter`):
a python system is imported there, an http system gets its own connection pool, the builtin
pipeline builds (or loads from ``index_dir``) its own index. The values of the ``${NAME}``
variables an http system uses travel with the suite; nothing else from the driver's
environment does.

Calls hold a slot of a cluster-wide limiter named after the system (``concurrency``
slots), so several runs against one system share its limit. The executor runs only what it is
handed here: the :class:`RemoteSystem` state, :func:`start_system` and :func:`call_system`.

>>> RemoteSystem.__name__
'RemoteSystem'
"""

from __future__ import annotations

import asyncio
import math
import os
import pickle
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragmeter.executors.base import Executor, Limiter, WorkerPool
from ragmeter.harness.adapters import make_adapter
from ragmeter.harness.calls import Adapter, CallFailed, describe_exception, finish_output
from ragmeter.harness.suite import HttpSystem, LoadedSuite
from ragmeter.schema.samples import Sample


@dataclass
class RemoteSystem:
    """What a worker needs to build the adapter (the pool's state)."""

    loaded: LoadedSuite
    default_k: int
    environ: dict[str, str]
    limiter: Limiter
    adapter: Adapter | None = field(default=None, repr=False)


async def start_system(state: RemoteSystem) -> None:
    """Build and start the worker's adapter (once per worker process)."""
    adapter = make_adapter(state.loaded, default_k=state.default_k, environ=state.environ)
    await adapter.start()
    state.adapter = adapter


async def call_system(state: RemoteSystem, sample: Sample, k: int) -> tuple[str, Any]:
    """One call on the worker: ``("ok", output)`` or how it failed, as plain picklable data."""
    adapter = state.adapter
    if adapter is None:  # pragma: no cover - the pool runs start_system first
        raise RuntimeError("the worker's adapter was not started")
    try:
        async with state.limiter.hold_async():
            raw = await adapter.call(sample, k=k)
        return "ok", finish_output(raw)  # JSON-ready before it travels
    except TimeoutError:
        return "timeout", None
    except CallFailed as failure:
        return "failed", (failure.message, failure.retryable, failure.retry_after, failure.refused)
    except Exception as exc:  # an adapter bug: the runner records it as an internal error
        try:
            pickle.dumps(exc)
        except Exception:
            return "raised", RuntimeError(describe_exception(exc))
        return "raised", exc


def _worker_lost(exc: BaseException) -> bool:
    """A Ray failure other than the call's own exception: the worker died beyond its retries."""
    if "ray" not in sys.modules:
        return False
    from ray.exceptions import RayError, RayTaskError

    return isinstance(exc, RayError) and not isinstance(exc, RayTaskError)


def _env_for(loaded: LoadedSuite, environ: Mapping[str, str] | None) -> dict[str, str]:
    """The values of the ``${NAME}`` variables the system uses (and only those)."""
    system = loaded.suite.system
    if not isinstance(system, HttpSystem):
        return {}
    env = os.environ if environ is None else environ
    names = {name for _, name in system.env_references()}
    return {name: env[name] for name in sorted(names) if name in env}


class RemoteAdapter:
    """Calls the system from a pool of workers; everything else is the driver's adapter."""

    def __init__(
        self,
        local: Adapter,
        executor: Executor,
        *,
        loaded: LoadedSuite,
        default_k: int,
        concurrency: int,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._local = local
        self.description = local.description
        self._executor = executor
        self._loaded = replace(loaded, path=Path(os.path.abspath(loaded.path)))
        self._default_k = default_k
        self._concurrency = concurrency
        self._environ = _env_for(loaded, environ)
        self._pool: WorkerPool[RemoteSystem] | None = None

    def __getattr__(self, name: str) -> Any:
        # provenance(), write_index_stats(), ... come from the driver's own adapter
        return getattr(self._local, name)

    async def start(self) -> None:
        """Start the workers and build their adapters; a build error is raised here, before any call."""
        executor = self._executor
        size = max(1, min(executor.cpus(), self._concurrency))
        per_worker = math.ceil(self._concurrency / size)
        limiter = executor.limiter(f"system:{self.description}", self._concurrency)
        state = RemoteSystem(self._loaded, self._default_k, self._environ, limiter)
        self._pool = executor.pool(
            state, name="harness", size=size, per_worker=per_worker, cpus=1.0, start=start_system
        )
        ready = getattr(self._pool, "ready", None)
        if callable(ready):
            try:
                await asyncio.to_thread(ready)
            except Exception as exc:
                raise _cause(exc) from None

    async def call(self, sample: Sample, *, k: int) -> Any:
        """Ask one question on a worker."""
        if self._pool is None:
            raise RuntimeError("RemoteAdapter.start() was not called")
        try:
            status, value = await self._pool.call_async(call_system, sample, k)
        except Exception as exc:
            if _worker_lost(exc):
                raise CallFailed(f"the worker was lost ({describe_exception(exc)})", retryable=True) from None
            raise _cause(exc) from None
        if status == "ok":
            return value
        if status == "timeout":
            raise TimeoutError
        if status == "failed":
            message, retryable, retry_after, refused = value
            raise CallFailed(message, retryable=retryable, retry_after=retry_after, refused=refused)
        raise value

    async def aclose(self) -> None:
        """Stop the workers."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.close)


def _cause(exc: BaseException) -> BaseException:
    """The exception raised on the worker, out of Ray's wrapper (a :class:`RagmeterError` stays one)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc
