"""Relevance labeller: a 0-4 gain for one (task, search result) pair, judged against the user's task.

The scale wording lives in ``prompts/relevance.v1.md``; gains >= 2 are the
"good gain" of the agentic metrics.

>>> SPEC.interpret(RelevanceReply(intent="find X", reasoning="gives X", gain=3)).value
3.0
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ragmeter.judges.engine import Interpretation, JudgeSpec
from ragmeter.judges.items import RelevancePair

NAME = "relevance"


class RelevanceReply(BaseModel):
    """The labeller's JSON reply."""

    intent: str
    reasoning: str
    gain: int = Field(ge=0, le=4)


JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "intent": {"type": "string"},
        "reasoning": {"type": "string"},
        "gain": {"type": "integer", "minimum": 0, "maximum": 4},
    },
    "required": ["intent", "reasoning", "gain"],
    "additionalProperties": False,
}


def _interpret(reply: RelevanceReply) -> Interpretation:
    return Interpretation(float(reply.gain), {"intent": reply.intent, "reasoning": reply.reasoning})


SPEC = JudgeSpec(NAME, NAME, RelevanceReply, JSON_SCHEMA, _interpret)


def variables_for(pair: RelevancePair) -> dict[str, str] | tuple[str, str]:
    """The prompt variables, or an unscored ``(code, reason)``."""
    if not pair.text.strip() and not pair.title:
        return ("empty_result", "the search result has no text")
    return {"task": pair.task, "result": pair.rendered()}
