"""Correctness 0-5: does the answer correctly address the question.

Input: question, answer, the numbered context chunks and, when the sample has
one, the expected answer as a reference. Output: the score and the judge's
reasoning.

>>> SPEC.interpret(CorrectnessReply(reasoning="right", score=4)).value
4.0
>>> variables_for(JudgeItem(id="q", question="?", answer="x"))["reference"]
'(none given)'
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ragmeter.judges.engine import Interpretation, JudgeSpec
from ragmeter.judges.items import JudgeItem, render_contexts

NAME = "correctness"
NONE_GIVEN = "(none given)"


class CorrectnessReply(BaseModel):
    """The judge's JSON reply."""

    reasoning: str
    score: int = Field(ge=0, le=5)


JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reasoning": {"type": "string"},
        "score": {"type": "integer", "minimum": 0, "maximum": 5},
    },
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}


def _interpret(reply: CorrectnessReply) -> Interpretation:
    return Interpretation(float(reply.score), {"reasoning": reply.reasoning})


SPEC = JudgeSpec(NAME, NAME, CorrectnessReply, JSON_SCHEMA, _interpret)


def variables_for(item: JudgeItem) -> dict[str, str] | tuple[str, str]:
    """The prompt variables, or an unscored ``(code, reason)``."""
    if not item.answer.strip():
        return ("empty_answer", "the answer is empty")
    expected = item.expected_answers()
    return {
        "question": item.question,
        "answer": item.answer,
        "contexts": render_contexts(item.contexts) if item.contexts else NONE_GIVEN,
        "reference": "\n".join(f"- {e}" for e in expected)
        if len(expected) > 1
        else (expected or [NONE_GIVEN])[0],
    }
