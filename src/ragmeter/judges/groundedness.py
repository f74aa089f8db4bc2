"""Groundedness 0-5: how far the answer's claims are supported (and cited) by the retrieved context.

Input: the answer and the numbered context chunks (the question is not shown,
as the spec prescribes). Output: the score plus ``supported_claims`` and
``unsupported_claims``. An answer that makes no factual claim (a refusal) is
unscored with code ``no_claims`` rather than given a 0 or a 5.

>>> reply = GroundednessReply(supported_claims=["a"], unsupported_claims=[], makes_claims=True, score=5)
>>> SPEC.interpret(reply).value
5.0
>>> SPEC.interpret(GroundednessReply(supported_claims=[], unsupported_claims=[], makes_claims=False,
...                                   score=0)).unscored[0]
'no_claims'
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ragmeter.judges.engine import Interpretation, JudgeSpec
from ragmeter.judges.items import JudgeItem, render_contexts

NAME = "groundedness"


class GroundednessReply(BaseModel):
    """The judge's JSON reply."""

    supported_claims: list[str]
    unsupported_claims: list[str]
    makes_claims: bool = True
    score: int = Field(ge=0, le=5)


JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "supported_claims": {"type": "array", "items": {"type": "string"}},
        "unsupported_claims": {"type": "array", "items": {"type": "string"}},
        "makes_claims": {"type": "boolean"},
        "score": {"type": "integer", "minimum": 0, "maximum": 5},
    },
    "required": ["supported_claims", "unsupported_claims", "makes_claims", "score"],
    "additionalProperties": False,
}


def _interpret(reply: GroundednessReply) -> Interpretation:
    details = {"supported_claims": reply.supported_claims, "unsupported_claims": reply.unsupported_claims}
    if not reply.makes_claims:
        return Interpretation(None, details, ("no_claims", "the answer makes no factual claim to check"))
    return Interpretation(float(reply.score), details)


SPEC = JudgeSpec(NAME, NAME, GroundednessReply, JSON_SCHEMA, _interpret)


def variables_for(item: JudgeItem) -> dict[str, str] | tuple[str, str]:
    """The prompt variables, or an unscored ``(code, reason)`` when the item cannot be judged.

    >>> variables_for(JudgeItem(id="q", question="?", answer="x", contexts=[]))
    ('no_context', 'no context chunks were given')
    """
    if not item.answer.strip():
        return ("empty_answer", "the answer is empty")
    if not any(c.strip() for c in item.contexts):
        return ("no_context", "no context chunks were given")
    return {"answer": item.answer, "contexts": render_contexts(item.contexts)}
