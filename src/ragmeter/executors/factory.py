"""Making an executor for ``--executor KIND``: this process (``local``) or a Ray cluster (``ray``).

The Ray implementation is imported only when asked for, so ``ragmeter --help`` and local runs
never import it (nor ``ray``).

>>> executor = make_executor("local")
>>> executor.kind, executor.remote
('local', False)
>>> make_executor("dask")
Traceback (most recent call last):
...
ragmeter.errors.ConfigError: --executor: must be local or ray, got 'dask'
"""

from __future__ import annotations

import importlib.util

from ragmeter.errors import ConfigError
from ragmeter.executors.base import EXECUTOR_KINDS, RAY_MISSING, Executor
from ragmeter.executors.local import LocalExecutor


def ray_installed() -> bool:
    """Whether ``ray`` can be imported (checked without importing it)."""
    return importlib.util.find_spec("ray") is not None


def make_executor(kind: str, *, address: str | None = None, workers: int | None = None) -> Executor:
    """The executor for ``--executor KIND`` (``--ray-address ADDRESS``); not started yet.

    ``address`` is a Ray address (``auto``, ``HOST:PORT``, ``ray://HOST:10001``); without it
    a private Ray instance is started on this machine, bound to 127.0.0.1. ``workers``
    caps the workers of each pool (default: the cluster's CPUs).

    >>> make_executor("local", address="auto")
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: --ray-address needs --executor ray
    """
    if kind not in EXECUTOR_KINDS:
        raise ConfigError(f"must be local or ray, got {kind!r}", where="--executor")
    if kind == "local":
        if address is not None:
            raise ConfigError("--ray-address needs --executor ray")
        return LocalExecutor()
    if not ray_installed():
        raise ConfigError(RAY_MISSING)
    from ragmeter.executors.ray_executor import RayExecutor  # lazy: the optional Ray side

    return RayExecutor(address=address, workers=workers)
