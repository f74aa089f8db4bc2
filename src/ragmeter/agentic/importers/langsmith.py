"""Importer for LangSmith / LangChain run trees.

Input: runs as JSON Lines (e.g. ``Client.list_runs`` output dumped one per line) or a
JSON list, flat (``parent_run_id``) or nested (``child_runs``), in any order.

* iteration: each ``llm`` run (a model call), ordered by ``dotted_order`` (else
  ``start_time``); in LangGraph the tool step that follows a model step joins it;
* search: a ``retriever`` run (documents with ``page_content`` and ``metadata`` in
  ``outputs.documents`` as LangChain writes them, or in ``outputs.output`` as
  ``@traceable(run_type="retriever")`` wraps a returned list) or a ``tool`` run whose
  name is a search tool (``outputs.output``); no outputs means "results not captured";
* conversation: ``extra.metadata`` ``thread_id`` / ``conversation_id`` / ``session_id``,
  else the root run; each root run (trace) is one turn.

>>> _order({"dotted_order": "20250101T000000000000Zabc.20250101T000001000000Zdef"})
'20250101T000000000000Zabc.20250101T000001000000Zdef'
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
from ragmeter.agentic.importers.tool_output import parse_tool_output, query_from_arguments
from ragmeter.agentic.validate import KnownLength
from ragmeter.errors import InputError
from ragmeter.io.records import Record

_THREAD_KEYS = ("thread_id", "conversation_id", "session_id")


def _runs(records: Sequence[Record]) -> Iterator[tuple[dict[str, Any], str]]:
    def walk(run: Any, where: str) -> Iterator[tuple[dict[str, Any], str]]:
        if not isinstance(run, Mapping) or "id" not in run:
            raise InputError("expected a LangSmith run object with 'id' and 'run_type'", where=where)
        yield dict(run), where
        for child in run.get("child_runs") or []:
            yield from walk(child, where)

    for record in records:
        items = record.value if isinstance(record.value, list) else [record.value]
        for item in items:
            yield from walk(item, record.where)


def _order(run: Mapping[str, Any]) -> str:
    return str(run.get("dotted_order") or run.get("start_time") or "")


def _metadata(run: Mapping[str, Any]) -> Mapping[str, Any]:
    extra = run.get("extra")
    metadata = extra.get("metadata") if isinstance(extra, Mapping) else None
    return metadata if isinstance(metadata, Mapping) else {}


def _user(inputs: Any) -> str | None:
    if not isinstance(inputs, Mapping):
        return None
    messages = inputs.get("messages")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, Mapping):
                role = message.get("role") or message.get("type")
                if role in ("user", "human") and isinstance(message.get("content"), str):
                    return str(message["content"])
    return query_from_arguments(inputs)


def _search_event(run: Mapping[str, Any], is_search: SearchToolMatcher) -> SearchEvent | None:
    run_type = run.get("run_type")
    name = str(run.get("name") or "")
    if run_type == "retriever":
        outputs = run.get("outputs")
        raw = outputs
        if isinstance(outputs, Mapping):  # LangChain writes "documents"; @traceable wraps a list as "output"
            raw = next((outputs[key] for key in ("documents", "output") if key in outputs), None)
    elif run_type == "tool" and is_search(name):
        outputs = run.get("outputs")
        raw = outputs.get("output", outputs) if isinstance(outputs, Mapping) else outputs
    else:
        return None
    parsed = parse_tool_output(raw)
    return SearchEvent(
        _order(run),
        query_from_arguments(run.get("inputs")),
        name or str(run_type),
        parsed.results,
        str(run.get("id")),
        parsed.not_captured,
    )


def import_langsmith(records: Sequence[Record], is_search: SearchToolMatcher) -> KnownLength:
    """Convert LangSmith runs into traces (one per conversation thread)."""
    runs: dict[str, tuple[dict[str, Any], str]] = {}
    for run, where in _runs(records):
        runs.setdefault(str(run["id"]), (run, where))
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for run, _ in runs.values():
        by_trace.setdefault(str(run.get("trace_id") or _root_id(run, runs)), []).append(run)

    turns: dict[str, TurnEvents] = {}
    thread_of: dict[str, str] = {}
    where_of: dict[str, str] = {}
    for trace_id, trace_runs in by_trace.items():
        trace_runs.sort(key=_order)
        root = next((r for r in trace_runs if not r.get("parent_run_id")), trace_runs[0])
        where_of[trace_id] = runs[str(root["id"])][1]
        turn = TurnEvents(start=str(root.get("start_time") or _order(root)), user=_user(root.get("inputs")))
        for run in trace_runs:
            for key in _THREAD_KEYS:
                if _metadata(run).get(key):
                    thread_of.setdefault(trace_id, str(_metadata(run)[key]))
            if run.get("run_type") == "llm":
                turn.events.append(StepEvent(_order(run)))
                continue
            event = _search_event(run, is_search)
            if event is not None:
                turn.events.append(event)
        turns[trace_id] = turn

    conversations: dict[str, list[str]] = {}
    for trace_id in turns:
        conversations.setdefault(thread_of.get(trace_id, trace_id), []).append(trace_id)
    built = (
        build_trace(
            conversation,
            [turns[t] for t in trace_ids],
            where=where_of[trace_ids[0]],
            metadata={"source": "langsmith", "langsmith_trace_ids": trace_ids},
        )
        for conversation, trace_ids in conversations.items()
    )
    return KnownLength(built, len(conversations))


def _root_id(run: Mapping[str, Any], runs: Mapping[str, tuple[dict[str, Any], str]]) -> str:
    seen = set()
    current = run
    while current.get("parent_run_id") and str(current["parent_run_id"]) in runs and id(current) not in seen:
        seen.add(id(current))
        current = runs[str(current["parent_run_id"])][0]
    return str(current["id"])
