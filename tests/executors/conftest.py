"""Fixtures of the executor tests: one local Ray instance for the whole session, bound to 127.0.0.1.

Ray tests are marked ``ray`` (select them with ``-m ray``, skip them with ``-m "not ray"``).
They share one Ray instance: starting one takes ~10 s here. Ray binds to the machine's
address unless told it is a single-machine instance; ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``
(set before ``ray`` is imported) keeps every Ray process on 127.0.0.1, and the fixture
checks it did.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

HERE = Path(__file__).resolve().parent


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
