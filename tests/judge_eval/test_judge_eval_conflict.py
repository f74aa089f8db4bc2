"""``recency_rule_pass`` on ``acknowledge_both`` questions: the conflict judge decides whether the answer
acknowledges the conflict; citations alone never pass it; without a judge the question is unscored."""

from __future__ import annotations

import json
from typing import Any

import judge_eval_chat_server as cs

from ragmeter.metrics.rag import ACKNOWLEDGE_NEEDS_JUDGE

OLD = {"rel_path": "oncall.md", "heading_path": "On-call > Rotation v1"}
NEW = {"rel_path": "oncall.md", "heading_path": "On-call > Rotation v2", "newer": True}


def _sample(qid: str, rule: str = "acknowledge_both") -> dict[str, Any]:
    return {
        "id": qid,
        "input": f"<<{qid}>> Which on-call rotation is in force?",
        "recency_conflict_rule": rule,
        "gold_supports": [OLD, NEW],
    }


def _output(
    qid: str, refs: list[dict[str, Any]], answer: str = "Weekly (v2) replaced daily (v1)."
) -> dict[str, Any]:
    chunks = [
        {"rel_path": "oncall.md", "heading_path": r["heading_path"], "text": f"<<{qid}>> text"} for r in refs
    ]
    references = [{"rel_path": r["rel_path"], "heading_path": r["heading_path"]} for r in refs]
    return {"id": qid, "output": {"answer": answer, "retrieved": chunks, "references": references}}


SAMPLES = [_sample("q1"), _sample("q2"), _sample("q3"), _sample("q4"), _sample("q5", "cite_newer")]
OUTPUTS = [
    _output("q1", [OLD, NEW]),  # cites both, acknowledges: passes
    _output("q2", [OLD, NEW], "Weekly and daily."),  # cites both, the judge finds no acknowledgement
    _output("q3", [NEW]),  # misses the older side: fails whatever the answer says
    _output("q4", [OLD, NEW]),  # the judge's reply cannot be parsed: unscored
    _output("q5", [NEW]),  # cite_newer: no judge needed
]


def test_acknowledge_both_is_judged(workspace: Any, cli: Any, scripted: Any, judge_server: Any) -> None:
    scripted.overrides[("conflict", "q2")] = {
        "reasoning": "lists both as facts",
        "acknowledges_conflict": False,
    }
    scripted.overrides[("conflict", "q4")] = cs.ok("I think so?")
    ws = workspace(samples=SAMPLES, outputs=OUTPUTS)
    ws.write_config()
    code, _, err = cli([*ws.args(), "-m", "recency_rule_pass"])
    assert code == 0, err
    metrics = ws.metrics()
    values = {q: metrics["per_query"][q]["recency_rule_pass"] for q in ("q1", "q2", "q3", "q4", "q5")}
    assert values == {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": None, "q5": 1.0}
    reason = metrics["provenance"]["metrics"]["recency_rule_pass"]["skip_reason"]
    assert reason.startswith("unparseable_reply")
    asked = [(judge, qid) for judge, qid in scripted.seen if judge == "conflict"]
    assert sorted(set(asked)) == [
        ("conflict", "q1"),
        ("conflict", "q2"),
        ("conflict", "q3"),
        ("conflict", "q4"),
    ]
    assert {judge for judge, _ in scripted.seen} == {"conflict"}  # only the judge the metric needs
    bodies = [r for r in judge_server.chat_requests if "acknowledges_conflict" in json.dumps(r["json"])]
    assert bodies and all(r["headers"]["x-ragmeter-prompt"] == "conflict.v1" for r in bodies)
    assert "conflict" in metrics["provenance"]["judge"]["prompts"]
    line = ws.per_query()["q2"]
    assert line["judges"]["conflict"]["value"] == 0.0
    assert not any("acknowledge_both question(s) unscored" in w for w in metrics["warnings"])


def test_acknowledge_both_without_a_judge_is_unscored(workspace: Any, cli: Any, judge_server: Any) -> None:
    ws = workspace(samples=SAMPLES, outputs=OUTPUTS)
    code, _, err = cli([*ws.args(), "-m", "recency_rule_pass"])
    assert code == 0, err
    metrics = ws.metrics()
    assert [metrics["per_query"][q]["recency_rule_pass"] for q in ("q1", "q2", "q3", "q4", "q5")] == [
        None,
        None,
        None,
        None,
        1.0,
    ]
    reasons = metrics["provenance"]["metrics"]["recency_rule_pass"]
    assert reasons["skip_reason"] == ACKNOWLEDGE_NEEDS_JUDGE
    assert ws.per_query()["q1"]["unscored"]["recency_rule_pass"] == ACKNOWLEDGE_NEEDS_JUDGE
    assert "4 acknowledge_both question(s) unscored" in err
    assert judge_server.requests == []
