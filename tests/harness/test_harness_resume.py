"""Never lose work: kill a run and resume it; truncated lines; results folders are never overwritten silently."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

CLI = [sys.executable, "-c", "from ragmeter.cli import main; main()"]


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _fake_rag(h: SimpleNamespace) -> dict[str, Any]:
    """The ``system`` of a suite answered in this process by ``harness_fake_rag:answer``."""
    return {"type": "python", "function": "harness_fake_rag:answer", "python_path": [str(h.here)]}


def _settled_request_count(server: Any, quiet_s: float = 0.3, limit_s: float = 10.0) -> int:
    """The server's request count once the killed run's last requests have all arrived.

    A request the killed process sent just before it died can still be in the
    socket buffer, to be read (and recorded) a moment later under load.
    """
    deadline = time.monotonic() + limit_s
    count, since = len(server.requests), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        with server.lock:
            now, busy = len(server.requests), server.inflight
        if now != count or busy:
            count, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            break
    return count


def test_harness_resume_after_sigkill_asks_nothing_twice_and_loses_nothing(
    tmp_path: Path, h: SimpleNamespace, rag_server: Any, cli: Any
) -> None:
    n = 12
    rag_server.delay = 0.25
    h.write_dataset(tmp_path, n)
    suite = h.write_suite(tmp_path, h.http_system(rag_server.url), concurrency=2)
    outputs = tmp_path / "out" / "outputs.jsonl"
    proc = subprocess.Popen(
        [*CLI, "run", str(suite), "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while _lines(outputs) < 4:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the run wrote no outputs"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stderr:
            proc.stderr.close()
    recorded_first = set(h.read_outputs(outputs))
    assert 4 <= len(recorded_first) < n
    asked_first = _settled_request_count(rag_server)

    code, out, err = cli(["run", str(suite), "--resume"])
    assert code == 0, err
    assert f"resuming {tmp_path / 'out'}: {len(recorded_first)} of {n} questions already answered" in err
    final = h.read_outputs(outputs)  # also asserts that no id is recorded twice
    assert sorted(final) == sorted(f"q-{i}" for i in range(1, n + 1)), "a question was lost"
    asked_again = [r.qid for r in rag_server.requests[asked_first:]]
    assert not set(asked_again) & recorded_first, "a recorded question was asked again"
    assert len(asked_again) == len(set(asked_again)) == n - len(recorded_first)
    # the only questions the server saw twice are those in flight when the run was killed
    twice = {q for q in rag_server.ids() if rag_server.ids().count(q) > 1}
    assert twice <= set(final) - recorded_first and len(twice) <= 2
    assert "hit@2" in out
    config = json.loads((tmp_path / "out" / "config.json").read_text(encoding="utf-8"))
    assert [s["resumed"] for s in config["sessions"]] == [False, True]
    assert config["run"]["n_resumed"] == len(recorded_first)


def test_harness_resume_drops_truncated_last_line_with_warning(
    tmp_path: Path, h: SimpleNamespace, cli: Any
) -> None:
    h.write_dataset(tmp_path, 3)
    system = _fake_rag(h)
    suite = h.write_suite(tmp_path, system)
    outputs = tmp_path / "out" / "outputs.jsonl"
    outputs.parent.mkdir()
    outputs.write_text(
        '{"id": "q-1", "output": {"retrieved": [{"id": "doc-1"}]}}\n{"id": "q-2", "outp', "utf-8"
    )
    code, _, err = cli(["run", str(suite), "--resume"])
    assert code == 0, err
    assert (
        f"warning: {outputs}:2: dropped a truncated last line left by an interrupted run "
        '(\'{"id": "q-2", "outp\'); that question will be asked again'
    ) in err
    final = h.read_outputs(outputs)
    assert sorted(final) == ["q-1", "q-2", "q-3"]
    assert final["q-1"] == {"retrieved": [{"id": "doc-1"}]}, "the earlier answer is kept, not asked again"


def test_harness_resume_damaged_middle_line_is_an_error(tmp_path: Path, h: SimpleNamespace, cli: Any) -> None:
    h.write_dataset(tmp_path, 3)
    system = _fake_rag(h)
    suite = h.write_suite(tmp_path, system)
    outputs = tmp_path / "out" / "outputs.jsonl"
    outputs.parent.mkdir()
    outputs.write_text('{"id": "q-1", "outp\n{"id": "q-2", "output": {}}\n', "utf-8")
    code, _, err = cli(["run", str(suite), "--resume"])
    assert code == 2
    assert err.strip() == (
        f"Error: {outputs}:1: damaged line (not a JSON record); remove it or start a new results folder"
    )


def test_harness_results_folder_is_never_overwritten_silently(
    tmp_path: Path, h: SimpleNamespace, cli: Any
) -> None:
    h.write_dataset(tmp_path, 2)
    system = _fake_rag(h)
    suite = h.write_suite(tmp_path, system)
    out = tmp_path / "out"
    assert cli(["run", str(suite), "-q"])[0] == 0
    before = (out / "outputs.jsonl").read_bytes()

    code, _, err = cli(["run", str(suite)])
    assert code == 2
    assert err.strip() == (
        f"Error: results folder {out} already holds results; continue it with --resume, "
        "replace it with --fresh, or set a new results_dir"
    )
    assert (out / "outputs.jsonl").read_bytes() == before

    code, _, err = cli(["run", str(suite), "--resume", "--fresh"])
    assert (code, err.strip()) == (2, "Error: --resume and --fresh contradict each other; choose one")

    (out / "stale.txt").write_text("left over", encoding="utf-8")
    code, _, err = cli(["run", str(suite), "--fresh", "-q"])
    assert code == 0, err
    assert not (out / "stale.txt").exists()
    assert sorted(h.read_outputs(out / "outputs.jsonl")) == ["q-1", "q-2"]

    other = tmp_path / "not-results"
    other.mkdir()
    (other / "precious.md").write_text("keep me", encoding="utf-8")
    code, _, err = cli(["run", str(suite), "--fresh", "--results-dir", str(other)])
    assert (code, err.strip()) == (
        2,
        f"Error: --fresh refuses to delete {other}: it does not look like a ragmeter results folder",
    )
    assert (other / "precious.md").read_text(encoding="utf-8") == "keep me"

    code, _, err = cli(["run", str(suite), "--fresh", "--results-dir", str(tmp_path)])
    assert (code, err.strip()) == (2, f"Error: --fresh would delete {suite}; refusing to replace {tmp_path}")


def test_harness_resume_refuses_outputs_of_another_dataset(
    tmp_path: Path, h: SimpleNamespace, cli: Any
) -> None:
    h.write_dataset(tmp_path, 3)
    system = _fake_rag(h)
    suite = h.write_suite(tmp_path, system)
    assert cli(["run", str(suite), "-q"])[0] == 0
    h.write_dataset(tmp_path, 2)
    code, _, err = cli(["run", str(suite), "--resume"])
    assert (code, err.strip()) == (
        2,
        f"Error: {tmp_path / 'out' / 'outputs.jsonl'}: holds outputs for 1 sample(s) that are not in the "
        "dataset (e.g. 'q-3'); the dataset changed — use --fresh or a new results_dir",
    )


def test_harness_ctrl_c_keeps_answers_and_resume_finishes(
    tmp_path: Path, h: SimpleNamespace, cli: Any
) -> None:
    (tmp_path / "slow_system.py").write_text(
        "import time\n"
        "def answer(sample, k):\n"
        "    time.sleep(0.1)\n"
        "    return {'retrieved': [{'id': 'doc-' + sample['id'][2:]}], 'answer': 'a'}\n",
        encoding="utf-8",
    )
    h.write_dataset(tmp_path, 30)
    suite = h.write_suite(tmp_path, {"type": "python", "function": "slow_system:answer"}, concurrency=2)
    outputs = tmp_path / "out" / "outputs.jsonl"
    proc = subprocess.Popen(
        [*CLI, "run", str(suite)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 30
        while _lines(outputs) < 3:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 130
    assert f"interrupted: the answers so far are kept in {outputs}; continue with --resume" in err
    kept = set(h.read_outputs(outputs))
    assert 3 <= len(kept) < 30
    code, _, err = cli(["run", str(suite), "--resume", "-q"])
    assert code == 0, err
    assert len(h.read_outputs(outputs)) == 30


def test_harness_scoring_error_keeps_answers_and_resume_only_scores(
    tmp_path: Path, h: SimpleNamespace, cli: Any
) -> None:
    (tmp_path / "tests.yaml").write_text(
        "samples:\n"
        "  - {id: q-1, input: {question: a}, expected_output: [doc-1], metadata: {expected_answer: x}}\n"
        "  - {id: q-2, input: {question: b}, expected_output: [doc-2], metadata: {expected_answer: y}}\n",
        encoding="utf-8",
    )
    system = {"type": "python", "function": "harness_fake_rag:async_answer", "python_path": [str(h.here)]}
    # containment needs chunk text, which this system does not return: scoring fails after the calls
    suite = h.write_suite(tmp_path, system, metrics=["mrr", "containment@5"])
    code, _, err = cli(["run", str(suite)])
    assert code == 2
    outputs = tmp_path / "out" / "outputs.jsonl"
    assert (
        f"the answers are kept in {outputs}; once the problem below is fixed, "
        "'--resume' scores them without asking anything again"
    ) in err
    assert err.strip().splitlines()[-1].startswith("Error: ")
    assert sorted(h.read_outputs(outputs)) == ["q-1", "q-2"]

    suite = h.write_suite(tmp_path, system, metrics=["mrr"])
    code, out, err = cli(["run", str(suite), "--resume"])
    assert code == 0, err
    assert "asked 0 question(s)" in err and "(2 answered before)" in err
    assert "mrr" in out


def test_harness_resume_warns_when_the_system_changed(tmp_path: Path, h: SimpleNamespace, cli: Any) -> None:
    h.write_dataset(tmp_path, 2)
    system = _fake_rag(h)
    suite = h.write_suite(tmp_path, system)
    assert cli(["run", str(suite), "-q"])[0] == 0
    suite = h.write_suite(tmp_path, {**system, "function": "harness_fake_rag:async_answer"})
    code, _, err = cli(["run", str(suite), "--resume", "-q"])
    assert code == 0
    assert (
        "warning: the suite's system changed since this results folder was started; "
        "its outputs now come from both versions"
    ) in err


def test_a_run_is_recorded_in_the_history_under_the_suite_name(
    tmp_path: Path, h: SimpleNamespace, cli: Any
) -> None:
    from ragmeter.report.history import load_history

    h.write_dataset(tmp_path, 2)
    system = _fake_rag(h)
    suite = h.write_suite(tmp_path, system)
    db = tmp_path / "history.sqlite"
    code, _, err = cli(["run", str(suite), "--history", str(db), "--no-report"])
    assert code == 0, err
    assert [entry.label for entry in load_history(db)] == ["t"]  # the suite's name, not the file's
