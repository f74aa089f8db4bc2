"""The append-only trial log: crash-cut lines, header checks, one writer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragmeter.errors import ConfigError, InputError
from ragmeter.mining.triallog import TrialLog, read_log

HEADER = {"pair_id": "b:1", "seed": 5, "pool": [{"id": "a"}], "design": {"name": "fixed"}}


def _trial(index: int) -> dict[str, object]:
    return {"type": "trial", "kind": "random", "index": index, "shown": ["a"], "passed": index % 2 == 0}


def test_a_line_cut_by_a_crash_is_dropped_and_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    log = TrialLog.open(path, HEADER, resume=False)
    log.append(_trial(0))
    log.append(_trial(1))
    log.close()
    with path.open("ab") as handle:
        handle.write(b'{"type": "trial", "kind": "random", "ind')  # killed mid-write
    contents = read_log(path)
    assert contents.dropped_partial_line and [t["index"] for t in contents.trials] == [0, 1]
    log = TrialLog.open(path, HEADER, resume=True)
    log.append(_trial(2))
    log.close()
    lines = path.read_text().splitlines()
    assert all(json.loads(line) for line in lines)  # the cut line is gone
    assert [t["index"] for t in read_log(path).trials] == [0, 1, 2]


def test_existing_log_needs_resume(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    TrialLog.open(path, HEADER, resume=False).close()
    with pytest.raises(ConfigError, match="pass --resume"):
        TrialLog.open(path, HEADER, resume=False)


def test_resume_refuses_a_log_of_another_design(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    TrialLog.open(path, HEADER, resume=False).close()
    with pytest.raises(ConfigError, match="different design") as info:
        TrialLog.open(path, {**HEADER, "design": {"name": "bayes"}}, resume=True)
    assert info.value.where == str(path)


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    log = TrialLog.open(path, HEADER, resume=False)
    try:
        with pytest.raises(ConfigError, match="in use by another ragmeter process"):
            TrialLog.open(path, HEADER, resume=True)
    finally:
        log.close()


def test_a_trial_logged_twice_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    log = TrialLog.open(path, HEADER, resume=False)
    log.append(_trial(0))
    log.append(_trial(0))
    log.close()
    with pytest.raises(InputError, match="logged twice") as info:
        read_log(path)
    assert info.value.where == f"{path}:3"
