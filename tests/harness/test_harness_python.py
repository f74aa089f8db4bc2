"""The python system: a function in a module, called with each sample."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ragmeter.cli import main
from ragmeter.harness.suite_run import run_suite


def _python(h: SimpleNamespace, function: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "python",
        "function": f"harness_fake_rag:{function}",
        "python_path": [str(h.here)],
        **fields,
    }


def _run(tmp_path: Path, h: SimpleNamespace, system: dict[str, Any], n: int = 3, **fields: Any) -> Any:
    h.write_dataset(tmp_path, n)
    return run_suite(h.write_suite(tmp_path, system, **fields))


def test_harness_python_function_gets_sample_and_k(tmp_path: Path, h: SimpleNamespace) -> None:
    outcome = _run(tmp_path, h, _python(h, "answer"), k=3)
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert [item["id"] for item in outputs["q-2"]["retrieved"]] == ["doc-2", "filler-0", "filler-1"]
    assert outputs["q-2"]["answer"] == "answer to question 2?"
    assert outputs["q-2"]["attempts"] == 1 and outputs["q-2"]["latency"] >= 0
    assert outcome.result.aggregate == {"hit@2": 1.0, "mrr": 1.0}
    assert outcome.system == "harness_fake_rag:answer"


@pytest.mark.parametrize(
    ("mode", "error"),
    [
        ("raise", "ValueError: cannot handle q-2 second line"),
        ("wrong-type", "the system returned int, expected an object with 'retrieved' (the output contract)"),
        (
            "bad-contract",
            "the output does not fit the contract: output.retrieved.0.score: "
            "Input should be a valid number, unable to parse string as a number",
        ),
    ],
)
def test_harness_python_failures_are_recorded_per_question(
    tmp_path: Path, h: SimpleNamespace, mode: str, error: str
) -> None:
    outcome = _run(tmp_path, h, _python(h, "flaky", kwargs={"mode": mode}))
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert outputs["q-2"]["error"] == error
    assert outputs["q-2"]["attempts"] == 1, "exceptions of a python system are not retried"
    assert outputs["q-2"]["retrieved"] == []
    assert "error" not in outputs["q-1"] and "error" not in outputs["q-3"]
    assert (outcome.summary.n_ok, outcome.summary.n_errors) == (2, 1)
    assert outcome.result.per_query["q-2"]["mrr"] == 0.0


def test_harness_python_hang_times_out_without_blocking(tmp_path: Path, h: SimpleNamespace) -> None:
    started = time.monotonic()
    outcome = _run(tmp_path, h, _python(h, "flaky", kwargs={"mode": "hang"}), timeout_seconds=0.3)
    assert time.monotonic() - started < 2.5, "a hung call must not hold up the run"
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert outputs["q-2"]["timed_out"] is True
    assert outputs["q-2"]["error"] == "timed out after 0.3 s"
    assert outcome.summary.n_timeouts == 1


def test_harness_python_blank_answer_is_counted_empty(tmp_path: Path, h: SimpleNamespace) -> None:
    outcome = _run(tmp_path, h, _python(h, "flaky", kwargs={"mode": "blank"}))
    assert (outcome.summary.n_ok, outcome.summary.n_empty) == (3, 1)


def test_harness_python_async_function_returning_ids(tmp_path: Path, h: SimpleNamespace) -> None:
    outcome = _run(tmp_path, h, _python(h, "async_answer"))
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert outputs["q-1"]["retrieved"] == [{"id": "doc-1"}]
    assert outcome.result.aggregate["mrr"] == 1.0


def test_harness_python_all_failing_exits_non_zero_after_writing(
    tmp_path: Path, h: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    h.write_dataset(tmp_path, 1)
    suite = h.write_suite(tmp_path, _python(h, "flaky", kwargs={"fail_on": "q-1"}))
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(suite)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        "Error: every call to harness_fake_rag:flaky failed; first: q-1: ValueError: cannot handle q-1 second line"
    )
    assert (tmp_path / "out" / "metrics.json").is_file()


def test_harness_python_missing_attribute_points_at_suite_line(
    tmp_path: Path, h: SimpleNamespace, capsys: pytest.CaptureFixture[str]
) -> None:
    h.write_dataset(tmp_path, 1)
    suite = h.write_suite(tmp_path, _python(h, "no_such_function"))
    with pytest.raises(SystemExit):
        main(["run", str(suite)])
    line = next(i for i, text in enumerate(suite.read_text().splitlines(), 1) if "function:" in text)
    assert capsys.readouterr().err.strip() == (
        f"Error: {suite}:{line}: system.function: module 'harness_fake_rag' has no attribute 'no_such_function'"
    )


def test_harness_python_connection_errors_are_retried(tmp_path: Path, h: SimpleNamespace) -> None:
    system = _python(h, "flaky", kwargs={"mode": "conn-once", "fail_on": "q-1"})
    outcome = _run(tmp_path, h, system, n=2, retries=1, backoff_seconds=0.01)
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert outputs["q-1"]["attempts"] == 2 and "error" not in outputs["q-1"]
    assert outcome.summary.n_ok == 2


def test_harness_python_sample_k_wins_over_suite_k(tmp_path: Path, h: SimpleNamespace) -> None:
    (tmp_path / "tests.yaml").write_text(
        "samples:\n"
        "  - {id: q-1, input: {question: a}, expected_output: [doc-1], metadata: {k: 1}}\n"
        "  - {id: q-2, input: {question: b}, expected_output: [doc-2]}\n",
        encoding="utf-8",
    )
    run_suite(h.write_suite(tmp_path, _python(h, "answer"), k=4))
    outputs = h.read_outputs(tmp_path / "out" / "outputs.jsonl")
    assert (outputs["q-1"]["k_asked"], outputs["q-2"]["k_asked"]) == (1, 4)
    assert len(outputs["q-1"]["retrieved"]) == 1
