"""Factual match (binary): fuzzy match and a GPTScore-style judge; verification breaks ties.

1. Fuzzy match (:mod:`ragmeter.judges.fuzzy`) of the expected answer(s) in the answer.
2. The factual-match judge applies the QA document's five criteria: 1 = factually
   matching, 0 = factually contradicting (or missing the central fact).
3. If the two agree, that is the value. If they disagree, the verification
   prompt (``factual_verify``) checks fact by fact and its verdict is the value;
   the disagreement is recorded in ``details`` and counted in the summary.

Every run of this judge also yields a ``fuzzy_match`` outcome (no LLM call).

>>> decide(fuzzy=True, llm=True, verified=None)
(1.0, False)
>>> decide(fuzzy=True, llm=False, verified=False)
(0.0, True)
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ragmeter.judges.engine import Engine
from ragmeter.judges.fuzzy import fuzzy_match
from ragmeter.judges.items import JudgeItem
from ragmeter.judges.results import JudgeOutcome

NAME = "factual_match"
VERIFY = "factual_verify"
FUZZY = "fuzzy_match"


class FactualReply(BaseModel):
    """The factual-match judge's JSON reply."""

    reasoning: str
    match: bool


class VerifyReply(BaseModel):
    """The verification pass's JSON reply."""

    key_facts: list[str]
    reasoning: str
    match: bool


JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "match": {"type": "boolean"}},
    "required": ["reasoning", "match"],
    "additionalProperties": False,
}

VERIFY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "key_facts": {"type": "array", "items": {"type": "string"}},
        "reasoning": {"type": "string"},
        "match": {"type": "boolean"},
    },
    "required": ["key_facts", "reasoning", "match"],
    "additionalProperties": False,
}


def decide(*, fuzzy: bool, llm: bool, verified: bool | None) -> tuple[float, bool]:
    """``(value, disagreement)``: agreement decides, else the verification verdict."""
    if fuzzy == llm:
        return (1.0 if llm else 0.0), False
    if verified is None:
        raise ValueError("fuzzy match and judge disagree: a verification verdict is needed")
    return (1.0 if verified else 0.0), True


def variables_for(item: JudgeItem) -> dict[str, str] | tuple[str, str]:
    """The prompt variables, or an unscored ``(code, reason)``."""
    expected = item.expected_answers()
    if not expected:
        return ("no_expected_answer", "the sample has no expected answer")
    if not item.answer.strip():
        return ("empty_answer", "the answer is empty")
    ideal = expected[0] if len(expected) == 1 else "Any of:\n" + "\n".join(f"- {e}" for e in expected)
    return {"question": item.question, "ideal_answer": ideal, "answer": item.answer}


def fuzzy_outcome(item: JudgeItem, *, key: str, threshold: float) -> JudgeOutcome:
    """The deterministic ``fuzzy_match`` outcome (1/0), unscored without an expected answer."""
    expected = item.expected_answers()
    common: dict[str, Any] = {
        "key": key,
        "item_id": item.id,
        "judge": FUZZY,
        "metric": FUZZY,
        "source": "fuzzy",
    }
    if not expected:
        return JudgeOutcome(
            **common,
            value=None,
            unscored_code="no_expected_answer",
            unscored_reason="the sample has no expected answer",
        )
    result = fuzzy_match(item.answer, expected, threshold=threshold)
    return JudgeOutcome(
        **common,
        value=1.0 if result.matched else 0.0,
        details={"score": result.score, "threshold": threshold, "best_expected": result.best_expected},
        inputs={"answer": item.answer, "expected": expected},
    )


def judge_factual(engine: Engine, item: JudgeItem, *, key: str, threshold: float) -> JudgeOutcome:
    """Fuzzy match, factual-match judge and (on disagreement) verification; one outcome."""
    common: dict[str, Any] = {
        "key": key,
        "item_id": item.id,
        "judge": NAME,
        "metric": NAME,
        "role": engine.role,
    }
    variables = variables_for(item)
    if isinstance(variables, tuple):
        return JudgeOutcome(**common, value=None, unscored_code=variables[0], unscored_reason=variables[1])
    fuzzy = fuzzy_match(item.answer, item.expected_answers(), threshold=threshold)
    details: dict[str, Any] = {"fuzzy_match": fuzzy.matched, "fuzzy_score": fuzzy.score}
    asked = engine.ask(NAME, variables, FactualReply, JSON_SCHEMA, judge=NAME)
    calls = [asked.call]
    common.update(inputs=variables, calls=calls)
    if asked.parsed is None:
        code, reason = asked.failure or ("unparseable_reply", "no reply")
        return JudgeOutcome(**common, value=None, unscored_code=code, unscored_reason=reason, details=details)
    details.update(llm_match=asked.parsed.match, reasoning=asked.parsed.reasoning)
    if fuzzy.matched == asked.parsed.match:
        value, _ = decide(fuzzy=fuzzy.matched, llm=asked.parsed.match, verified=None)
        return JudgeOutcome(**common, value=value, details={**details, "disagreement": False})
    verify = engine.ask(VERIFY, variables, VerifyReply, VERIFY_SCHEMA, judge=NAME, purpose="verify")
    calls.append(verify.call)
    details["disagreement"] = True
    if verify.parsed is None:
        code, reason = verify.failure or ("unparseable_reply", "no reply")
        return JudgeOutcome(
            **common,
            value=None,
            unscored_code=code,
            unscored_reason=f"verification pass: {reason}",
            details=details,
        )
    value, _ = decide(fuzzy=fuzzy.matched, llm=asked.parsed.match, verified=verify.parsed.match)
    details.update(
        verified_match=verify.parsed.match,
        verification_reasoning=verify.parsed.reasoning,
        key_facts=verify.parsed.key_facts,
    )
    return JudgeOutcome(**common, value=value, source="verification", details=details)
