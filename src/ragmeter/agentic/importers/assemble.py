"""Building native traces from the events every importer extracts.

An importer reduces a span tree to a time-ordered list of events: *steps* (a
model call, or an agent-loop turn span) and *searches*. A step starts a new
iteration; each search joins the iteration of the latest step before it (searches
before any step form an iteration of their own). Turns of one conversation are
ordered by their start; only the last is scored later, but all are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from ragmeter.agentic.validate import LoadedTrace, validate_trace

DEFAULT_SEARCH_TOOLS: tuple[str, ...] = (
    "search",
    "*_search",
    "search_*",
    "*_search_*",
    "websearch",
    "retrieve",
    "retrieve_*",
    "*_retrieve",
    "*retriever*",
)
"""Tool names (glob patterns, case-insensitive) that count as search invocations."""


class SearchToolMatcher:
    """Decides which tool names are searches (``fnmatch`` patterns, case-insensitive).

    >>> m = SearchToolMatcher(None)
    >>> m("web_search"), m("Search"), m("research_report"), m("get_weather")
    (True, True, False, False)
    """

    def __init__(self, patterns: Sequence[str] | None) -> None:
        self.patterns = tuple(p.lower() for p in (patterns or DEFAULT_SEARCH_TOOLS))

    def __call__(self, name: str | None) -> bool:
        """True when ``name`` matches one of the patterns."""
        if not name:
            return False
        lowered = name.lower()
        return any(fnmatchcase(lowered, p) for p in self.patterns)


@dataclass(frozen=True)
class StepEvent:
    """A model call or agent-loop turn: the start of an iteration."""

    start: Any


@dataclass(frozen=True)
class SearchEvent:
    """A search invocation with its results, or the reason they were not captured."""

    start: Any
    query: str | None
    tool: str | None
    results: list[dict[str, Any]] | None
    span_id: str | None = None
    not_captured: str | None = None


@dataclass
class TurnEvents:
    """The events of one turn (one agent run), with its start and user message."""

    start: Any
    events: list[StepEvent | SearchEvent] = field(default_factory=list)
    user: str | None = None
    note: str | None = None


def _search(event: SearchEvent) -> dict[str, Any]:
    """A search as the trace format writes it (fields left at their default left out)."""
    search = {
        "query": event.query,
        "tool": event.tool,
        "results": None if event.results is None else list(event.results),
        "results_not_captured": event.not_captured if event.results is None else None,
        "span_id": event.span_id,
    }
    return {key: value for key, value in search.items() if value is not None}


def turn_value(events: Sequence[StepEvent | SearchEvent], *, user: str | None = None) -> dict[str, Any]:
    """Group time-ordered events into iterations (ties keep the given order): a turn as the trace format writes it.

    Not validated here: :func:`build_trace` validates the whole trace once, naming the field.

    >>> events = [StepEvent(1), SearchEvent(2, "q1", "search", [{"url": "https://a.org"}]),
    ...           SearchEvent(3, "q2", "search", None, not_captured="no tool output recorded"),
    ...           StepEvent(4), StepEvent(5), SearchEvent(6, "q3", "search", [])]
    >>> turn = turn_value(events, user="hi")
    >>> [len(it["searches"]) for it in turn["iterations"]]
    [2, 0, 1]
    >>> turn["iterations"][0]["searches"][1]
    {'query': 'q2', 'tool': 'search', 'results_not_captured': 'no tool output recorded'}
    """
    ordered = sorted(enumerate(events), key=lambda pair: (pair[1].start, pair[0]))
    groups: list[list[dict[str, Any]]] = []
    for _, event in ordered:
        if isinstance(event, StepEvent):
            groups.append([])
            continue
        if not groups:
            groups.append([])
        groups[-1].append(_search(event))
    turn: dict[str, Any] = {"iterations": [{"searches": group} for group in groups]}
    if user is not None:
        turn["user"] = user
    return turn


def build_trace(
    trace_id: str,
    turns: Sequence[TurnEvents],
    *,
    where: str,
    task: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> LoadedTrace:
    """A validated native trace from the turns of one conversation (ordered by start)."""
    ordered = sorted(turns, key=lambda t: t.start)
    built = []
    for turn_events in ordered:
        turn = turn_value(turn_events.events, user=turn_events.user)
        if turn_events.note is not None and not any(it["searches"] for it in turn["iterations"]):
            turn["iterations"].append(
                {"searches": [{"tool": "(not exported)", "results_not_captured": turn_events.note}]}
            )
        built.append(turn)
    value = {"trace_id": trace_id, "turns": built, "metadata": metadata or {}}
    if task is not None:
        value["task"] = task
    return LoadedTrace(validate_trace(value, where=where), where)
