"""The ``llamaindex`` system: a retriever (``retrieve``) or a query engine (``query``).

A retriever's ``list[NodeWithScore]`` is the ranking; a query engine's
``Response`` gives the answer (``response``) and the ranking (``source_nodes``; a
streaming response is drained first). Node text, ``node_id``, score and metadata
go through the metadata mapping (default: ``file_path`` / ``source`` / ``file_name``
for the path; ``header_path`` from ``MarkdownNodeParser`` plus the node's own
heading for the heading path).

Timings and tokens come from LlamaIndex's instrumentation: while the adapter runs,
one event handler sits on the root dispatcher and hands each event to the call it
belongs to (a context variable), so concurrent questions never mix. Retrieval is
``RetrievalStartEvent`` → ``RetrievalEndEvent``; generation is each outermost
``LLMChat*`` / ``LLMCompletion*`` start → end, with the usage its response carries
(``raw``, ``additional_kwargs``). The handler is removed when the run ends.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragmeter.harness.framework_suite import LlamaIndexSystem
from ragmeter.harness.frameworks import (
    CURRENT_TRACE,
    GENERATION,
    RETRIEVAL,
    CallTrace,
    FrameworkAdapter,
    SharedHook,
    token_usage,
)
from ragmeter.schema.samples import Sample

_GENERATION_EVENTS = {
    "LLMChatStartEvent": True,
    "LLMCompletionStartEvent": True,
    "LLMChatEndEvent": False,
    "LLMCompletionEndEvent": False,
}


def _on_event(event: Any) -> None:
    trace = CURRENT_TRACE.get()
    if trace is None:
        return  # not one of our calls
    name = type(event).__name__
    key = getattr(event, "span_id", None) or id(event)
    if name == "RetrievalStartEvent":
        trace.begin(("retrieval", key), RETRIEVAL)
    elif name == "RetrievalEndEvent":
        trace.end(("retrieval", key))
    elif name in _GENERATION_EVENTS:
        if _GENERATION_EVENTS[name]:  # a chat() that calls complete() is one model call
            trace.begin(("generation", key), GENERATION, outermost=True)
            return
        response = getattr(event, "response", None)
        raw = getattr(response, "raw", None)
        model = raw.get("model") if isinstance(raw, dict) else getattr(raw, "model", None)
        trace.end(
            ("generation", key), usage=token_usage(response), model=model if isinstance(model, str) else None
        )


def _install() -> Any:
    from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
    from llama_index.core.instrumentation.event_handlers import BaseEventHandler

    class RagmeterEventHandler(BaseEventHandler):
        @classmethod
        def class_name(cls) -> str:
            return "RagmeterEventHandler"

        def handle(self, event: Any, **kwargs: Any) -> None:
            _on_event(event)

    handler = RagmeterEventHandler()
    get_dispatcher().add_event_handler(handler)
    return handler


def _uninstall(handler: Any) -> None:
    from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]

    handlers = get_dispatcher().event_handlers
    if handler in handlers:
        handlers.remove(handler)


_HOOK = SharedHook(_install, _uninstall)


class LlamaIndexAdapter(FrameworkAdapter):
    """Runs a LlamaIndex retriever or query engine."""

    framework = "llamaindex"

    def __init__(self, obj: Any, system: LlamaIndexSystem, *, base_dir: Path | None = None) -> None:
        self._engine = callable(getattr(obj, "query", None))
        if not self._engine and not callable(getattr(obj, "retrieve", None)):
            raise TypeError(f"a {type(obj).__name__} has neither query() nor retrieve()")
        super().__init__(obj, mapping=system.metadata_mapping(), base_dir=base_dir)

    async def start(self) -> None:
        """Put the event handler on the root dispatcher."""
        _HOOK.acquire()

    async def aclose(self) -> None:
        """Take the event handler off again."""
        _HOOK.release()

    def _nodes(self, nodes: Any) -> list[dict[str, Any]]:
        items = []
        for found in nodes or []:
            node = getattr(found, "node", found)
            text = node.get_content() if callable(getattr(node, "get_content", None)) else None
            items.append(
                self.mapper.item(
                    text,
                    getattr(node, "metadata", None),
                    native_id=getattr(node, "node_id", None),
                    score=getattr(found, "score", None),
                )
            )
        return items

    def ask(self, sample: Sample, question: str, k: int, trace: CallTrace) -> dict[str, Any]:
        """``query`` (answer and source nodes) or ``retrieve`` (nodes)."""
        if not self._engine:
            return {"retrieved": self._nodes(self.obj.retrieve(question))}
        response = self.obj.query(question)
        if callable(getattr(response, "get_response", None)) and hasattr(response, "response_gen"):
            response = response.get_response()  # a streaming response: drain it first
        answer = getattr(response, "response", None)
        output: dict[str, Any] = {"retrieved": self._nodes(getattr(response, "source_nodes", None))}
        if answer is not None:
            output["answer"] = str(answer)
        return output
