"""Generated questions (drafts) and how a generator's JSON reply becomes them.

Each prompt has a reply model (pydantic; unknown fields ignored) and a strict JSON schema sent
as ``response_format``. A reply becomes at most one draft per question it holds; a draft
remembers the chunks it was made from (its claimed gold supports), a snippet of each (an exact
substring of the chunk, or none), its reference answer(s) and its category.

A reply that is unusable for its task (an empty question, no answer, no conflict found) gives
no draft and a short reason (``empty_question``, ``no_conflict`` ...), counted in the report.

>>> from ragmeter.synth.plan import Task
>>> task = Task("factual", 3, "factual", ("a.md#A",))
>>> drafts, why = drafts_from_reply(task, {"question": "Q?", "answer": "42", "snippet": "is 42"},
...                                 texts={"a.md#A": "The answer is 42."}, parents={})
>>> [(d.id, d.answers, dict(d.snippets)) for d in drafts], why
([('fact-0003', ('42',), {'a.md#A': 'is 42'})], None)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ragmeter.synth.plan import Task, question_id

DIFFICULTIES = ("easy", "medium", "hard")
DEFAULT_DIFFICULTY = {
    "factual": "easy",
    "multi_hop": "hard",
    "recency": "medium",
    "unanswerable": "medium",
    "paraphrase": "medium",
    "adversarial": "hard",
}


@dataclass(frozen=True)
class Draft:
    """One generated question before filtering and verification."""

    id: str
    category: str
    question: str
    answers: tuple[str, ...]
    sources: tuple[str, ...]
    snippets: Mapping[str, str]
    difficulty: str
    task: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def answerable(self) -> bool:
        """Whether the question has an answer in the corpus (all but ``unanswerable``)."""
        return self.category != "unanswerable"

    @property
    def family(self) -> str:
        """The id of the question this one is a variant of (its own id otherwise)."""
        return str(self.extra.get("variant_of", self.id))


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FactualReply(_Reply):
    """Reply of ``synth_factual``."""

    question: str
    answer: str
    snippet: str = ""
    difficulty: str = ""


class MultiHopReply(_Reply):
    """Reply of ``synth_multi_hop``."""

    question: str
    answer: str
    snippet_a: str = ""
    snippet_b: str = ""
    difficulty: str = ""


class RecencyReply(_Reply):
    """Reply of ``synth_recency``."""

    conflict: bool
    question: str = ""
    newer_answer: str = ""
    older_answer: str = ""
    snippet_newer: str = ""
    snippet_older: str = ""


class UnanswerableReply(_Reply):
    """Reply of ``synth_unanswerable``."""

    question: str
    entity: str = ""
    missing: str = ""
    near_miss: str = ""


class VariantsReply(_Reply):
    """Reply of ``synth_variants``."""

    paraphrase: str = ""
    adversarial: str = ""


REPLY_MODELS: dict[str, type[_Reply]] = {
    "factual": FactualReply,
    "multi_hop": MultiHopReply,
    "recency": RecencyReply,
    "unanswerable": UnanswerableReply,
    "variants": VariantsReply,
}
"""The reply model of each task's prompt (keyed like :data:`ragmeter.synth.config.PROMPT_IDS`)."""


def reply_schema(model: type[_Reply]) -> dict[str, Any]:
    """A strict JSON schema for ``response_format``: every field required, nothing else allowed.

    >>> reply_schema(VariantsReply)["required"]
    ['paraphrase', 'adversarial']
    """
    properties = {
        name: {"type": "boolean" if info.annotation is bool else "string"}
        for name, info in model.model_fields.items()
    }
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def find_snippet(text: str, snippet: str, answer: str = "") -> str | None:
    """``snippet`` as it occurs in ``text`` (whitespace-insensitive), else the answer if it occurs, else ``None``.

    >>> find_snippet("Page the  secondary after 15 minutes.", "secondary after 15")
    'secondary after 15'
    >>> find_snippet("Page after 15 minutes.", "page after fifteen", answer="15 minutes")
    '15 minutes'
    """
    for candidate in (snippet, answer):
        words = candidate.split()
        if not words:
            continue
        match = re.search(r"\s+".join(re.escape(w) for w in words), text)
        if match is not None:
            return match.group(0)
    return None


def _clean(text: str) -> str:
    return " ".join(text.split())


def _difficulty(value: str, category: str) -> str:
    value = value.strip().lower()
    return value if value in DIFFICULTIES else DEFAULT_DIFFICULTY[category]


def _snippets(texts: Mapping[str, str], pairs: list[tuple[str, str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for chunk_id, snippet, answer in pairs:
        found = find_snippet(texts.get(chunk_id, ""), snippet, answer)
        if found is not None:
            out[chunk_id] = found
    return out


def drafts_from_reply(
    task: Task, reply: Mapping[str, Any], *, texts: Mapping[str, str], parents: Mapping[str, Draft]
) -> tuple[list[Draft], str | None]:
    """The drafts a parsed reply makes (``texts``: chunk id -> text; ``parents``: for variants)."""
    try:
        parsed = REPLY_MODELS[task.prompt].model_validate(dict(reply))
    except ValidationError:
        return [], "reply_does_not_fit"
    if isinstance(parsed, VariantsReply):
        return _variants(task, parsed, parents)
    if isinstance(parsed, RecencyReply):
        if not parsed.conflict:
            return [], "no_conflict"
        if not _clean(parsed.newer_answer) or not _clean(parsed.older_answer):
            return [], "empty_answer"
    question = _clean(getattr(parsed, "question", ""))
    if not question:
        return [], "empty_question"
    qid = question_id(task.category, task.index)
    base: dict[str, Any] = {"id": qid, "category": task.category, "question": question, "task": task.id}
    if isinstance(parsed, FactualReply | MultiHopReply):
        answer = _clean(parsed.answer)
        if not answer:
            return [], "empty_answer"
        if isinstance(parsed, FactualReply):
            pairs = [(task.chunks[0], parsed.snippet, answer)]
        else:
            pairs = [(task.chunks[0], parsed.snippet_a, answer), (task.chunks[1], parsed.snippet_b, answer)]
        extra = dict(task.extra)
        draft = Draft(
            **base,
            answers=(answer,),
            sources=task.chunks,
            snippets=_snippets(texts, pairs),
            difficulty=_difficulty(parsed.difficulty, task.category),
            extra=extra,
        )
        return [draft], None
    if isinstance(parsed, RecencyReply):
        newer, older = str(task.extra["newer"]), str(task.extra["older"])
        pairs = [
            (newer, parsed.snippet_newer, _clean(parsed.newer_answer)),
            (older, parsed.snippet_older, _clean(parsed.older_answer)),
        ]
        extra = {**task.extra, "older_answer": _clean(parsed.older_answer), "rule": "cite_newer"}
        draft = Draft(
            **base,
            answers=(_clean(parsed.newer_answer),),
            sources=(newer, older),
            snippets=_snippets(texts, pairs),
            difficulty=DEFAULT_DIFFICULTY["recency"],
            extra=extra,
        )
        return [draft], None
    assert isinstance(parsed, UnanswerableReply)
    extra = {
        "entity": _clean(parsed.entity),
        "missing": _clean(parsed.missing),
        "near_miss": _clean(parsed.near_miss),
    }
    draft = Draft(
        **base,
        answers=(),
        sources=task.chunks,
        snippets={},
        difficulty=DEFAULT_DIFFICULTY["unanswerable"],
        extra=extra,
    )
    return [draft], None


def _variants(
    task: Task, parsed: VariantsReply, parents: Mapping[str, Draft]
) -> tuple[list[Draft], str | None]:
    parent = parents.get(str(task.extra["parent"]))
    if parent is None:
        return [], "no_parent"
    drafts: list[Draft] = []
    for kind in task.extra.get("make", []):
        question = _clean(getattr(parsed, kind))
        if not question:
            continue
        drafts.append(
            Draft(
                id=question_id(kind, task.index),
                category=kind,
                question=question,
                answers=parent.answers,
                sources=parent.sources,
                snippets=parent.snippets,
                difficulty=DEFAULT_DIFFICULTY[kind],
                task=task.id,
                extra={"variant_of": parent.id, **{k: v for k, v in parent.extra.items() if k == "link"}},
            )
        )
    return drafts, None if drafts else "empty_question"
