"""Fixtures of the executor tests, on the session's local Ray instance (``ray_cluster``, in
tests/conftest.py: the doc tests share it).

Ray tests are marked ``ray`` (select them with ``-m ray``, skip them with ``-m "not ray"``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

HERE = Path(__file__).resolve().parent


@pytest.fixture
def ray_executor(ray_cluster: Any) -> Iterator[Any]:
    """A :class:`RayExecutor` on the session's instance (it does not stop Ray when closed)."""
    from ragmeter.executors.ray_executor import RayExecutor

    executor = RayExecutor()
    executor.start()
    yield executor
    executor.close()


TIMING_KEYS = {
    "latency",
    "latency_s",
    "elapsed_seconds",
    "seconds",
    "ragmeter_seconds",
    "duration_s",
    "created",
    "created_at",
    "started_at",
    "finished_at",
    "time",
    "sha256_of_log",
}


def without_timings(value: Any, drop: frozenset[str] = frozenset()) -> Any:
    """``value`` with every timing/timestamp key (and the keys in ``drop``) removed, recursively."""
    if isinstance(value, dict):
        return {
            k: without_timings(v, drop) for k, v in value.items() if k not in TIMING_KEYS and k not in drop
        }
    if isinstance(value, list):
        return [without_timings(v, drop) for v in value]
    return value


def jsonl(path: Path, drop: frozenset[str] = frozenset()) -> list[Any]:
    """The lines of a JSONL file, without timings."""
    return [without_timings(json.loads(line), drop) for line in path.read_text("utf-8").splitlines() if line]


@pytest.fixture
def norm() -> Any:
    """The helpers above, as a fixture (test modules cannot import conftest by name)."""
    from types import SimpleNamespace

    return SimpleNamespace(without_timings=without_timings, jsonl=jsonl, here=HERE)


def write_suite(
    folder: Path, *, n: int = 5, system_kwargs: dict[str, Any] | None = None, **fields: Any
) -> Path:
    """A suite of ``n`` samples answered by ``executors_test_systems:answer``; ``fields`` override the
    suite's defaults (hit@2 and mrr, k 2, concurrency 2, a 10 s timeout, results in ``out``)."""
    folder.mkdir(parents=True, exist_ok=True)
    samples = [
        {"id": f"q-{i}", "input": {"question": f"question {i}?"}, "expected_output": [f"doc-{i}"]}
        for i in range(1, n + 1)
    ]
    (folder / "tests.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    system: dict[str, Any] = {
        "type": "python",
        "function": "executors_test_systems:answer",
        "python_path": [str(HERE)],
    }
    if system_kwargs is not None:
        system["kwargs"] = system_kwargs
    suite = {
        "name": "exec",
        "dataset": "tests.yaml",
        "system": system,
        "metrics": ["hit@2", "mrr"],
        "k": 2,
        "concurrency": 2,
        "timeout_seconds": 10,
        "results_dir": "out",
        **fields,
    }
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(name="write_suite")
def write_suite_fixture() -> Any:
    """:func:`write_suite`, as a fixture."""
    return write_suite
