"""The pytest plugin, run by pytester: the fixture, assert_metric's failure report, the summary lines."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

import pytest

# Imported here, so pytester's in-process runs share them (numpy cannot be loaded twice in a process).
import ragmeter.api
import ragmeter.harness.in_process
import ragmeter.report.stats
import ragmeter.testing  # noqa: F401

TESTS = """
import ragmeter.testing

SAMPLES = [{"id": f"q-{i}", "input": {"question": f"question {i}?"}, "expected_output": ["doc-1"]} for i in range(4)]
SAMPLES.append({"id": "q-none", "input": "nothing to find", "expected_output": []})
OUTPUTS = {"q-0": ["doc-1"], "q-1": ["doc-2", "doc-1"], "q-2": ["doc-9", "doc-8"], "q-3": ["doc-1"], "q-none": []}


def test_good(ragmeter):
    result = ragmeter.evaluate(SAMPLES, OUTPUTS, metrics=["mrr", "hit@5"])
    ragmeter.assert_metric(result, "mrr", ">=", 0.5)
    ragmeter.assert_metric(result, "success@5", ">", 0.7)  # an alias of hit@5


def test_bad(ragmeter):
    result = ragmeter.evaluate(SAMPLES, OUTPUTS, metrics=["mrr"])
    ragmeter.assert_metric(result, "mrr", ">=", 0.9)


def test_run(ragmeter):
    result = ragmeter.run(SAMPLES, lambda sample, k: OUTPUTS[sample["id"]], metrics=["hit@5"])
    ragmeter.assert_metric(result, "hit@5", "==", 0.75)


def test_plain_function():
    result = ragmeter.evaluate(SAMPLES, OUTPUTS, metrics=["mrr"])
    ragmeter.testing.assert_metric(result, "mrr", "<", 0.7)


def test_unrelated():
    assert 1 + 1 == 2
"""


def test_entry_point_names_the_plugin() -> None:
    (found,) = [e for e in entry_points(group="pytest11") if e.name == "ragmeter"]
    assert found.value == "ragmeter.pytest_plugin"


def test_fixture_failures_and_summary_lines(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_quality=TESTS.replace("import ragmeter.testing", "import ragmeter, ragmeter.testing")
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: mrr = 0.6250 NOT >= 0.9 (4 scored, 1 skipped; 95% CI [[]0.*, 1.0000[]])",
            "*  skipped: no relevant item in the ground truth",
            "*  worst queries by mrr:",
            "*    q-2    0.0000  'question 2?'  top: doc-9",
            "*    q-1    0.5000  'question 1?'  top: doc-2",
            "*= ragmeter =*",
            "PASSED test_quality.py::test_good: mrr = 0.6250 >= 0.5 (4 scored, 1 skipped; 95% CI *); "
            "hit@5 = 0.7500 > 0.7 (4 scored, 1 skipped; 95% CI *)",
            "FAILED test_quality.py::test_bad: mrr = 0.6250 NOT >= 0.9 *",
            "PASSED test_quality.py::test_run: hit@5 = 0.7500 == 0.75 *",
            "PASSED test_quality.py::test_plain_function: mrr = 0.6250 < 0.7 *",
        ]
    )
    assert "test_unrelated:" not in result.stdout.str()


def test_summary_lines_survive_the_report_transport_of_xdist(pytester: pytest.Pytester) -> None:
    """xdist workers send reports as pytest's serialisable dicts; the checks travel in user_properties."""
    from ragmeter.pytest_plugin import _Summary

    pytester.makepyfile(
        test_quality=TESTS.replace("import ragmeter.testing", "import ragmeter, ragmeter.testing")
    )
    recorded = pytester.inline_run("-p", "no:cacheprovider")
    config = pytester.parseconfigure()
    summary = _Summary()
    for report in recorded.getreports("pytest_runtest_logreport"):
        data = config.hook.pytest_report_to_serializable(config=config, report=report)
        summary.pytest_runtest_logreport(
            config.hook.pytest_report_from_serializable(config=config, data=data)
        )
    assert [line.split(" = ")[0] for line in summary.lines] == [
        "PASSED test_quality.py::test_good: mrr",
        "FAILED test_quality.py::test_bad: mrr",
        "PASSED test_quality.py::test_run: hit@5",
        "PASSED test_quality.py::test_plain_function: mrr",
    ]


def test_misuse_is_a_clear_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_misuse="""
import pytest
import ragmeter

def test_unknown_metric(ragmeter):
    result = ragmeter.evaluate([{"id": "q", "expected_output": ["a"]}], {"q": ["a"]}, metrics=["mrr"])
    with pytest.raises(AssertionError, match=r"^ndcg@10 is not in this result \\(it has: mrr\\)$"):
        ragmeter.assert_metric(result, "ndcg@10", ">=", 0.5)
    with pytest.raises(ValueError, match="op must be one of"):
        ragmeter.assert_metric(result, "mrr", "=>", 0.5)
    with pytest.raises(ValueError, match="threshold must be a finite number"):
        ragmeter.assert_metric(result, "mrr", ">=", float("nan"))

def test_nothing_scored_fails(ragmeter):
    result = ragmeter.evaluate([{"id": "q", "expected_output": []}], {"q": ["a"]}, metrics=["mrr"])
    ragmeter.assert_metric(result, "mrr", "<=", 1.0)
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: mrr = no value NOT <= 1 (0 scored, 1 skipped)"])


def test_plugin_import_is_light() -> None:
    code = "import sys, ragmeter.pytest_plugin; print(sorted(m for m in ('ragmeter.api', 'pydantic', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_worst_queries_follow_the_metric_direction() -> None:
    from ragmeter.results import EvalResult
    from ragmeter.testing import assert_metric

    per_query = {"a": {"error_rate": 0.0}, "b": {"error_rate": 1.0}, "c": {"error_rate": None}}
    result = EvalResult(
        aggregate={"error_rate": 0.5}, per_query=per_query, n_queries=3, n_scored={"error_rate": 2},
        n_skipped={"error_rate": 1},
    )  # fmt: skip
    with pytest.raises(AssertionError) as failed:
        assert_metric(result, "error_rate", "<=", 0.1, worst=1)
    assert str(failed.value).splitlines()[1:] == ["  worst queries by error_rate:", "    b    1.0000"]
