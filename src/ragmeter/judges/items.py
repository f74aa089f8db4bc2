"""Plain inputs of the judges: answered questions and (task, search result) pairs.

One :class:`JudgeItem` per answered question, one :class:`RelevancePair` per
(task, search result).

>>> item = JudgeItem(id="q1", question="Capital of France?", answer="Paris [1].",
...                  contexts=["Paris is the capital of France."], expected_answer="Paris")
>>> item.expected_answers()
['Paris']
>>> render_contexts(item.contexts)
'[1] Paris is the capital of France.'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field

from ragmeter.io.records import validate

M = TypeVar("M", bound=BaseModel)


class JudgeItem(BaseModel):
    """One answered question: what groundedness, correctness, abstention and factual match need."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    question: str
    answer: str
    contexts: list[str] = Field(
        default_factory=list, description="Texts of the retrieved chunks, in rank order."
    )
    expected_answer: str | list[str] | None = None
    abstained: bool | None = Field(
        default=None, description="The system's own flag; the judge is the fallback."
    )
    judges: tuple[str, ...] | None = Field(
        default=None,
        description="Only these judges for this item (default: every judge of the run).",
    )

    def expected_answers(self) -> list[str]:
        """The acceptable answers as a list (empty when there is none)."""
        if self.expected_answer is None:
            return []
        values = [self.expected_answer] if isinstance(self.expected_answer, str) else self.expected_answer
        return [v for v in values if v.strip()]


class RelevancePair(BaseModel):
    """One search result to label 0-4 against the user's task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="The query / conversation id.")
    result_id: str = Field(min_length=1)
    task: str = Field(min_length=1, description="The user's task (the last turn's request).")
    text: str = Field(description="What the search returned: snippet or page text.")
    title: str | None = None
    url: str | None = None

    def rendered(self) -> str:
        """Title, URL and text as the labeller sees them."""
        lines = []
        if self.title:
            lines.append(f"Title: {self.title}")
        if self.url:
            lines.append(f"URL: {self.url}")
        lines.append(f"Content: {self.text}")
        return "\n".join(lines)


def render_contexts(contexts: Sequence[str]) -> str:
    """Number the chunks ``[1] …`` so answers can cite them."""
    return "\n\n".join(f"[{i}] {text.strip()}" for i, text in enumerate(contexts, start=1))


def coerce(model: type[M], values: Sequence[M | Mapping[str, Any]], *, label: str) -> list[M]:
    """Validate mappings as ``model`` (errors name ``label[index]``); reject duplicate keys."""
    out: list[M] = []
    for index, value in enumerate(values):
        out.append(value if isinstance(value, model) else validate(model, value, where=f"{label}[{index}]"))
    return out


def outcome_key(judge: str, item_id: str, result_id: str | None = None, *, tag: str | None = None) -> str:
    """A unique, readable key: ``[tag/]judge/item[/result]`` with each part percent-quoted.

    >>> outcome_key("relevance", "q 1", "r/2")
    'relevance/q%201/r%2F2'
    """
    parts = [tag] if tag else []
    parts += [judge, item_id] + ([result_id] if result_id is not None else [])
    return "/".join(quote(p, safe="") for p in parts)
