"""Strict JSON extraction, the single repair request, and unparseable replies ending unscored."""

from __future__ import annotations

import judge_chat_server as cs
import pytest
from pydantic import BaseModel, Field

from ragmeter.judges import run_judges
from ragmeter.judges.cache import JudgeCache
from ragmeter.judges.engine import REPAIR_MESSAGE
from ragmeter.judges.parsing import json_objects, parse_reply


class Reply(BaseModel):
    reasoning: str
    score: int = Field(ge=0, le=5)


GOOD = {"reasoning": "fine", "score": 3}
ITEM = {
    "id": "q1",
    "question": "Who wrote Hamlet?",
    "answer": "Shakespeare.",
    "contexts": ["Hamlet is by Shakespeare."],
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"reasoning": "fine", "score": 3}', 3),
        ('  \n{"reasoning": "fine", "score": 3}\n', 3),
        ('Here you go:\n```json\n{"reasoning": "fine", "score": 3}\n```\nBye', 3),
        ('```\n{"reasoning": "fine", "score": 3}\n```', 3),
        ('My verdict is {"reasoning": "fine", "score": 3}. Thanks!', 3),
        ('{"reasoning": "a {brace} inside", "score": 3}', 3),
        ('{"reasoning": "fine", "score": 3, "extra": true}', 3),
        ('{"reasoning": "fine", "score": 3.0}', 3),
        # the same object twice is not ambiguous
        ('{"reasoning": "fine", "score": 3} again: {"reasoning": "fine", "score": 3}', 3),
        # an example object that does not fit, then the real one
        ('Format {"score": "n"}; answer {"reasoning": "fine", "score": 3}', 3),
    ],
)
def test_accepted_replies(text: str, expected: int) -> None:
    parsed, error = parse_reply(text, Reply)
    assert error is None
    assert parsed is not None and parsed.score == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty reply"),
        ("   ", "empty reply"),
        ("The score is 4.", "no JSON object found in the reply"),
        ('{"reasoning": "fine", "score": 4', "no JSON object found in the reply"),
        ("[1, 2, 3]", "no JSON object found in the reply"),
        (
            '{"reasoning": "fine", "score": 7}',
            "JSON object does not fit the expected format: score: Input should be less than or equal to 5",
        ),
        (
            '{"reasoning": "fine", "score": 3.5}',
            "JSON object does not fit the expected format: score: Input should be a valid integer, got a number with a fractional part",
        ),
        ('{"reasoning": "fine"}', "JSON object does not fit the expected format: score: Field required"),
        (
            '{"reasoning": "a", "score": 1} or {"reasoning": "b", "score": 2}',
            "ambiguous reply: 2 different JSON objects fit the expected format",
        ),
    ],
)
def test_rejected_replies(text: str, reason: str) -> None:
    parsed, error = parse_reply(text, Reply)
    assert parsed is None
    assert error == reason


def test_json_objects_skips_nested() -> None:
    assert json_objects('x {"a": {"b": {"c": 1}}} y {"d": [ {"e": 2} ]}') == [
        {"a": {"b": {"c": 1}}},
        {"d": [{"e": 2}]},
    ]


def test_json_in_prose_is_scored(chat_server, judge_config) -> None:
    server = chat_server([cs.json_in_prose(GOOD)])
    result = run_judges([ITEM], config=judge_config(server), judges=["correctness"])
    assert result.outcomes[0].value == 3.0
    assert len(server.chat_requests) == 1
    assert result.outcomes[0].calls[0].repair_reason is None


def test_broken_json_then_repair(chat_server, judge_config) -> None:
    server = chat_server([cs.broken_json('{"reasoning": "fine", "score": 3'), cs.ok(GOOD, prompt_tokens=50)])
    result = run_judges([ITEM], config=judge_config(server), judges=["correctness"])
    outcome = result.outcomes[0]
    assert outcome.value == 3.0
    call = outcome.calls[0]
    assert call.raw_replies == ['{"reasoning": "fine", "score": 3', '{"reasoning": "fine", "score": 3}']
    assert call.repair_reason == "no JSON object found in the reply"
    first, repair = server.chat_requests
    messages = repair["json"]["messages"]
    assert messages[:-2] == first["json"]["messages"]
    assert messages[-2] == {"role": "assistant", "content": '{"reasoning": "fine", "score": 3'}
    assert messages[-1] == {
        "role": "user",
        "content": REPAIR_MESSAGE.format(reason="no JSON object found in the reply"),
    }
    # both replies are paid for
    assert call.prompt_tokens == 60 and call.completion_tokens == 10
    assert result.usage.calls == 2


def test_unparseable_after_repair_is_unscored_counted_and_not_cached(chat_server, judge_config) -> None:
    items = [ITEM, {**ITEM, "id": "q2", "question": "Who wrote Macbeth?"}]

    def script(body: dict) -> cs.Reply:
        if "Macbeth" in body["messages"][1]["content"]:
            return cs.ok({"reasoning": "fine", "score": 5})
        return cs.broken_json("I think it deserves a 4 out of 5.")

    server = chat_server(script)
    cfg = judge_config(server)
    result = run_judges(items, config=cfg, judges=["correctness"])
    bad, good = result.outcomes
    assert good.value == 5.0
    assert bad.value is None
    assert bad.status == "unscored"
    assert bad.unscored_code == "unparseable_reply"
    assert bad.unscored_reason == (
        "unparseable reply (no JSON object found in the reply); after repair: no JSON object found in the reply"
    )
    assert bad.calls[0].raw_replies == ["I think it deserves a 4 out of 5."] * 2
    assert not bad.retryable
    summary = result.summary["correctness"]
    assert (summary.n_scored, summary.n_unscored, summary.mean) == (1, 1, 5.0)
    assert summary.unscored_by_code == {"unparseable_reply": 1}
    assert len(server.chat_requests) == 3
    cache = JudgeCache(cfg["cache_path"])
    try:
        assert cache.stats()["entries"] == 1
    finally:
        cache.close()
    # the next run asks again about the unparseable item only
    again = run_judges(items, config=cfg, judges=["correctness"])
    assert len(server.chat_requests) == 5
    assert again.usage.cache_hits == 1
    assert again.outcomes[0].unscored_code == "unparseable_reply"


def test_out_of_range_score_is_repaired(chat_server, judge_config) -> None:
    server = chat_server(
        [cs.ok({"reasoning": "great", "score": 9}), cs.ok({"reasoning": "great", "score": 5})]
    )
    result = run_judges([ITEM], config=judge_config(server), judges=["correctness"])
    assert result.outcomes[0].value == 5.0
    assert result.outcomes[0].calls[0].repair_reason == (
        "JSON object does not fit the expected format: score: Input should be less than or equal to 5"
    )


def test_truncated_reply_reason_names_max_tokens(chat_server, judge_config) -> None:
    cut = cs.Reply(content='{"reasoning": "a long story', finish_reason="length")
    server = chat_server([cut, cut])
    result = run_judges([ITEM], config=judge_config(server), judges=["correctness"])
    outcome = result.outcomes[0]
    assert outcome.unscored_code == "unparseable_reply"
    assert outcome.calls[0].repair_reason == (
        "no JSON object found in the reply (the reply was cut off at max_tokens=256)"
    )
