"""The pytest plugin (entry point ``pytest11``): a ``ragmeter`` fixture and a summary line per test.

Loaded wherever ragmeter is installed, and inert unless used: importing it costs nothing
(ragmeter itself is imported only when the fixture is), and it prints nothing for tests
that check no metric. A test that does gets one line in the ``ragmeter`` section of the
terminal report, also under pytest-xdist (the lines travel with the test reports as
``user_properties``, which JUnit XML shows as properties too)::

    def test_retrieval(ragmeter):
        result = ragmeter.run("tests.yaml", my_query_engine, k=10)
        ragmeter.assert_metric(result, "ndcg@10", ">=", 0.6)
        ragmeter.assert_metric(result, "latency_p95", "<=", 2.0)

    ========================= ragmeter =========================
    PASSED test_rag.py::test_retrieval: ndcg@10 = 0.7123 >= 0.6 (48 scored, 2 skipped; 95% CI [...]); ...

A failed check raises ``AssertionError`` with the value, the counts, the confidence interval
and the worst queries for that metric (see :func:`ragmeter.testing.assert_metric`).
"""

from __future__ import annotations

import contextvars
from collections.abc import Generator
from typing import Any

import pytest

PROPERTY = "ragmeter"
"""The ``user_properties`` key of the recorded checks."""

_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("ragmeter_pytest_item", default=None)


def record(summary: str) -> None:
    """Attach one metric check to the running test (called by ``ragmeter.testing``)."""
    item = _CURRENT.get()
    if item is not None:
        item.user_properties.append((PROPERTY, summary))


class RagmeterFixture:
    """What the ``ragmeter`` fixture gives a test: run, evaluate, and check with recorded numbers."""

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """:func:`ragmeter.run`: ask a dataset's questions to a system, then score the answers."""
        from ragmeter.harness.in_process import run

        return run(*args, **kwargs)

    def evaluate(self, *args: Any, **kwargs: Any) -> Any:
        """:func:`ragmeter.evaluate`: score recorded outputs."""
        from ragmeter.api import evaluate

        return evaluate(*args, **kwargs)

    def assert_metric(self, result: Any, metric: str, op: str, threshold: float, **kwargs: Any) -> Any:
        """:func:`ragmeter.testing.assert_metric` (absolute threshold on an aggregate)."""
        from ragmeter.testing import assert_metric

        return assert_metric(result, metric, op, threshold, **kwargs)

    def assert_no_regression(self, baseline: Any, candidate: Any, **kwargs: Any) -> None:
        """:func:`ragmeter.testing.assert_no_regression` (gate rules against a baseline)."""
        from ragmeter.testing import assert_no_regression

        assert_no_regression(baseline, candidate, **kwargs)


@pytest.fixture
def ragmeter() -> RagmeterFixture:
    """Run, evaluate and check retrieval / RAG metrics; each check is summarised in the report."""
    return RagmeterFixture()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    """Let checks made during a test function find the test (doctests report nothing)."""
    token = _CURRENT.set(item if isinstance(item, pytest.Function) else None)
    try:
        return (yield)
    finally:
        _CURRENT.reset(token)


class _Summary:
    """Collects the checks of each finished test (run here, or sent by an xdist worker) and prints them."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        checks = [str(value) for key, value in report.user_properties if key == PROPERTY]
        if checks:
            self.lines.append(f"{report.outcome.upper()} {report.nodeid}: {'; '.join(checks)}")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.section("ragmeter")
            for line in self.lines:
                terminalreporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    """Register the summary collector."""
    config.pluginmanager.register(_Summary(), "ragmeter-summary")
