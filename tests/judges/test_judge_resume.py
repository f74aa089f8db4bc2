"""Judge results are appended to a JSONL log as they complete; a killed run resumes without losing
or repeating a judged item."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import judge_chat_server as cs
import pytest

from ragmeter.errors import ConfigError
from ragmeter.judges import run_judges
from ragmeter.judges.runlog import LOG_SCHEMA

N = 24
ITEMS = [
    {"id": f"q{i:02d}", "question": f"question number {i:02d}?", "answer": f"answer {i}", "contexts": ["c"]}
    for i in range(N)
]


def question_of(request: dict) -> str:
    text = request["json"]["messages"][-1]["content"]
    return text.split("question number ")[1][:2]


def log_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_kill_and_resume_loses_nothing_and_repeats_nothing(chat_server, judge_config, tmp_path) -> None:
    server = chat_server(lambda body: cs.ok({"reasoning": "r", "score": 4}, delay=0.04))
    cfg = judge_config(server, cache=False, concurrency=2)
    log = tmp_path / "judge.jsonl"
    script = tmp_path / "run.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import json, sys
            from ragmeter.judges import run_judges
            items = json.loads({json.dumps(json.dumps(ITEMS))})
            cfg = json.loads({json.dumps(json.dumps(cfg))})
            run_judges(items, config=cfg, judges=["correctness"], log_path={str(log)!r})
            print("finished")
            """
        ),
        encoding="utf-8",
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while len(server.chat_requests) < 8 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        proc.kill()
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert b"finished" not in out, "the run must be killed before it ends"
    assert proc.returncode != 0, err.decode()

    before = log_lines(log)
    assert before[0]["kind"] == "header" and before[0]["schema"] == LOG_SCHEMA
    judged_before = {line["item_id"] for line in before[1:]}
    assert 1 <= len(judged_before) < N
    requested_before = len(server.chat_requests)

    result = run_judges(ITEMS, config=cfg, judges=["correctness"], log_path=log)
    assert result.resumed == len(judged_before)
    assert [o.item_id for o in result.outcomes] == [i["id"] for i in ITEMS]
    assert all(o.value == 4.0 for o in result.outcomes)

    after_requests = server.chat_requests[requested_before:]
    asked_again = {f"q{question_of(r)}" for r in after_requests}
    assert not asked_again & judged_before, "a judged item was judged again"
    assert asked_again == {i["id"] for i in ITEMS} - judged_before
    # every item is in the log exactly once
    lines = log_lines(log)
    keys = [line["key"] for line in lines[1:]]
    assert len(keys) == len(set(keys)) == N
    assert result.usage.calls == len(after_requests)


def test_resume_drops_a_cut_line_and_retries_transient_failures(chat_server, judge_config, tmp_path) -> None:
    server = chat_server(lambda body: cs.ok({"reasoning": "r", "score": 2}))
    cfg = judge_config(server, cache=False)
    log = tmp_path / "judge.jsonl"
    first = run_judges(ITEMS[:3], config=cfg, judges=["correctness"], log_path=log)
    assert first.resumed == 0
    lines = log.read_text(encoding="utf-8").splitlines()
    # q02 ended unscored with a transient failure; q01's line was cut short by a kill
    failed = json.loads(lines[3])
    failed.update(
        value=None, unscored_code="call_failed", unscored_reason="HTTP 500 (x); gave up after 3 attempts"
    )
    lines[3] = json.dumps(failed)
    text = "\n".join(lines[:2]) + "\n" + lines[3] + "\n" + lines[2][:40]
    log.write_text(text, encoding="utf-8")
    server.requests.clear()
    again = run_judges(ITEMS[:3], config=cfg, judges=["correctness"], log_path=log)
    assert again.resumed == 1
    assert sorted(f"q{question_of(r)}" for r in server.chat_requests) == ["q01", "q02"]
    assert [o.value for o in again.outcomes] == [2.0, 2.0, 2.0]
    final = log_lines(log)[1:]
    latest = {line["key"]: line for line in final}
    assert all(line["value"] == 2.0 for line in latest.values())


def test_resume_false_starts_afresh(chat_server, judge_config, tmp_path) -> None:
    server = chat_server(lambda body: cs.ok({"reasoning": "r", "score": 2}))
    cfg = judge_config(server, cache=False)
    log = tmp_path / "judge.jsonl"
    run_judges(ITEMS[:2], config=cfg, judges=["correctness"], log_path=log)
    again = run_judges(ITEMS[:2], config=cfg, judges=["correctness"], log_path=log, resume=False)
    assert again.resumed == 0
    assert len(server.chat_requests) == 4
    assert len(log_lines(log)) == 3


def test_resume_with_another_setup_is_refused(chat_server, judge_config, tmp_path) -> None:
    server = chat_server(lambda body: cs.ok({"reasoning": "r", "score": 2}))
    log = tmp_path / "judge.jsonl"
    run_judges(ITEMS[:1], config=judge_config(server), judges=["correctness"], log_path=log)
    with pytest.raises(ConfigError, match="written with a different judge setup"):
        run_judges(
            ITEMS[:1], config=judge_config(server, model="other"), judges=["correctness"], log_path=log
        )
