"""Importer for OpenTelemetry traces in OTLP/JSON (GenAI conventions and the OpenInference dialect).

Input: the OTLP/JSON export format (``{"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]}``),
one request per line as the collector's file exporter writes it, or one document.

* step (iteration start): ``gen_ai.operation.name`` ``chat`` / ``text_completion`` /
  ``generate_content``, or ``openinference.span.kind`` ``LLM``;
* search: ``gen_ai.operation.name`` ``retrieval`` (documents in ``gen_ai.retrieval.documents``),
  ``execute_tool`` with a search tool name (results in ``gen_ai.tool.call.result``),
  OpenInference ``RETRIEVER`` (``retrieval.documents.{i}.document.*``) or ``TOOL`` with a
  search tool name (``output.value``); content attributes are opt-in, so a missing one means
  "results not captured";
* conversation: ``gen_ai.conversation.id`` or ``session.id``, else the OTLP trace id; each OTLP
  trace is one turn.

>>> _any_value({"arrayValue": {"values": [{"intValue": "3"}, {"stringValue": "x"}]}})
[3, 'x']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ragmeter.agentic.importers.assemble import (
    SearchEvent,
    SearchToolMatcher,
    StepEvent,
    TurnEvents,
    build_trace,
)
from ragmeter.agentic.importers.tool_output import map_result, parse_tool_output, query_from_arguments
from ragmeter.agentic.validate import KnownLength
from ragmeter.errors import InputError
from ragmeter.io.records import Record

_STEP_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_RETRIEVAL_OPERATIONS = frozenset({"retrieval", "retrieve", "retrieve_documents"})
_OI_DOCUMENT = re.compile(r"^retrieval\.documents\.(\d+)\.document\.(\w+)$")


def _any_value(value: Any) -> Any:
    """Decode an OTLP/JSON ``AnyValue``."""
    if not isinstance(value, Mapping):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {
            kv.get("key"): _any_value(kv.get("value"))
            for kv in (value["kvlistValue"] or {}).get("values", [])
        }
    return None


def _attributes(span: Mapping[str, Any]) -> dict[str, Any]:
    attrs = span.get("attributes") or []
    if isinstance(attrs, Mapping):  # some exporters write a plain object
        return dict(attrs)
    return {str(a.get("key")): _any_value(a.get("value")) for a in attrs if isinstance(a, Mapping)}


def _spans(records: Sequence[Record]) -> Iterator[tuple[dict[str, Any], str]]:
    for record in records:
        value = record.value
        if (
            isinstance(value, Mapping)
            and "resourceSpans" not in value
            and ("resourceLogs" in value or "resourceMetrics" in value)
        ):
            continue  # the collector's file exporter may interleave logs and metrics
        if not isinstance(value, Mapping) or "resourceSpans" not in value:
            raise InputError("expected an OTLP/JSON object with 'resourceSpans'", where=record.where)
        for resource in value.get("resourceSpans") or []:
            for scope in (
                (resource or {}).get("scopeSpans")
                or (resource or {}).get("instrumentationLibrarySpans")
                or []
            ):
                for span in (scope or {}).get("spans") or []:
                    if isinstance(span, Mapping):
                        yield dict(span), record.where


def _start(span: Mapping[str, Any]) -> int:
    try:
        return int(span.get("startTimeUnixNano") or 0)
    except (TypeError, ValueError):
        return 0


def _openinference_documents(attrs: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    structured = attrs.get("retrieval.documents")
    if isinstance(structured, list):
        return [
            map_result({k.removeprefix("document."): v for k, v in d.items()})
            for d in structured
            if isinstance(d, Mapping)
        ]
    docs: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        m = _OI_DOCUMENT.match(str(key))
        if m:
            docs.setdefault(int(m.group(1)), {})[m.group(2)] = value
    if not docs:
        return None
    return [map_result(docs[i]) for i in sorted(docs)]


def _user_text(messages: Any) -> str | None:
    """The last user message's text from GenAI ``input.messages`` (JSON or structured)."""
    if isinstance(messages, str):
        try:
            messages = json.loads(messages)
        except (ValueError, RecursionError):  # not JSON (or JSON too deep or long to read): the text itself
            return str(messages)
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            parts = message.get("parts") or []
            texts = [
                str(p["content"])
                for p in parts
                if isinstance(p, Mapping) and isinstance(p.get("content"), str)
            ]
            if texts:
                return "\n".join(texts)
            if isinstance(message.get("content"), str):
                return str(message["content"])
    return None


def _search_event(
    span: Mapping[str, Any], attrs: Mapping[str, Any], is_search: SearchToolMatcher
) -> SearchEvent | None:
    operation = attrs.get("gen_ai.operation.name")
    kind = str(attrs.get("openinference.span.kind") or "").upper()
    span_id = str(span.get("spanId") or "") or None
    start = _start(span)
    if operation in _RETRIEVAL_OPERATIONS or kind == "RETRIEVER":
        query = attrs.get("gen_ai.retrieval.query.text") or query_from_arguments(attrs.get("input.value"))
        raw = attrs.get("gen_ai.retrieval.documents")
        if raw is not None:
            parsed = parse_tool_output(raw)
            return SearchEvent(start, query, "retrieval", parsed.results, span_id, parsed.not_captured)
        documents = _openinference_documents(attrs)
        if documents is None:
            return SearchEvent(
                start, query, "retrieval", None, span_id, "retrieved documents not recorded on the span"
            )
        return SearchEvent(start, query, "retrieval", documents, span_id)
    if operation == "execute_tool" or kind == "TOOL":
        name = (
            attrs.get("gen_ai.tool.name")
            or attrs.get("tool.name")
            or str(span.get("name") or "").removeprefix("execute_tool ")
        )
        if not is_search(str(name)):
            return None
        arguments = attrs.get(
            "gen_ai.tool.call.arguments", attrs.get("tool.parameters", attrs.get("input.value"))
        )
        output = attrs.get("gen_ai.tool.call.result", attrs.get("output.value"))
        parsed = parse_tool_output(output)
        return SearchEvent(
            start, query_from_arguments(arguments), str(name), parsed.results, span_id, parsed.not_captured
        )
    return None


def import_otel(records: Sequence[Record], is_search: SearchToolMatcher) -> KnownLength:
    """Convert OTLP/JSON records into traces (one per conversation), each built and validated as it is taken."""
    turns: dict[str, TurnEvents] = {}
    conversation_of: dict[str, str] = {}
    where_of: dict[str, str] = {}
    for span, where in _spans(records):
        trace_id = str(span.get("traceId") or "")
        attrs = _attributes(span)
        turn = turns.setdefault(trace_id, TurnEvents(start=_start(span)))
        turn.start = min(turn.start, _start(span))
        where_of.setdefault(trace_id, where)
        conversation = attrs.get("gen_ai.conversation.id") or attrs.get("session.id")
        if conversation is not None:
            conversation_of.setdefault(trace_id, str(conversation))
        if not span.get("parentSpanId"):
            user = _user_text(attrs.get("gen_ai.input.messages")) or attrs.get("input.value")
            if isinstance(user, str):
                turn.user = query_from_arguments(user) or user
        operation = attrs.get("gen_ai.operation.name")
        kind = str(attrs.get("openinference.span.kind") or "").upper()
        if operation in _STEP_OPERATIONS or kind == "LLM":
            turn.events.append(StepEvent(_start(span)))
            continue
        event = _search_event(span, attrs, is_search)
        if event is not None:
            turn.events.append(event)
    conversations: dict[str, list[str]] = {}
    for trace_id in turns:
        conversations.setdefault(conversation_of.get(trace_id, trace_id), []).append(trace_id)
    built = (
        build_trace(
            conversation,
            [turns[t] for t in trace_ids],
            where=where_of[trace_ids[0]],
            metadata={"source": "otel", "otel_trace_ids": trace_ids},
        )
        for conversation, trace_ids in conversations.items()
    )
    return KnownLength(built, len(conversations))
