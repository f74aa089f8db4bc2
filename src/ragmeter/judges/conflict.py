"""Conflict acknowledgement: does the answer say that its sources disagree? 1 = it does, 0 = it does not.

``recency_rule_pass`` scores the ``acknowledge_both`` rule with it: the references must cite a
newer and an older support (as for ``cite_both``) **and** the answer must acknowledge the
conflict between them — say that the notes differ, or give both versions as such. The judge sees
the question, the answer and the retrieved context (where the two versions are).

>>> SPEC.interpret(ConflictReply(reasoning="mentions both policies", acknowledges_conflict=True)).value
1.0
>>> variables_for(JudgeItem(id="q", question="?", answer=" "))
('empty_answer', 'the answer is empty')
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ragmeter.judges.engine import Interpretation, JudgeSpec
from ragmeter.judges.items import JudgeItem, render_contexts

NAME = "conflict"
METRIC = "acknowledges_conflict"


class ConflictReply(BaseModel):
    """The judge's JSON reply."""

    reasoning: str
    acknowledges_conflict: bool


JSON_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "acknowledges_conflict": {"type": "boolean"}},
    "required": ["reasoning", "acknowledges_conflict"],
    "additionalProperties": False,
}


def _interpret(reply: ConflictReply) -> Interpretation:
    return Interpretation(1.0 if reply.acknowledges_conflict else 0.0, {"reasoning": reply.reasoning})


SPEC = JudgeSpec(NAME, METRIC, ConflictReply, JSON_SCHEMA, _interpret)


def variables_for(item: JudgeItem) -> dict[str, str] | tuple[str, str]:
    """The prompt variables, or an unscored ``(code, reason)``."""
    if not item.answer.strip():
        return ("empty_answer", "the answer is empty")
    contexts = render_contexts(item.contexts) if any(c.strip() for c in item.contexts) else "(none)"
    return {"question": item.question, "answer": item.answer, "contexts": contexts}
