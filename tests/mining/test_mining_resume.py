"""Kill ``ragmeter mine`` mid-run, resume it, and get exactly the trials of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.cli import main
from ragmeter.mining.session import mine

CLI = [sys.executable, "-c", "from ragmeter.cli import main; main()"]


def _registry(
    tmp_path: Path, registry_writer: Any, corpus_writer: Any, solvers_path: str, delay: float
) -> Path:
    corpus_writer(tmp_path, n=10)
    return registry_writer(
        tmp_path,
        {
            "seed": 99,
            "corpora": {"docs": {"file": "docs.jsonl"}},
            "solver": {
                "kind": "python",
                "function": "mining_test_solvers:planted",
                "python_path": [solvers_path],
                "kwargs": {"delay": delay},
                "concurrency": 2,
            },
            "benchmarks": [
                {
                    "name": "b",
                    "corpus": "docs",
                    "validator": {"kind": "answer"},
                    "candidates": {"distractors": 6},
                    "questions": [
                        {
                            "id": f"q{i}",
                            "question": f"Secret code number {i}?",
                            "answer": "4417",
                            "seeds": ["zz.planted"],
                        }
                        for i in range(3)
                    ],
                }
            ],
        },
    )


def _trials(folder: Path) -> dict[str, list[tuple[str, int, tuple[str, ...], bool]]]:
    out = {}
    for log in sorted(folder.glob("*.jsonl")):
        records = [json.loads(line) for line in log.read_text().splitlines()]
        out[log.name] = sorted(
            (r["kind"], r["index"], tuple(r["shown"]), r["passed"]) for r in records if r["type"] == "trial"
        )
    return out


def _logged(folder: Path) -> int:
    if not folder.is_dir():
        return 0
    return sum(log.read_bytes().count(b'"type": "trial"') for log in folder.glob("*.jsonl"))


def test_kill_and_resume_repeats_and_loses_no_trial(
    tmp_path: Path, registry_writer: Any, corpus_writer: Any, solvers_path: str
) -> None:
    registry = _registry(tmp_path, registry_writer, corpus_writer, solvers_path, delay=0.01)
    reference = mine(registry, tmp_path / "reference" / "d.yaml")
    expected = _trials(reference.trials_dir)
    total = sum(len(v) for v in expected.values())
    assert total > 60

    out = tmp_path / "run" / "d.yaml"
    logs = out.with_name("d.trials")
    process = subprocess.Popen(
        [*CLI, "mine", str(registry), "--out", str(out), "-q"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while _logged(logs) < total // 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.02)
        assert process.poll() is None, "the run ended before it could be killed; slow the solver down"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    killed_at = _logged(logs)
    assert 0 < killed_at < total

    with pytest.raises(SystemExit) as exit_info:
        main(["mine", str(registry), "--out", str(out)])  # without --resume: refused
    assert exit_info.value.code == 2

    with pytest.raises(SystemExit) as exit_info:
        main(["mine", str(registry), "--out", str(out), "--resume", "-q"])
    assert exit_info.value.code == 0
    resumed = _trials(logs)
    assert resumed == expected  # same trials, none repeated (read_log rejects duplicates), none lost
    for name, trials in resumed.items():
        random_indices = [index for kind, index, _, _ in trials if kind == "random"]
        assert random_indices == list(range(len(random_indices))), name

    got = yaml.safe_load(out.read_text())
    want = yaml.safe_load((tmp_path / "reference" / "d.yaml").read_text())
    assert [p["candidates"] for p in got["pairs"]] == [p["candidates"] for p in want["pairs"]]
    assert [p["expected_output"] for p in got["pairs"]] == [["zz.planted"]] * 3

    # every verdict can be recomputed from the logs alone
    with pytest.raises(SystemExit) as exit_info:
        main(["mine", str(registry), "--out", str(out), "--recompute", "-q"])
    assert exit_info.value.code == 0
    assert [p["candidates"] for p in yaml.safe_load(out.read_text())["pairs"]] == [
        p["candidates"] for p in want["pairs"]
    ]
