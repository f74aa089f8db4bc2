"""Importer for OpenAI Agents SDK trace exports (``trace`` and ``trace.span`` objects).

Input: JSON Lines of the objects the SDK's exporters write (``{"object": "trace", "id",
"group_id", …}`` and ``{"object": "trace.span", "trace_id", "parent_id", "started_at",
"span_data": {…}}``), or batches ``{"data": [...]}`` of them.

* iteration: each ``turn`` custom span (``span_data.data.sdk_span_type == "turn"``); in
  exports without turn spans, each ``response`` / ``generation`` span;
* search: a ``function`` span whose name is a search tool; its ``output`` is ``str(output)``
  (JSON or a Python repr) and is parsed; no output means "results not captured", except on
  a span that records an error: the call failed and the agent received no results (the SDK
  then records the error message it gave the model as the output);
* conversation: the trace's ``group_id``, else its id; each trace is one turn;
* hosted tools (``WebSearchTool``) leave no function spans: a trace whose agent lists a
  hosted search tool but has no search spans is reported as "results not captured".

>>> _is_turn_span({"type": "custom", "name": "turn", "data": {"sdk_span_type": "turn"}})
True
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ragmeter.agentic.importers.assemble import (
    SearchEvent,
    SearchToolMatcher,
    StepEvent,
    TurnEvents,
    build_trace,
)
from ragmeter.agentic.importers.tool_output import ParsedOutput, parse_tool_output, query_from_arguments
from ragmeter.agentic.validate import KnownLength
from ragmeter.errors import InputError
from ragmeter.io.records import Record

_HOSTED_SEARCH_TOOLS = frozenset({"web_search", "web_search_preview", "websearchtool", "file_search"})


def _objects(records: Sequence[Record]) -> Iterator[tuple[dict[str, Any], str]]:
    for record in records:
        value = record.value
        data = value.get("data") if isinstance(value, Mapping) else None
        items: list[Any] = data if isinstance(data, list) else [value]
        for item in items:
            if not isinstance(item, Mapping) or item.get("object") not in ("trace", "trace.span"):
                raise InputError(
                    "expected an OpenAI Agents SDK 'trace' or 'trace.span' object", where=record.where
                )
            yield dict(item), record.where


def _is_turn_span(data: Mapping[str, Any]) -> bool:
    inner = data.get("data")
    return data.get("type") == "custom" and (
        (isinstance(inner, Mapping) and inner.get("sdk_span_type") == "turn") or data.get("name") == "turn"
    )


def _user_from_generation(data: Mapping[str, Any]) -> str | None:
    messages = data.get("input")
    if not isinstance(messages, list):
        return None
    for message in messages:
        if (
            isinstance(message, Mapping)
            and message.get("role") == "user"
            and isinstance(message.get("content"), str)
        ):
            return str(message["content"])
    return None


def import_openai_agents(records: Sequence[Record], is_search: SearchToolMatcher) -> KnownLength:
    """Convert OpenAI Agents SDK trace/span objects into traces (one per conversation)."""
    traces: dict[str, dict[str, Any]] = {}
    spans: dict[str, list[dict[str, Any]]] = {}
    where_of: dict[str, str] = {}
    for obj, where in _objects(records):
        if obj["object"] == "trace":
            traces[str(obj.get("id"))] = obj
            where_of.setdefault(str(obj.get("id")), where)
        else:
            spans.setdefault(str(obj.get("trace_id")), []).append(obj)
            where_of.setdefault(str(obj.get("trace_id")), where)

    turns: dict[str, TurnEvents] = {}
    for trace_id in where_of:
        trace_spans = spans.get(trace_id, [])
        datas = [(s, s.get("span_data") or {}) for s in trace_spans]
        has_turns = any(_is_turn_span(d) for _, d in datas)
        turn = TurnEvents(start=min((str(s.get("started_at") or "") for s in trace_spans), default=""))
        hosted = False
        for span, data in datas:
            start = str(span.get("started_at") or "")
            kind = data.get("type")
            if (has_turns and _is_turn_span(data)) or (not has_turns and kind in ("response", "generation")):
                turn.events.append(StepEvent(start))
            if kind == "generation" and turn.user is None:
                turn.user = _user_from_generation(data)
            if kind == "agent":
                tools = [str(t).lower() for t in data.get("tools") or []]
                hosted = hosted or any(t in _HOSTED_SEARCH_TOOLS for t in tools)
            if kind == "function" and is_search(str(data.get("name") or "")):
                parsed = parse_tool_output(data.get("output"))
                if span.get("error") and parsed.results is None:
                    parsed = ParsedOutput([])  # the call failed (its output is the error text): no results
                turn.events.append(
                    SearchEvent(
                        start,
                        query_from_arguments(data.get("input")),
                        str(data.get("name")),
                        parsed.results,
                        str(span.get("id") or "") or None,
                        parsed.not_captured,
                    )
                )
        if hosted and not any(isinstance(e, SearchEvent) for e in turn.events):
            turn.note = (
                "hosted search tool calls are not in the exported spans (capture them via OpenTelemetry)"
            )
        turns[trace_id] = turn

    conversations: dict[str, list[str]] = {}
    for trace_id in turns:
        group = traces.get(trace_id, {}).get("group_id")
        conversations.setdefault(str(group) if group else trace_id, []).append(trace_id)
    built = (
        build_trace(
            conversation,
            [turns[t] for t in trace_ids],
            where=where_of[trace_ids[0]],
            metadata={
                "source": "openai-agents",
                "openai_trace_ids": trace_ids,
                "workflow_name": traces.get(trace_ids[0], {}).get("workflow_name"),
            },
        )
        for conversation, trace_ids in conversations.items()
    )
    return KnownLength(built, len(conversations))
