"""Executors: where the harness's calls, mining trials, judge calls and large TREC evaluations run.

In this process (``local``) or on a Ray cluster (``ray``). See docs/scale.md.

``ray`` is imported only when a Ray executor starts.

>>> from ragmeter.executors import make_executor
>>> make_executor("local").describe()
{'kind': 'local'}
"""

from ragmeter.executors.base import (
    EXECUTOR_KINDS,
    Executor,
    ExecutorKind,
    Limiter,
    Shared,
    WorkerPool,
    current_executor,
    use_executor,
)
from ragmeter.executors.factory import make_executor

__all__ = [
    "EXECUTOR_KINDS",
    "Executor",
    "ExecutorKind",
    "Limiter",
    "Shared",
    "WorkerPool",
    "current_executor",
    "make_executor",
    "use_executor",
]
