"""The accounting of a judge run, checked against the requests the scripted server got.

On resume the estimate counts only the calls that remain; ``GET /models`` is asked once per run;
a missing key variable is reported before the estimate; the closing summary says how many
judgements came from the cache and how many from the judge log; ragmeter's own judging time is
a stage of its own; progress lines show off a terminal.
"""

from __future__ import annotations

import re
from typing import Any

import yaml


def _chat(server: Any) -> int:
    return len(server.chat_requests)


def _models(server: Any) -> int:
    return sum(
        1 for r in server.requests if r["method"] == "GET" and r["path"].rstrip("/").endswith("/models")
    )


def _estimate(err: str) -> tuple[int, int, int]:
    found = re.search(r"(\d+) judge call\(s\).*?, (\d+) from the cache(?:, (\d+) from the judge log)?;", err)
    assert found is not None, err
    return int(found.group(1)), int(found.group(2)), int(found.group(3) or 0)


def _summary(out: str) -> tuple[int, int, int]:
    found = re.search(
        r"judge test-judge: (\d+) calls, (\d+) from the cache, (?:(\d+) from the judge log, )?", out
    )
    assert found is not None, out
    return int(found.group(1)), int(found.group(2)), int(found.group(3) or 0)


def test_first_run_estimate_summary_and_requests_agree(workspace: Any, cli: Any, judge_server: Any) -> None:
    ws = workspace()
    ws.write_config()
    code, out, err = cli(ws.args())
    assert code == 0, err
    planned, cached, logged = _estimate(err)
    assert (cached, logged) == (0, 0)
    assert _chat(judge_server) == planned
    assert _summary(out) == (planned, 0, 0)
    assert _models(judge_server) == 1  # the reachability check; provenance reuses its answer
    assert ws.metrics()["provenance"]["judge"]["judge"]["server_model"]["id"] == "test-judge"


def test_resume_estimates_only_the_calls_that_remain(
    workspace: Any, cli: Any, judge_server: Any, default_outputs: list[dict[str, Any]]
) -> None:
    ws = workspace()
    ws.write_config(cache=False)  # no cache: what is not asked again comes from the judge log
    code, _, err = cli(ws.args())
    assert code == 0, err
    first, _, _ = _estimate(err)
    default_outputs[0]["output"]["answer"] = "It was finished in 1889 [1]."  # q1's judges must run again
    ws = workspace(outputs=default_outputs)
    before = _chat(judge_server)
    code, out, err = cli(ws.args())
    assert code == 0, err
    planned, cached, logged = _estimate(err)
    asked = _chat(judge_server) - before
    assert asked == planned and 0 < planned < first
    assert logged == first - planned and cached == 0
    assert _summary(out) == (planned, 0, logged)
    # a third run has nothing left to ask
    code, out, err = cli(ws.args())
    assert code == 0, err
    assert _estimate(err) == (0, 0, first)
    assert _chat(judge_server) - before == asked
    assert _summary(out) == (0, 0, first)


def test_from_the_cache_is_counted_right(workspace: Any, cli: Any, judge_server: Any) -> None:
    ws = workspace()
    ws.write_config()
    code, _, err = cli(ws.args())
    assert code == 0, err
    first, _, _ = _estimate(err)
    before = (_chat(judge_server), _models(judge_server))
    code, out, err = cli(ws.args(out="second"))  # a new folder: no log, everything in the cache
    assert code == 0, err
    assert _estimate(err) == (0, first, 0)
    assert _summary(out) == (0, first, 0)
    assert (_chat(judge_server), _models(judge_server)) == before  # not a request, not even /models
    assert ws.metrics("second")["provenance"]["judge"]["usage"]["cache_hits"] == first


def test_a_missing_key_is_reported_before_the_estimate(
    workspace: Any, cli: Any, judge_server: Any, monkeypatch: Any
) -> None:
    ws = workspace()
    ws.write_config(api_key_env="RAGMETER_TEST_UNSET_KEY")
    monkeypatch.delenv("RAGMETER_TEST_UNSET_KEY", raising=False)
    code, out, err = cli(ws.args())
    assert (code, out) == (2, "")
    assert err == "Error: judge.api_key_env: environment variable RAGMETER_TEST_UNSET_KEY is not set\n"
    assert judge_server.requests == []


def test_models_is_asked_once_with_a_spot_check_on_the_same_server(
    workspace: Any, cli: Any, judge_server: Any
) -> None:
    ws = workspace()
    ws.write_config(reliability={"model": "second-judge", "fraction": 1.0})
    code, _, err = cli(ws.args())
    assert code == 0, err
    assert _models(judge_server) == 1


def test_judging_time_is_a_stage_of_its_own(workspace: Any, cli: Any, judge_server: Any) -> None:
    ws = workspace()
    ws.write_config()
    code, out, err = cli([*ws.args(), "-m", "groundedness"])
    assert code == 0, err
    metrics = ws.metrics()
    judging = metrics["operational"]["ragmeter_seconds"]["judging"]
    assert judging > 0
    assert metrics["provenance"]["judge"]["usage"]["seconds"] == judging
    assert "ragmeter_seconds" in out  # the operational table of the terminal
    assert re.search(r"judge test-judge: .*, \d+\.\d s judging", out)


def test_judging_prints_progress_lines_off_a_terminal(workspace: Any, cli: Any, judge_server: Any) -> None:
    ws = workspace()
    ws.write_config()
    code, _, err = cli(ws.args())
    assert code == 0, err
    done = [line for line in err.splitlines() if line.startswith("judging: ")]
    assert done and re.match(r"judging: (\d+)/\1 judgements \(100%\).*\(done\)$", done[-1])


def test_the_suite_judge_block_gets_the_same_accounting(
    workspace: Any, cli: Any, judge_server: Any, tmp_path: Any
) -> None:
    ws = workspace()
    suite = tmp_path / "suite.yaml"
    system = {"type": "python", "function": "canned:answer", "python_path": ["."]}
    (tmp_path / "canned.py").write_text(
        "def answer(sample, k):\n    return {'answer': 'It was completed in 1889.', 'retrieved': []}\n",
        encoding="utf-8",
    )
    suite.write_text(
        yaml.safe_dump(
            {"name": "judged", "dataset": "samples.yaml", "system": system, "judge": ws.judge_block()}
        ),
        encoding="utf-8",
    )
    code, out, err = cli(["run", str(suite), "--no-report", "--no-record"])
    assert code == 0, err
    planned, _, _ = _estimate(err)
    assert planned <= _chat(judge_server) <= planned + 2  # + the verification passes the answers needed
    assert _models(judge_server) == 1
    assert _summary(out)[0] == _chat(judge_server)
    assert any(line.startswith("judging: ") for line in err.splitlines())
