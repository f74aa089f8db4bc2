"""Writes that cannot leave half a file: a full disk or a kill leaves the old file or none.

Three ways in:

- in this process, ``os.write`` fails with ENOSPC for the files under the case's folder (the
  ``disk_full`` fixture), and each command must be refused cleanly (:func:`refused`: exit 2, one
  ``Error:`` line naming the path, no file left behind or changed);
- as root, in a private mount namespace (``unshare -m``), the commands write to a real tmpfs
  that is full, then read-only (skipped, loudly, where that cannot be done);
- a subprocess is killed (SIGKILL) in the middle of writing results over older ones.

The append-only logs (``outputs.jsonl``, judge logs, trial logs) keep whole lines: a failed
append is taken back, and a line cut short by a kill is reported and dropped on resume.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.io.atomic import (
    AppendLog,
    atomic_files,
    is_temp_file,
    write_bytes_atomic,
    write_json_atomic,
    write_text_atomic,
)

ENOSPC = os.strerror(errno.ENOSPC)  # "No space left on device"
QRELS = "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\n"
RUN = "q1 Q0 d1 1 2.0 t\nq1 Q0 d9 2 1.0 t\nq2 Q0 d3 1 1.0 t\n"
TRACE = {
    "trace_id": "t-1",
    "task": "find it",
    "turns": [
        {
            "user": "find it",
            "iterations": [{"searches": [{"query": "it", "results": [{"url": "https://e.org/a"}]}]}],
        }
    ],
}

Arm = Callable[..., None]


@pytest.fixture
def disk_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Arm:
    """``disk_full(match="")``: from now on, ``os.write`` to a file under the case's folder whose
    path contains ``match`` fails with ENOSPC, as on a full disk."""

    def arm(match: str = "") -> None:
        real = os.write
        root = str(tmp_path.resolve())

        def write(fd: int, data: Any) -> int:
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                target = ""
            if target.startswith(root) and match in target:
                raise OSError(errno.ENOSPC, ENOSPC)
            return real(fd, data)

        monkeypatch.setattr(os, "write", write)

    return arm


@pytest.fixture
def read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Arm:
    """``read_only(match="")``: from now on, no file can be created under the case's folder where the
    path contains ``match`` (EACCES, as in a folder without write permission: root ignores chmod)."""

    def arm(match: str = "") -> None:
        real = os.open
        root = str(tmp_path.resolve())

        def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
            target = os.path.abspath(os.fspath(path))
            if flags & os.O_CREAT and target.startswith(root) and match in target:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), target)
            return real(path, flags, *args, **kwargs)

        monkeypatch.setattr(os, "open", open_)

    return arm


def files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture
def trec(tmp_path: Path) -> list[str]:
    (tmp_path / "qrels.txt").write_text(QRELS, encoding="utf-8")
    (tmp_path / "run.txt").write_text(RUN, encoding="utf-8")
    return ["eval", "--qrels", "qrels.txt", "--run", "run.txt", "-m", "map", "-m", "recall@2"]


@pytest.fixture
def results(cli: Any, tmp_path: Path, trec: list[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A results folder written by ``eval --out`` before the disk fills up."""
    monkeypatch.chdir(tmp_path)
    code, _, err = cli([*trec, "--out", "old"])
    assert code == 0, err
    return tmp_path / "old"


# --- the writer itself ------------------------------------------------------------------------


def test_atomic_write_replaces_a_file_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "metrics.json"
    write_json_atomic(target, {"a": 1})
    write_json_atomic(target, {"a": 2})
    assert json.loads(target.read_text()) == {"a": 2}
    assert sorted(p.name for p in target.parent.iterdir()) == ["metrics.json"]


def test_a_full_disk_keeps_the_old_file_and_names_the_new_one(tmp_path: Path, disk_full: Arm) -> None:
    target = tmp_path / "report.html"
    target.write_text("old report", encoding="utf-8")
    disk_full()
    with pytest.raises(OSError) as failed:
        write_text_atomic(target, "new report")
    assert failed.value.errno == errno.ENOSPC and failed.value.filename == str(target)
    assert target.read_text() == "old report" and [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_bytes_are_written_as_given_and_whole(tmp_path: Path, disk_full: Arm) -> None:
    target = tmp_path / "index.bin"
    write_bytes_atomic(target, b"\x00old\xff")
    disk_full()
    with pytest.raises(OSError, match=ENOSPC):
        write_bytes_atomic(target, b"new" * 1000)
    assert files(tmp_path) == {"index.bin": b"\x00old\xff"}


def test_a_full_disk_leaves_no_new_file_and_no_new_folder(tmp_path: Path, disk_full: Arm) -> None:
    disk_full()
    with pytest.raises(OSError, match=ENOSPC):
        write_text_atomic(tmp_path / "a" / "b" / "junit.xml", "<testsuite/>")
    assert list(tmp_path.iterdir()) == []


def test_files_written_together_change_together(tmp_path: Path, disk_full: Arm) -> None:
    (tmp_path / "metrics.json").write_text("old metrics")
    (tmp_path / "per_query.jsonl").write_text("old lines\n")
    disk_full("per_query")  # the second file fails after the first is complete
    with (
        pytest.raises(OSError, match=ENOSPC) as failed,
        atomic_files(tmp_path / "metrics.json", tmp_path / "per_query.jsonl") as (metrics, per_query),
    ):
        metrics.write("new metrics")
        per_query.write("new lines\n")
    assert failed.value.filename == str(tmp_path / "per_query.jsonl")
    assert files(tmp_path) == {"metrics.json": b"old metrics", "per_query.jsonl": b"old lines\n"}


def test_an_error_inside_the_block_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "dataset.yaml").write_text("old")
    with pytest.raises(RuntimeError), atomic_files(tmp_path / "dataset.yaml") as (out,):
        out.write("half")
        raise RuntimeError("the producer failed")
    assert files(tmp_path) == {"dataset.yaml": b"old"}


def test_a_failed_append_is_taken_back_so_the_log_ends_at_a_whole_line(
    tmp_path: Path, disk_full: Arm
) -> None:
    log = AppendLog(tmp_path / "outputs.jsonl")
    log.append('{"id": "q1"}')
    disk_full()
    with pytest.raises(OSError, match=ENOSPC) as failed:
        log.append('{"id": "q2", "output": {}}')
    log.close()
    assert failed.value.filename == str(tmp_path / "outputs.jsonl")
    assert (tmp_path / "outputs.jsonl").read_bytes() == b'{"id": "q1"}\n'


def test_a_write_that_stops_short_is_finished_not_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real(fd, bytes(data)[:3]))  # short writes
    write_text_atomic(tmp_path / "r.txt", "x" * 100)
    assert (tmp_path / "r.txt").read_text() == "x" * 100


# --- every command, on a full disk (in this process) ------------------------------------------


def test_eval_out_on_a_full_disk_keeps_the_old_results(
    refused: Any, results: Path, trec: list[str], disk_full: Arm
) -> None:
    disk_full()
    refused([*trec, "--out", "old"], "old/", ENOSPC)


def test_eval_out_on_a_full_disk_leaves_no_results_folder(
    refused: Any, trec: list[str], disk_full: Arm
) -> None:
    disk_full()
    refused([*trec, "--out", "new/results"], "new/results/", ENOSPC)


def test_eval_out_with_a_dataset_on_a_full_disk(refused: Any, tmp_path: Path, disk_full: Arm) -> None:
    samples = [{"id": "q1", "input": "q?", "expected_output": ["a"]}]
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    (tmp_path / "o.jsonl").write_text('{"id": "q1", "output": ["a", "b"]}\n', encoding="utf-8")
    disk_full("per_query")
    refused(
        ["eval", "--dataset", "s.yaml", "--outputs", "o.jsonl", "--out", "res"], "res/per_query.jsonl", ENOSPC
    )


def test_report_on_a_full_disk_leaves_no_report(refused: Any, results: Path, disk_full: Arm) -> None:
    disk_full()
    refused(["report", "old"], "old/report.html", ENOSPC)


def test_report_on_a_full_disk_keeps_the_old_report(
    refused: Any, cli: Any, results: Path, disk_full: Arm
) -> None:
    assert cli(["report", "old", "--out", "r/report.html"])[0] == 0
    disk_full()
    refused(["report", "old", "--out", "r/report.html"], "r/report.html", ENOSPC)


def test_gate_junit_on_a_full_disk_leaves_no_file(refused: Any, results: Path, disk_full: Arm) -> None:
    disk_full()
    refused(["gate", "old", "old", "--fail-on", "map<-0.5", "--junit", "ci/gate.xml"], "ci/gate.xml", ENOSPC)


def test_agentic_out_on_a_full_disk_keeps_the_old_file(refused: Any, tmp_path: Path, disk_full: Arm) -> None:
    (tmp_path / "t.jsonl").write_text(json.dumps(TRACE) + "\n", encoding="utf-8")
    (tmp_path / "agentic.json").write_text('{"old": true}\n', encoding="utf-8")
    disk_full()
    refused(["agentic", "--traces", "t.jsonl", "--out", "agentic.json"], "agentic.json", ENOSPC)


def test_history_on_a_full_disk_is_one_line(
    refused: Any, tmp_path: Path, trec: list[str], disk_full: Arm
) -> None:
    disk_full()
    refused([*trec, "--out", "res", "--history", "h.sqlite"], "res/", ENOSPC)


# --- every command, where it may not write -----------------------------------------------------

DENIED = os.strerror(errno.EACCES)  # "Permission denied"


@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (["eval", "--qrels", "qrels.txt", "--run", "run.txt", "--out", "old"], "old/metrics.json"),
        (["report", "old"], "old/report.html"),
        (["gate", "old", "old", "--fail-on", "map<-0.5", "--junit", "gate.xml"], "gate.xml"),
        (["agentic", "--traces", "t.jsonl", "--out", "agentic.json"], "agentic.json"),
    ],
)
def test_a_folder_it_may_not_write_is_one_line(
    refused: Any, results: Path, tmp_path: Path, read_only: Arm, argv: list[str], target: str
) -> None:
    (tmp_path / "t.jsonl").write_text(json.dumps(TRACE) + "\n", encoding="utf-8")
    read_only()
    refused(argv, target, DENIED)


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--qrels", "qrels.txt", "--run", "run.txt", "--out", "a.file"],
        ["eval", "--qrels", "qrels.txt", "--run", "run.txt", "--out", "a.file/deeper"],
        ["report", "old", "--out", "a.file/report.html"],
        ["agentic", "--traces", "t.jsonl", "--out", "a.file/agentic.json"],
        ["gate", "old", "old", "--fail-on", "map<-0.5", "--junit", "a.file/gate.xml"],
    ],
)
def test_a_file_where_a_folder_should_be_is_one_line(
    refused: Any, results: Path, tmp_path: Path, argv: list[str]
) -> None:
    (tmp_path / "t.jsonl").write_text(json.dumps(TRACE) + "\n", encoding="utf-8")
    (tmp_path / "a.file").write_text("not a folder")
    refused(argv, "a.file")


# --- commands that keep what they finished: the partial work stays whole ---------------------


def python_suite(folder: Path, *, n: int) -> None:
    """``suite.yaml``: ``n`` questions with gold ``d0`` … ``d{n-1}``; the system always returns ``d0``."""
    samples = [
        {"id": f"q{i}", "input": {"question": f"what is {i}?"}, "expected_output": [f"d{i}"]}
        for i in range(n)
    ]
    (folder / "s.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    (folder / "sut.py").write_text("def answer(sample):\n    return {'retrieved': [{'id': 'd0'}]}\n")
    system = {"type": "python", "function": "sut:answer", "python_path": ["."]}
    suite = {"name": "s", "dataset": "s.yaml", "system": system, "metrics": ["hit@1"], "results_dir": "res"}
    (folder / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")


def test_run_on_a_full_disk_keeps_whole_answers_and_resumes(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, disk_full: Arm
) -> None:
    python_suite(tmp_path, n=3)
    monkeypatch.chdir(tmp_path)
    disk_full("outputs.jsonl")
    code, _, err = cli(["run", "suite.yaml"])
    lines = [line for line in err.splitlines() if line.startswith("Error:")]
    assert code == 2 and lines == [f"Error: res/outputs.jsonl: {ENOSPC}"], err
    assert "Traceback" not in err
    assert (tmp_path / "res" / "outputs.jsonl").read_bytes() == b""
    monkeypatch.undo()  # space again
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(["run", "suite.yaml", "--resume"])
    assert code == 0, err
    assert json.loads((tmp_path / "res" / "metrics.json").read_text())["aggregate"]["hit@1"] == pytest.approx(
        1 / 3
    )


def test_mine_on_a_full_disk_keeps_the_old_dataset_and_whole_trial_lines(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, disk_full: Arm
) -> None:
    docs = [{"id": "zz.planted", "text": "The code is 4417."}] + [
        {"id": f"aa.f{i}", "text": "filler"} for i in range(4)
    ]
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (tmp_path / "solver.py").write_text(
        "def solve(request):\n"
        "    shown = {doc['id'] for doc in request['documents']}\n"
        "    return '4417' if 'zz.planted' in shown else 'no idea'\n"
    )
    registry = {
        "seed": 1,
        "corpora": {"docs": {"file": "docs.jsonl"}},
        "solver": {"kind": "python", "function": "solver:solve", "python_path": ["."]},
        "benchmarks": [
            {
                "name": "b",
                "corpus": "docs",
                "validator": {"kind": "answer"},
                "candidates": {"distractors": 4},
                "questions": [
                    {"id": "q", "question": "The code?", "answer": "4417", "seeds": ["zz.planted"]}
                ],
            }
        ],
    }
    (tmp_path / "registry.yaml").write_text(yaml.safe_dump(registry, sort_keys=False), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["mine", "registry.yaml", "--out", "data.yaml", "--quiet"]
    code, _, err = cli(args)
    assert code == 0, err
    old = (tmp_path / "data.yaml").read_bytes()
    disk_full("data.yaml")  # the trial logs fit, the dataset does not
    code, _, err = cli([*args, "--resume"])
    assert code == 2 and f"Error: data.yaml: {ENOSPC}" in err.splitlines(), err
    assert (tmp_path / "data.yaml").read_bytes() == old
    assert not [p for p in tmp_path.rglob("*") if is_temp_file(p.name)]
    for log in (tmp_path / "data.trials").glob("*.jsonl"):
        assert log.read_bytes().endswith(b"\n")


# --- a real full filesystem: tmpfs in a private mount namespace (root) -----------------------

TINY_FS_DRIVER = textwrap.dedent(
    r"""
    import contextlib, gc, io, json, os, subprocess, sys
    from pathlib import Path

    mount, inputs = Path(sys.argv[1]), Path(sys.argv[2])
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], check=True)
    os.chdir(inputs)
    from ragmeter.cli import main

    def ragmeter(*argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                main([str(a) for a in argv])
                code = 0
            except SystemExit as exc:
                code = exc.code
        return code, err.getvalue()

    def fill():
        with open(mount / "filler", "ab", buffering=0) as out:
            for size in (65536, 4096, 1):
                with contextlib.suppress(OSError):
                    while True:
                        out.write(b"x" * size)

    report = {}
    cases = {
        "eval": ["eval", "--qrels", "qrels.txt", "--run", "run.txt", "-m", "map", "--out", mount / "res"],
        "report": ["report", "old", "--out", mount / "res" / "report.html"],
        "gate": ["gate", "old", "old", "--fail-on", "map<-0.5", "--junit", mount / "res" / "gate.xml"],
        "agentic": ["agentic", "--traces", "t.jsonl", "--out", mount / "res" / "agentic.json"],
        "history": ["eval", "--qrels", "qrels.txt", "--run", "run.txt", "--history", mount / "h.sqlite"],
    }
    (mount / "res").mkdir()
    for name in ("metrics.json", "per_query.jsonl", "report.html", "gate.xml", "agentic.json"):
        (mount / "res" / name).write_text("old " + name)
    assert ragmeter("eval", "--qrels", "qrels.txt", "--run", "run.txt", "--history", mount / "h.sqlite")[0] == 0
    history = (mount / "h.sqlite").read_bytes()
    for case, argv in cases.items():
        fill()
        code, err = ragmeter(*argv)
        (mount / "filler").unlink()
        report[case] = {
            "code": code,
            "stderr": err,
            "files": sorted(p.name for p in (mount / "res").iterdir()),
            "old": all((mount / "res" / n).read_text() == "old " + n for n in ("metrics.json", "per_query.jsonl", "report.html", "gate.xml", "agentic.json")),
            "history_same": (mount / "h.sqlite").read_bytes() == history,
        }
    gc.collect()  # a database connection an error left open keeps the mount busy
    subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
    code, err = ragmeter(*cases["eval"])
    report["read-only"] = {
        "code": code,
        "stderr": err,
        "files": sorted(p.name for p in (mount / "res").iterdir()),
        "old": all((mount / "res" / n).read_text() == "old " + n for n in ("metrics.json", "per_query.jsonl", "report.html", "gate.xml", "agentic.json")),
        "history_same": True,
    }
    print(json.dumps(report))
    """
)


def tiny_fs_reason() -> str | None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "needs root and unshare(1) for a private tmpfs"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return f"unshare -m does not work here ({probe.stderr.decode(errors='replace').strip()})"
    return None


def test_a_real_full_tmpfs_leaves_old_files_and_one_line_naming_the_path(
    cli: Any, tmp_path: Path, results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reason = tiny_fs_reason()
    if reason is not None:
        pytest.skip(f"REAL FULL-DISK TEST SKIPPED: {reason}")
    (tmp_path / "t.jsonl").write_text(json.dumps(TRACE) + "\n", encoding="utf-8")
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(
        [
            "unshare",
            "-m",
            "--propagation",
            "private",
            sys.executable,
            "-c",
            TINY_FS_DRIVER,
            str(mount),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "RAGMETER_HISTORY": str(tmp_path / "unused.sqlite")},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.splitlines()[-1])
    targets = {
        "eval": "res/metrics.json",
        "report": "res/report.html",
        "gate": "res/gate.xml",
        "agentic": "res/agentic.json",
        "history": "h.sqlite",
        "read-only": "res/metrics.json",
    }
    for case, outcome in report.items():
        lines = [line for line in outcome["stderr"].splitlines() if line.strip()]
        assert outcome["code"] == 2, (case, outcome)
        assert len(lines) == 1 and lines[0].startswith("Error: ") and "Traceback" not in outcome["stderr"], (
            case,
            lines,
        )
        reasons = (
            ("Read-only file system",) if case == "read-only" else ("No space left on device", "disk is full")
        )
        assert targets[case] in lines[0] and any(reason in lines[0] for reason in reasons), lines
        assert outcome["old"] and outcome["history_same"], (case, outcome)
        assert outcome["files"] == [
            "agentic.json",
            "gate.xml",
            "metrics.json",
            "per_query.jsonl",
            "report.html",
        ], outcome


# --- a kill in the middle of a write ----------------------------------------------------------

KILL_DRIVER = textwrap.dedent(
    r"""
    import os, sys, time
    real = os.write

    def write(fd, data):
        target = os.readlink(f"/proc/self/fd/{fd}")
        if os.path.basename(target).startswith((".metrics.json.", ".per_query.jsonl.")):
            real(fd, bytes(data)[: len(data) // 2])
            print("half written", flush=True)
            time.sleep(600)
        return real(fd, data)

    os.write = write
    from ragmeter.cli import main
    main(sys.argv[1:])
    """
)


def test_a_kill_mid_write_leaves_the_old_results_whole(
    tmp_path: Path, results: Path, trec: list[str]
) -> None:
    before = files(results)
    child = subprocess.Popen(
        [sys.executable, "-c", KILL_DRIVER, *trec, "-m", "ndcg", "--out", "old"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "half written", child.stderr.read() if child.stderr else ""
    finally:
        child.send_signal(signal.SIGKILL)
        child.communicate(timeout=30)
    left = files(results)
    assert any(is_temp_file(name) for name in left), "the kill came before the write"
    after = {name: data for name, data in left.items() if not is_temp_file(name)}
    assert after == before
    assert json.loads(after["metrics.json"])["aggregate"].keys() == {"map", "recall@2"}


def test_a_killed_write_does_not_stop_the_next_run_fresh(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python_suite(tmp_path, n=1)
    monkeypatch.chdir(tmp_path)
    assert cli(["run", "suite.yaml"])[0] == 0
    (tmp_path / "res" / ".metrics.json.0123abcd.tmp").write_text('{"aggre')  # what a kill leaves
    code, _, err = cli(["run", "suite.yaml", "--fresh"])
    assert code == 0, err


# --- torn last lines of the append-only logs, on resume ---------------------------------------


def test_a_torn_judge_log_line_is_reported_and_judged_again(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragmeter.judges.runlog import RunLog

    path = tmp_path / "judge_log.jsonl"
    RunLog.open(path, fingerprint="f", resume=False).close()
    with path.open("a") as handle:
        handle.write('{"kind": "outcome", "key": "k1", "item_')
    log = RunLog.open(path, fingerprint="f", resume=True)
    log.close()
    assert log.done == {}
    assert log.notes == [
        f"judge: {path}:2: dropped a truncated last line left by an interrupted run; that judgement is made again"
    ]
    assert path.read_text().endswith("\n")


def test_a_damaged_judge_log_line_that_is_not_the_last_is_refused(tmp_path: Path) -> None:
    from ragmeter.errors import InputError
    from ragmeter.judges.runlog import RunLog

    path = tmp_path / "judge_log.jsonl"
    RunLog.open(path, fingerprint="f", resume=False).close()
    with path.open("a") as handle:
        handle.write('{"kind": "outc\n{"kind": "outcome"}\n')
    with pytest.raises(InputError, match=r"judge_log.jsonl:2: invalid JSON \(Unterminated string"):
        RunLog.open(path, fingerprint="f", resume=True)


def test_a_torn_trial_log_line_is_reported_on_resume(tmp_path: Path) -> None:
    from ragmeter.mining.triallog import TrialLog

    path = tmp_path / "q.jsonl"
    log = TrialLog.open(path, {"pair_id": "b:1", "seed": 3}, resume=False)
    log.append({"type": "trial", "kind": "random", "index": 0, "shown": ["a"], "passed": True})
    log.close()
    with path.open("a") as handle:
        handle.write('{"type": "trial", "kind": "rand')
    log = TrialLog.open(path, {"pair_id": "b:1", "seed": 3}, resume=True)
    log.append({"type": "trial", "kind": "random", "index": 1, "shown": ["b"], "passed": False})
    log.close()
    assert log.dropped == f"{path}:3: dropped a truncated last line left by an interrupted run"
    assert [json.loads(line)["type"] for line in path.read_text().split("\n")[:-1]] == [
        "header",
        "trial",
        "trial",
    ]


def test_logs_keep_lines_with_unicode_line_separators(tmp_path: Path) -> None:
    from ragmeter.judges.results import JudgeOutcome
    from ragmeter.judges.runlog import RunLog
    from ragmeter.mining.triallog import TrialLog, read_log

    path = tmp_path / "judge.jsonl"
    with RunLog.open(path, fingerprint="f", resume=True) as log:
        log.append(
            JudgeOutcome(key="k", item_id="1", judge="g", metric="g", value=3.0, unscored_reason="a\u2028b")
        )
    with RunLog.open(path, fingerprint="f", resume=True) as log:
        assert log.done["k"].unscored_reason == "a\u2028b"
    trials = tmp_path / "t.jsonl"
    trial_log = TrialLog.open(trials, {"pair_id": "p", "seed": 1}, resume=False)
    trial_log.append({"type": "trial", "kind": "random", "index": 0, "answer": "x\u2029y\x85z"})
    trial_log.close()
    assert read_log(trials).trials[0]["answer"] == "x\u2029y\x85z"


def test_a_file_name_that_is_not_utf8_is_written_as_u_fffd_and_read_back(
    accepted: Any, tmp_path: Path
) -> None:
    """The name's undecodable byte reaches the provenance as U+FFFD, so ragmeter can read its own results."""
    qrels = os.fsdecode(b"q\xff.txt")  # Python holds the byte 0xff as the lone surrogate U+DCFF
    (tmp_path / qrels).write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 r\n", encoding="utf-8")
    accepted(["eval", "--qrels", qrels, "--run", "run.txt", "-m", "mrr", "--out", "res"])
    recorded = json.loads((tmp_path / "res" / "metrics.json").read_text(encoding="utf-8"))
    assert recorded["provenance"]["inputs"]["qrels"]["path"] == "q\ufffd.txt"
    accepted(["report", "res"])
    accepted(["compare", "res", "res", "--resamples", "100"])


def test_lone_surrogates_are_written_as_u_fffd_by_every_writer(tmp_path: Path) -> None:
    write_text_atomic(tmp_path / "a.txt", "x\udcffy")
    write_json_atomic(tmp_path / "b.json", {"k": "x\udcffy", "pair": "\U0001f600"})
    with AppendLog(tmp_path / "c.jsonl") as log:
        log.append(json.dumps({"k": "x\ud800"}))  # ensure_ascii: the escape is rewritten
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "x\ufffdy"
    assert json.loads((tmp_path / "b.json").read_text(encoding="utf-8")) == {
        "k": "x\ufffdy",
        "pair": "\U0001f600",
    }
    assert json.loads((tmp_path / "c.jsonl").read_text(encoding="utf-8")) == {"k": "x\ufffd"}
