"""Each judge end to end against the scripted server: inputs, outputs, unscored cases."""

from __future__ import annotations

import json
from collections.abc import Callable

import judge_chat_server as cs
import pytest

from ragmeter.judges import JudgeItem, label_relevance, run_judges
from ragmeter.judges.fuzzy import fuzzy_match, normalise


def prompt_of(body: dict) -> str:
    """Which judge prompt a request carries (the json_schema name is ``<prompt id>_reply``)."""
    return body["response_format"]["json_schema"]["name"].removesuffix("_reply")


def by_prompt(replies: dict[str, Callable[[dict], cs.Reply] | cs.Reply | dict]) -> Callable[[dict], cs.Reply]:
    def script(body: dict) -> cs.Reply:
        reply = replies[prompt_of(body)]
        if callable(reply) and not isinstance(reply, cs.Reply):
            reply = reply(body)
        return reply if isinstance(reply, cs.Reply) else cs.ok(reply)

    return script


def user_text(body: dict) -> str:
    return body["messages"][-1]["content"]


ITEM = {
    "id": "q1",
    "question": "When was the Eiffel Tower completed?",
    "answer": "It was completed in 1889 [1]. It is 330 m tall.",
    "contexts": ["The Eiffel Tower was completed in 1889.", "It is located in Paris."],
    "expected_answer": "1889",
}


def test_groundedness(chat_server, judge_config) -> None:
    reply = {
        "supported_claims": ["completed in 1889"],
        "unsupported_claims": ["330 m tall"],
        "makes_claims": True,
        "score": 4,
    }
    server = chat_server(by_prompt({"groundedness": reply}))
    result = run_judges([ITEM], config=judge_config(server), judges=["groundedness"])
    [outcome] = result.outcomes
    assert outcome.metric == "groundedness"
    assert outcome.value == 4.0
    assert outcome.details == {
        "supported_claims": ["completed in 1889"],
        "unsupported_claims": ["330 m tall"],
    }
    text = user_text(server.chat_requests[0]["json"])
    assert "[1] The Eiffel Tower was completed in 1889.\n\n[2] It is located in Paris." in text
    assert ITEM["answer"] in text
    assert ITEM["question"] not in text  # the spec's judge input is answer + context
    assert outcome.inputs == {
        "answer": ITEM["answer"],
        "contexts": "[1] The Eiffel Tower was completed in 1889.\n\n[2] It is located in Paris.",
    }


def test_groundedness_without_claims_is_unscored(chat_server, judge_config) -> None:
    reply = {"supported_claims": [], "unsupported_claims": [], "makes_claims": False, "score": 0}
    server = chat_server(by_prompt({"groundedness": reply}))
    result = run_judges(
        [{**ITEM, "answer": "I could not find that."}], config=judge_config(server), judges=["groundedness"]
    )
    outcome = result.outcomes[0]
    assert outcome.value is None
    assert outcome.unscored_code == "no_claims"
    assert outcome.calls[0].parsed == reply


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"contexts": []}, "no_context"),
        ({"contexts": ["  "]}, "no_context"),
        ({"answer": " "}, "empty_answer"),
    ],
)
def test_groundedness_input_problems_make_no_call(chat_server, judge_config, change: dict, code: str) -> None:
    server = chat_server([])
    result = run_judges([{**ITEM, **change}], config=judge_config(server), judges=["groundedness"])
    assert result.outcomes[0].unscored_code == code
    assert result.outcomes[0].source == "input"
    assert server.requests == []


def test_correctness_with_and_without_reference(chat_server, judge_config) -> None:
    server = chat_server(by_prompt({"correctness": {"reasoning": "year matches", "score": 5}}))
    items = [ITEM, {**ITEM, "id": "q2", "expected_answer": None, "question": "Where is it?"}]
    result = run_judges(items, config=judge_config(server), judges=["correctness"])
    assert [o.value for o in result.outcomes] == [5.0, 5.0]
    assert result.outcomes[0].details == {"reasoning": "year matches"}
    with_ref, without_ref = (user_text(r["json"]) for r in server.chat_requests)
    assert "REFERENCE ANSWER:\n1889" in with_ref
    assert "REFERENCE ANSWER:\n(none given)" in without_ref
    assert "QUESTION:\nWhen was the Eiffel Tower completed?" in with_ref


def test_abstention_field_wins_over_judge(chat_server, judge_config) -> None:
    server = chat_server(by_prompt({"abstention": {"reasoning": "declines", "abstained": True}}))
    items = [
        {**ITEM, "id": "flag", "abstained": False},
        {**ITEM, "id": "judge", "answer": "I don't know; the notes don't say."},
    ]
    result = run_judges(items, config=judge_config(server), judges=["abstention"])
    flag, judged = result.outcomes
    assert (flag.metric, flag.value, flag.source, flag.calls) == ("abstained", 0.0, "field", [])
    assert (judged.value, judged.source) == (1.0, "judge")
    assert len(server.chat_requests) == 1
    assert "I don't know; the notes don't say." in user_text(server.chat_requests[0]["json"])


def test_factual_agreement_needs_no_verification(chat_server, judge_config) -> None:
    server = chat_server(by_prompt({"factual_match": {"reasoning": "same year", "match": True}}))
    result = run_judges([ITEM], config=judge_config(server), judges=["factual_match"])
    fuzzy, factual = result.outcomes
    assert (fuzzy.metric, fuzzy.value, fuzzy.source, fuzzy.calls) == ("fuzzy_match", 1.0, "fuzzy", [])
    assert factual.value == 1.0
    assert factual.details["disagreement"] is False
    assert [prompt_of(r["json"]) for r in server.chat_requests] == ["factual_match"]
    assert result.summary["factual_match"].n_disagreements == 0


@pytest.mark.parametrize(("verified", "expected"), [(True, 1.0), (False, 0.0)])
def test_factual_disagreement_is_verified_and_recorded(
    chat_server, judge_config, verified: bool, expected: float
) -> None:
    server = chat_server(
        by_prompt(
            {
                "factual_match": {"reasoning": "contradicts", "match": False},
                "factual_verify": {
                    "key_facts": ["completed 1889"],
                    "reasoning": "checked",
                    "match": verified,
                },
            }
        )
    )
    result = run_judges([ITEM], config=judge_config(server), judges=["factual_match"])
    factual = result.outcomes[1]
    assert factual.value == expected
    assert factual.source == "verification"
    assert factual.details["fuzzy_match"] is True
    assert factual.details["llm_match"] is False
    assert factual.details["verified_match"] is verified
    assert factual.details["disagreement"] is True
    assert [c.purpose for c in factual.calls] == ["judge", "verify"]
    assert [prompt_of(r["json"]) for r in server.chat_requests] == ["factual_match", "factual_verify"]
    assert result.summary["factual_match"].n_disagreements == 1


def test_factual_prompt_states_the_criteria(chat_server, judge_config) -> None:
    server = chat_server(by_prompt({"factual_match": {"reasoning": "same", "match": True}}))
    run_judges(
        [{**ITEM, "expected_answer": ["1889", "in 1889"]}],
        config=judge_config(server),
        judges=["factual_match"],
    )
    text = user_text(server.chat_requests[0]["json"])
    assert "IDEAL ANSWER:\nAny of:\n- 1889\n- in 1889" in text
    assert "statistics, data points or percentages" in text
    assert "economic or market indicators" in text


def test_factual_without_expected_answer(chat_server, judge_config) -> None:
    server = chat_server([])
    result = run_judges(
        [{**ITEM, "expected_answer": None}], config=judge_config(server), judges=["factual_match"]
    )
    assert [o.unscored_code for o in result.outcomes] == ["no_expected_answer", "no_expected_answer"]
    assert server.requests == []


def test_factual_verification_failure_is_unscored(chat_server, judge_config) -> None:
    server = chat_server(
        by_prompt(
            {
                "factual_match": {"reasoning": "no", "match": False},
                "factual_verify": cs.broken_json("cannot decide"),
            }
        )
    )
    result = run_judges([ITEM], config=judge_config(server), judges=["factual_match"])
    factual = result.outcomes[1]
    assert factual.unscored_code == "unparseable_reply"
    assert factual.unscored_reason.startswith("verification pass: unparseable reply")
    assert factual.details["disagreement"] is True


@pytest.mark.parametrize(
    ("answer", "expected", "matched"),
    [
        ("The tower was finished in 1889.", ["1889"], True),
        ("Completed in 1887.", ["1889"], False),
        ("It is ÉLECTRIQUE!", ["electrique"], True),  # one accent is within the fuzz (score 94.7)
        ("Zürich", ["Zurich"], False),  # but is kept (NFKC, not ASCII folding): 83.3 on a short word
        ("It is ÉLECTRIQUE!", ["électrique"], True),
        ("roughly 4.2 %", ["4.2%"], True),
        ("4", ["4.2%"], False),
        ("Paris", ["Paris", "City of Light"], True),
        ("", ["x"], False),
    ],
)
def test_fuzzy_match(answer: str, expected: list[str], matched: bool) -> None:
    assert fuzzy_match(answer, expected).matched is matched


def test_fuzzy_threshold_is_configurable() -> None:
    result = fuzzy_match("Shakespear wrote it", ["Shakespeare"], threshold=80)
    assert result.matched and 80 <= result.score < 100
    assert not fuzzy_match("Shakespear wrote it", ["Shakespeare"], threshold=99).matched


def test_normalise() -> None:
    assert normalise("Hello,   WORLD\u00a0 1,000.5!") == "hello world 1,000.5"


def test_relevance_labels(chat_server, judge_config) -> None:
    gains = {"r1": 4, "r2": 0, "r3": 2}

    def label(body: dict) -> cs.Reply:
        text = user_text(body)
        rid = next(r for r in gains if f"result {r}" in text)
        return cs.ok({"intent": "book a flight", "reasoning": "…", "gain": gains[rid]})

    server = chat_server(by_prompt({"relevance": label}))
    pairs = [
        {
            "id": "t1",
            "result_id": r,
            "task": "Book the cheapest flight to Oslo next Friday",
            "text": f"result {r}",
            "title": f"T{r}",
            "url": f"https://ex.org/{r}",
        }
        for r in gains
    ]
    result = label_relevance(pairs, config=judge_config(server))
    assert result.gains() == {"t1": {"r1": 4, "r2": 0, "r3": 2}}
    text = user_text(server.chat_requests[0]["json"])
    assert "USER TASK:\nBook the cheapest flight to Oslo next Friday" in text
    assert "Title: Tr1\nURL: https://ex.org/r1\nContent: result r1" in text
    assert "4 = essential" in text
    assert result.outcomes[0].inputs["url"] == "https://ex.org/r1"
    assert result.summary["relevance"].mean == 2.0


def test_relevance_gain_out_of_scale_is_repaired_then_unscored(chat_server, judge_config) -> None:
    server = chat_server([cs.ok({"intent": "x", "reasoning": "y", "gain": 5})] * 2)
    result = label_relevance(
        [{"id": "t", "result_id": "r", "task": "x", "text": "y"}], config=judge_config(server)
    )
    assert result.outcomes[0].unscored_code == "unparseable_reply"
    assert result.gains() == {"t": {"r": None}}


def test_all_default_judges_together(chat_server, judge_config) -> None:
    server = chat_server(
        by_prompt(
            {
                "groundedness": {
                    "supported_claims": ["a"],
                    "unsupported_claims": [],
                    "makes_claims": True,
                    "score": 5,
                },
                "correctness": {"reasoning": "ok", "score": 5},
                "abstention": {"reasoning": "answers", "abstained": False},
                "factual_match": {"reasoning": "ok", "match": True},
            }
        )
    )
    result = run_judges([ITEM], config=judge_config(server))
    assert result.values() == {
        "q1": {
            "groundedness": 5.0,
            "correctness": 5.0,
            "abstained": 0.0,
            "fuzzy_match": 1.0,
            "factual_match": 1.0,
        }
    }
    assert result.usage.calls == 4
    # the whole run serialises to JSON (for results files)
    assert json.loads(result.model_dump_json())["summary"]["correctness"]["mean"] == 5.0


def test_items_are_validated(chat_server, judge_config) -> None:
    from ragmeter.errors import ConfigError, InputError

    server = chat_server([])
    with pytest.raises(InputError, match=r"items\[0\]: answer: Field required"):
        run_judges([{"id": "q", "question": "?"}], config=judge_config(server))
    with pytest.raises(InputError, match=r"items\[1\]: duplicate id 'q'"):
        run_judges([JudgeItem(id="q", question="?", answer="a")] * 2, config=judge_config(server))
    with pytest.raises(ConfigError, match=r"unknown judge 'groundness'.*did you mean 'groundedness'"):
        run_judges([ITEM], config=judge_config(server), judges=["groundness"])
