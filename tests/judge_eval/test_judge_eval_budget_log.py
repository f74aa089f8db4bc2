"""--max-cost stops judging before spending more and keeps what was judged; the judge log in --out
resumes without asking again, never serves a stale judgement, and a log of another setup is kept."""

from __future__ import annotations

import json

import pytest

BUDGET = 0.004
"""USD: a call reserves 0.0009-0.0015 (its prompt estimate at 2 USD/Mtok + 64 completion tokens at
4 USD/Mtok) and costs 0.00048 (200 + 20 tokens): 5 to 7 of the 9 calls fit."""


def test_judge_eval_max_cost_stops_early_and_keeps_what_was_judged(
    workspace, cli, scripted, judge_server
) -> None:
    scripted.tokens = (200, 20)
    ws = workspace()
    ws.write_config(concurrency=1)
    code, _, err = cli(ws.args("--max-cost", str(BUDGET)))
    assert code == 0, err
    assert f"budget: judging stops before spending more than {BUDGET:g} USD" in err
    assert f"max_cost_usd {BUDGET:g} reached" in err
    metrics = ws.metrics()
    usage = metrics["provenance"]["judge"]["usage"]
    first_calls = len(judge_server.chat_requests)
    assert 1 <= first_calls < 9
    assert usage["budget_exhausted"] is True and usage["max_cost_usd"] == BUDGET
    assert usage["calls"] == first_calls
    assert usage["cost_usd"] == pytest.approx(first_calls * 0.00048) and usage["cost_usd"] <= BUDGET
    budget_reason = "budget_exhausted: max_cost_usd was reached before this item was judged"
    skipped = [
        reason
        for info in metrics["provenance"]["metrics"].values()
        for reason in info.get("skip_reasons", {info.get("skip_reason"): 1})
    ]
    assert budget_reason in skipped
    judged_first = list(scripted.seen)

    # run again without the budget: only what was not judged is asked
    code, _, err = cli(ws.args())
    assert code == 0, err
    asked_again = scripted.seen[len(judged_first) :]
    assert len(asked_again) == 9 - first_calls
    assert not set(asked_again) & set(judged_first), "a judgement was paid for twice"
    again = ws.metrics()
    assert again["aggregate"]["groundedness"] == 4.0 and again["n_scored"]["groundedness"] == 2
    assert again["provenance"]["judge"]["resumed"] >= first_calls


def test_judge_eval_log_in_out_resumes_without_asking_again(workspace, cli, judge_server) -> None:
    ws = workspace()
    ws.write_config(cache=False)  # only the log can spare the calls
    assert cli(ws.args())[0] == 0
    log = ws.root / "results" / "judge_log.jsonl"
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["kind"] == "header"
    assert {line["item_id"] for line in lines[1:]} == {"q1", "q2", "q3"}
    before = len(judge_server.chat_requests)
    assert cli(ws.args())[0] == 0
    assert len(judge_server.chat_requests) == before
    assert ws.metrics()["provenance"]["judge"]["resumed"] == len(lines) - 1


def test_judge_eval_changed_answer_is_judged_again_not_served_from_the_log(
    workspace, cli, scripted, default_outputs
) -> None:
    ws = workspace()
    ws.write_config(cache=False)
    assert cli(ws.args())[0] == 0
    first = len(scripted.seen)
    default_outputs[0]["output"]["answer"] = "It opened in 1889 [1]."
    ws = workspace(outputs=default_outputs)
    ws.write_config(cache=False)
    assert cli(ws.args())[0] == 0
    again = scripted.seen[first:]
    assert sorted(again) == [
        ("abstention", "q1"),
        ("correctness", "q1"),
        ("factual_match", "q1"),
        ("groundedness", "q1"),
    ]
    judges = ws.per_query()["q1"]["judges"]
    assert judges["groundedness"]["inputs"]["answer"] == "It opened in 1889 [1]."


def test_judge_eval_log_of_another_setup_is_kept_aside(workspace, cli) -> None:
    ws = workspace()
    ws.write_config()
    assert cli(ws.args("--judges", "correctness"))[0] == 0
    code, _, err = cli(ws.args("--judges", "groundedness"))
    assert code == 0, err
    assert "was written with another judge setup" in err
    kept = sorted(p.name for p in (ws.root / "results").glob("judge_log.*.jsonl"))
    assert len(kept) == 1
    assert ws.metrics()["aggregate"]["groundedness"] == 4.0
