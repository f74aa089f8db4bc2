"""``ragmeter eval`` with a ``judge:`` block: judge metrics per query and in the aggregate, pinned
requests, provenance and usage, the cache, the abstention fallback, and what never reaches a file."""

from __future__ import annotations

import json
from pathlib import Path

import judge_eval_chat_server as cs
import pytest

from ragmeter.metrics.rag import ABSTAINED_MISSING

ANSWER_METRICS = ("groundedness", "correctness", "factual_match", "fuzzy_match")


def test_judge_eval_end_to_end_metrics_per_query_and_aggregate(workspace, cli, scripted) -> None:
    ws = workspace()
    ws.write_config()
    code, out, err = cli(ws.args())
    assert code == 0, err
    metrics = ws.metrics()
    agg, per_query = metrics["aggregate"], metrics["per_query"]
    assert {m: agg[m] for m in ANSWER_METRICS} == {
        "groundedness": 4.0,
        "correctness": 5.0,
        "factual_match": 1.0,
        "fuzzy_match": 1.0,
    }
    for metric in ANSWER_METRICS:
        assert [per_query[q][metric] for q in ("q1", "q2", "q3", "q4", "q5")] == [
            per_query["q1"][metric],
            per_query["q2"][metric],
            None,
            None,
            None,
        ]
        assert metrics["n_scored"][metric] == 2 and metrics["n_skipped"][metric] == 3
        reasons = metrics["provenance"]["metrics"][metric]["skip_reasons"]
        assert reasons == {"unanswerable question": 2, "no answer: the call failed": 1}
    # the table on stdout carries the judge metrics and the judge's usage line
    for metric in ANSWER_METRICS:
        assert metric in out
    assert "judge test-judge:" in out
    # the cost estimate comes first on stderr
    assert err.splitlines()[0].startswith("judging 3 answer(s): ")
    assert "USD (upper bound)" in err.splitlines()[0]
    # the failed call (q5) and the output with its own 'abstained' flag (q4) were never judged
    assert {qid for _, qid in scripted.seen} == {"q1", "q2", "q3"}


def test_judge_eval_requests_are_pinned_and_recorded(workspace, cli, judge_server) -> None:
    ws = workspace()
    ws.write_config()
    assert cli(ws.args())[0] == 0
    requests = judge_server.chat_requests
    assert requests
    for request in requests:
        body, headers = request["json"], request["headers"]
        assert body["temperature"] == 0
        assert body["model"] == "test-judge"
        assert body["seed"] == 7
        prompt_id = body["response_format"]["json_schema"]["name"].removesuffix("_reply")
        assert headers["x-ragmeter-prompt"] == f"{prompt_id}.v1"
        assert len(headers["x-ragmeter-prompt-sha256"]) == 64
    judge = ws.metrics()["provenance"]["judge"]
    assert judge["judge"]["model"] == "test-judge"
    assert judge["judge"]["model_revision"] == "sha256:test"
    assert judge["judge"]["models_reported"] == ["test-judge"]
    assert judge["judge"]["temperature"] == 0 and judge["judge"]["seed"] == 7
    assert judge["judge"]["endpoint"] == ws.server.base_url
    assert judge["judge"]["api_key_env"] == "RAGMETER_TEST_JUDGE_KEY"
    assert set(judge["prompts"]) == {
        "groundedness",
        "correctness",
        "factual_match",
        "factual_verify",
        "abstention",
    }
    for prompt in judge["prompts"].values():
        assert prompt["version"] == "v1" and len(prompt["sha256"]) == 64
    assert judge["judges"] == ["groundedness", "correctness", "factual_match", "abstention"]


def test_judge_eval_usage_and_cost_equal_the_scripted_usage(workspace, cli, judge_server) -> None:
    ws = workspace()
    ws.write_config()
    assert cli(ws.args())[0] == 0
    usage = ws.metrics()["provenance"]["judge"]["usage"]
    n = len(judge_server.chat_requests)
    # q1, q2: 3 answer judges + abstention (false_abstention_rate is a default: q4 has a flag); q3: abstention
    assert n == 9
    assert usage["calls"] == n and usage["cache_hits"] == 0
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (10 * n, 5 * n)
    assert usage["cost_usd"] == pytest.approx(n * ws.cost_per_call, abs=1e-12)
    assert usage["budget_exhausted"] is False


def test_judge_eval_second_identical_run_makes_zero_judge_calls(workspace, cli, judge_server) -> None:
    ws = workspace()
    ws.write_config()
    assert cli(ws.args(out="first"))[0] == 0
    first_calls = len(judge_server.chat_requests)
    before = len(judge_server.requests)
    code, _, err = cli(ws.args(out="second"))
    assert code == 0, err
    assert len(judge_server.requests) == before, "a cached run must not even open a connection"
    assert "9 from the cache" in err
    first, second = ws.metrics("first"), ws.metrics("second")
    assert second["per_query"] == first["per_query"]
    assert second["provenance"]["judge"]["usage"]["calls"] == 0
    assert second["provenance"]["judge"]["usage"]["cache_hits"] == first_calls
    assert second["provenance"]["judge"]["usage"]["cost_usd"] == 0


def test_judge_eval_unscored_replies_are_counted_never_zero(workspace, cli, scripted) -> None:
    scripted.overrides[("groundedness", "q2")] = cs.broken_json()  # and its repair: broken again
    scripted.overrides[("correctness", "q2")] = cs.bad_request("context too long", status=400)
    ws = workspace()
    ws.write_config()
    code, _, err = cli(ws.args())
    assert code == 0, err
    metrics = ws.metrics()
    assert metrics["per_query"]["q2"]["groundedness"] is None
    assert metrics["per_query"]["q2"]["correctness"] is None
    assert metrics["aggregate"]["groundedness"] == 4.0  # q1 only: not (4 + 0) / 2
    assert metrics["aggregate"]["correctness"] == 5.0
    assert (metrics["n_scored"]["groundedness"], metrics["n_skipped"]["groundedness"]) == (1, 4)
    reasons = metrics["provenance"]["metrics"]["groundedness"]["skip_reasons"]
    assert (
        reasons["unparseable_reply: the judge's reply could not be parsed, even after one repair request"]
        == 1
    )
    summary = metrics["provenance"]["judge"]["summary"]["groundedness"]
    assert summary["unscored_by_code"] == {"unparseable_reply": 1}
    assert "unparseable_reply" in err and "request_rejected" in err  # warned
    q2 = ws.per_query()["q2"]
    assert q2["unscored"]["correctness"].startswith("request_rejected: ")
    assert len(q2["judges"]["groundedness"]["calls"][0]["raw_replies"]) == 2  # the reply and its repair


def test_judge_eval_per_query_lines_carry_judge_inputs_and_raw_replies(workspace, cli) -> None:
    ws = workspace()
    ws.write_config()
    assert cli(ws.args())[0] == 0
    lines = ws.per_query()
    q1 = lines["q1"]["judges"]
    assert set(q1) == {"groundedness", "correctness", "factual_match", "fuzzy_match", "abstention"}
    grounded = q1["groundedness"]
    assert grounded["value"] == 4.0 and grounded["status"] == "scored"
    assert grounded["inputs"]["answer"] == "It was completed in 1889 [1]."
    assert "[1] <<q1>> The Eiffel Tower was completed in 1889." in grounded["inputs"]["contexts"]
    call = grounded["calls"][0]
    assert json.loads(call["raw_replies"][0])["score"] == 4
    assert call["request"]["temperature"] == 0 and call["prompt"]["version"] == "v1"
    assert q1["fuzzy_match"]["details"]["best_expected"] == "1889"
    assert "judges" not in lines["q5"]  # the failed call: nothing judged
    assert lines["q5"]["unscored"]["groundedness"] == "no answer: the call failed"


def test_judge_eval_abstention_judge_only_where_abstained_is_missing(workspace, cli, scripted) -> None:
    ws = workspace()
    ws.write_config()
    assert cli(ws.args())[0] == 0
    asked = sorted(qid for judge, qid in scripted.seen if judge == "abstention")
    # q4 has its own flag; q5's call failed; q1 and q2 feed false_abstention_rate
    assert asked == ["q1", "q2", "q3"]
    lines = ws.per_query()
    assert lines["q3"]["abstained_source"] == "judge"
    assert lines["q4"]["abstained_source"] == "output"
    per_query = ws.metrics()["per_query"]
    assert per_query["q3"]["abstention_accuracy"] == 1.0  # the judge says it declined
    assert per_query["q4"]["abstention_accuracy"] == 0.0  # its own flag says it answered
    assert per_query["q3"]["hallucination_rate_unanswerable"] == 0.0
    assert per_query["q1"]["false_abstention_rate"] == 1.0  # the script says every answer declines
    assert ws.per_query()["q5"]["unscored"]["false_abstention_rate"] == "no answer: the call failed"
    assert lines["q3"]["judges"]["abstention"]["inputs"]["answer"] == "I cannot find that in the notes."


def test_judge_eval_without_a_judge_abstention_stays_unscored(workspace, cli, judge_server) -> None:
    ws = workspace()
    code, _, err = cli(ws.args())
    assert code == 0, err
    assert judge_server.requests == []
    metrics = ws.metrics()
    assert "groundedness" not in metrics["aggregate"] and "judge" not in metrics["provenance"]
    assert metrics["per_query"]["q3"]["abstention_accuracy"] is None
    assert ws.per_query()["q3"]["unscored"]["abstention_accuracy"] == ABSTAINED_MISSING
    assert "judging" not in err


def test_judge_eval_no_judge_skips_the_config_block(workspace, cli, judge_server) -> None:
    ws = workspace()
    ws.write_config()
    code, _, err = cli(ws.args("--no-judge"))
    assert code == 0, err
    assert judge_server.requests == []
    assert "groundedness" not in ws.metrics()["aggregate"]


def test_judge_eval_judges_option_picks_the_judges(workspace, cli, scripted) -> None:
    ws = workspace()
    ws.write_config()
    code, _, err = cli(ws.args("--judges", "correctness"))
    assert code == 0, err
    agg = ws.metrics()["aggregate"]
    assert "correctness" in agg and "groundedness" not in agg and "factual_match" not in agg
    assert {judge for judge, _ in scripted.seen} == {"correctness", "abstention"}


def test_judge_eval_named_metrics_run_only_the_judges_they_need(workspace, cli, scripted) -> None:
    ws = workspace()
    ws.write_config()
    code, _, err = cli(ws.args("-m", "hit@5", "-m", "groundedness", "-m", "false_abstention_rate"))
    assert code == 0, err
    assert sorted(ws.metrics()["aggregate"]) == ["false_abstention_rate", "groundedness", "hit@5"]
    # false_abstention_rate asks the abstention judge about the answerable questions
    assert sorted(scripted.seen) == [
        ("abstention", "q1"),
        ("abstention", "q2"),
        ("groundedness", "q1"),
        ("groundedness", "q2"),
    ]
    assert ws.metrics()["per_query"]["q1"]["false_abstention_rate"] == 1.0  # the script says "declined"


def test_judge_eval_judge_config_file_option(workspace, cli, tmp_path: Path) -> None:
    ws = workspace()
    path = tmp_path / "judge.yaml"
    path.write_text(json.dumps({"judge": ws.judge_block()}), encoding="utf-8")
    code, _, err = cli(ws.args("--judge-config", str(path)))
    assert code == 0, err
    assert ws.metrics()["aggregate"]["groundedness"] == 4.0


def test_judge_eval_secret_never_reaches_a_file(workspace, cli, tmp_path: Path) -> None:
    ws = workspace()
    ws.write_config(reliability={"model": "second-judge", "n": 2})
    code, out, err = cli(ws.args("--record", "--history", str(tmp_path / "history.sqlite")))
    assert code == 0, err
    assert ws.secret not in out + err
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {"metrics.json", "per_query.jsonl", "judge_log.jsonl", "judge_cache.sqlite", "history.sqlite"} <= {
        p.name for p in files
    }
    for path in files:
        assert ws.secret.encode() not in path.read_bytes(), path


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["-m", "groundedness"],
            "Error: judge: metric groundedness needs an LLM judge: add a 'judge:' block to the config, or give "
            "--judge-config / judge= (see docs/judges.md)",
        ),
        (["--judges", "correctness"], "Error: judges: judges were named but no judge is configured"),
        (
            ["--no-judge", "--max-cost", "1"],
            "Error: --no-judge cannot be combined with --max-cost",
        ),
        (
            ["--max-cost", "1"],
            "Error: --max-cost / max_cost limits the LLM judges, but no judge is configured",
        ),
    ],
    ids=["metric-without-judge", "judges-without-judge", "no-judge-and-max-cost", "max-cost-without-judge"],
)
def test_judge_eval_option_errors(workspace, cli, argv: list[str], message: str) -> None:
    ws = workspace()
    code, out, err = cli(ws.args(*argv))
    assert (code, out, err) == (2, "", message + "\n")


def test_judge_eval_unknown_judge_name_suggests(workspace, cli) -> None:
    ws = workspace()
    ws.write_config()
    code, _, err = cli(ws.args("--judges", "groundednes"))
    assert code == 2
    assert err == (
        "Error: judges: unknown judge 'groundednes' (known: groundedness, correctness, factual_match); "
        "did you mean 'groundedness'?\n"
    )


def test_judge_eval_unreachable_endpoint_is_one_line(workspace, cli) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ws = workspace()
    ws.write_config(base_url=f"http://127.0.0.1:{port}/v1")
    code, out, err = cli(ws.args())
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith(
        f"Error: judge.base_url: cannot reach the judge endpoint http://127.0.0.1:{port}/v1 ("
    )
    assert err.endswith("; is the server running?\n")


def test_judge_eval_trec_mode_refuses_judge_options(workspace, cli, tmp_path: Path) -> None:
    workspace()
    (tmp_path / "q.trec").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "r.trec").write_text("q1 Q0 d1 1 1.0 r\n", encoding="utf-8")
    code, _, err = cli(["eval", "--qrels", "q.trec", "--run", "r.trec", "--judges", "correctness"])
    assert (code, err) == (2, "Error: the judge options apply to --dataset evaluations only\n")


def test_judge_eval_json_output_stays_pure_and_says_the_budget_stop(workspace, cli, scripted) -> None:
    scripted.tokens = (200, 20)
    ws = workspace()
    ws.write_config(concurrency=1)
    code, out, err = cli(ws.args("--json", "--max-cost", "0.004", out=None))
    assert code == 0, err
    data = json.loads(out)
    assert data["provenance"]["judge"]["usage"]["budget_exhausted"] is True
    assert any(w.startswith("judge: max_cost_usd 0.004 reached") for w in data["warnings"])
    assert err.startswith("judging 3 answer(s): ")
    assert "judge: stopped before spending more: max_cost_usd 0.004 reached" in err
    assert not list(ws.root.glob("**/judge_log.jsonl")), "no --out: no log"
