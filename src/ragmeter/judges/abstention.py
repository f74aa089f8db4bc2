"""Abstention: did the system decline to answer? 1 = abstained, 0 = answered.

The system's own ``abstained`` flag is preferred; this judge is the fallback,
used only for outputs without one (spec: "Option 2"). The value feeds
abstention accuracy and the hallucination rate on unanswerable questions.

>>> SPEC.interpret(AbstentionReply(reasoning="says it cannot find it", abstained=True)).value
1.0
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ragmeter.judges.engine import Interpretation, JudgeSpec
from ragmeter.judges.items import JudgeItem

NAME = "abstention"
METRIC = "abstained"


class AbstentionReply(BaseModel):
    """The judge's JSON reply."""

    reasoning: str
    abstained: bool


JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "abstained": {"type": "boolean"}},
    "required": ["reasoning", "abstained"],
    "additionalProperties": False,
}


def _interpret(reply: AbstentionReply) -> Interpretation:
    return Interpretation(1.0 if reply.abstained else 0.0, {"reasoning": reply.reasoning})


SPEC = JudgeSpec(NAME, METRIC, AbstentionReply, JSON_SCHEMA, _interpret)


def variables_for(item: JudgeItem) -> dict[str, str] | tuple[str, str]:
    """The prompt variables, or an unscored ``(code, reason)``."""
    if not item.answer.strip():
        return ("empty_answer", "the answer is empty")
    return {"question": item.question, "answer": item.answer}
