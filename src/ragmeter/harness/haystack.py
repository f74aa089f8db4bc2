"""The ``haystack`` system: a ``Pipeline`` with a retriever and (optionally) a generator component.

Each question is ``pipeline.run(inputs, include_outputs_from={retriever, generator})``.
The ranking is the retriever component's ``documents`` (``Document.content``, ``id``,
``score``, ``meta`` through the metadata mapping; default ``file_path`` / ``source``
for the path); the answer is the generator's first reply, and its token usage the
replies' ``meta["usage"]`` (chat generators) or the ``meta`` list (text generators).

Components are found by what they output: the retriever is the one component with a
``documents`` output and the generator the one with ``replies``; name them
(``retriever:``, ``generator:``) when there are several. ``inputs`` gives every
component input as a template (``{{ question }}``, ``{{ k }}``, ``{{ sample.X }}``);
by default the question goes to every open ``query`` / ``question`` / ``text`` input
and k to the retriever's open ``top_k``.

Timings: while the adapter runs, a ``haystack.tracing.Tracer`` wraps whatever tracer
was set (which still gets every span) and times the retriever's run (``retrieval``) and
the generator's (``generation``) for the call it belongs to; the previous tracer is
put back when the run ends. Haystack's own usage telemetry follows your settings
(``HAYSTACK_TELEMETRY_ENABLED``); ragmeter adds none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ragmeter.harness.calls import sample_dict
from ragmeter.harness.framework_suite import HaystackSystem
from ragmeter.harness.frameworks import (
    CURRENT_TRACE,
    GENERATION,
    RETRIEVAL,
    CallTrace,
    FrameworkAdapter,
    FrameworkSetupError,
    SharedHook,
    token_usage,
)
from ragmeter.harness.templates import compile_template, render_template
from ragmeter.schema.samples import Sample

QUESTION_INPUTS = ("query", "question", "text")
"""Open pipeline inputs that get the question when the suite gives no ``inputs``."""


def _install() -> Any:
    from haystack.tracing.tracer import Tracer, enable_tracing, tracer

    previous = tracer.actual_tracer

    class RagmeterTracer(Tracer):
        @contextlib.contextmanager
        def trace(
            self, operation_name: str, tags: dict[str, Any] | None = None, parent_span: Any = None
        ) -> Iterator[Any]:
            call = CURRENT_TRACE.get()
            name = (tags or {}).get("haystack.component.name")
            is_component = call is not None and operation_name == "haystack.component.run"
            stage = call.stage_of.get(str(name)) if is_component and call is not None else None
            key = object()
            if stage is not None and call is not None:
                call.begin(key, stage)
            try:
                with previous.trace(operation_name, tags=tags, parent_span=parent_span) as span:
                    yield span
            finally:
                if stage is not None and call is not None:
                    call.end(key)

        def current_span(self) -> Any:
            return previous.current_span()

    enable_tracing(RagmeterTracer())
    return previous


def _uninstall(previous: Any) -> None:
    from haystack.tracing.tracer import enable_tracing

    enable_tracing(previous)


_HOOK = SharedHook(_install, _uninstall)


def _pick(nodes: Mapping[str, Any], socket: str, named: str | None, key: str) -> str | None:
    """The component named by the suite, or the only one with an output ``socket``."""
    candidates = [name for name, node in nodes.items() if socket in (node.get("output_sockets") or {})]
    if named is not None:
        if named not in nodes:
            raise FrameworkSetupError(
                key, f"the pipeline has no component {named!r} (it has: {', '.join(nodes)})"
            )
        if socket not in (nodes[named].get("output_sockets") or {}):
            raise FrameworkSetupError(key, f"component {named!r} has no {socket!r} output")
        return named
    if len(candidates) > 1:
        raise FrameworkSetupError(
            key, f"several components output {socket!r} ({', '.join(candidates)}); name the one to use"
        )
    return candidates[0] if candidates else None


def _reply_text(reply: Any) -> str | None:
    if isinstance(reply, str):
        return reply
    text = getattr(reply, "text", None)
    return text if isinstance(text, str) else None


class HaystackAdapter(FrameworkAdapter):
    """Runs a Haystack pipeline."""

    framework = "haystack"

    def __init__(self, obj: Any, system: HaystackSystem, *, base_dir: Path | None = None) -> None:
        graph = getattr(obj, "graph", None)
        if graph is None or not callable(getattr(obj, "run", None)):
            raise TypeError(f"a {type(obj).__name__} is not a Haystack Pipeline")
        super().__init__(obj, mapping=system.metadata_mapping(), base_dir=base_dir)
        nodes = {str(name): graph.nodes[name] for name in graph.nodes}
        retriever = _pick(nodes, "documents", system.retriever, "retriever")
        if retriever is None:
            raise FrameworkSetupError("retriever", "no component of the pipeline outputs 'documents'")
        self.retriever = retriever
        self.generator = _pick(nodes, "replies", system.generator, "generator")
        self.stages = {retriever: RETRIEVAL, **({self.generator: GENERATION} if self.generator else {})}
        self._inputs = compile_template(
            system.inputs if system.inputs is not None else self._default_inputs()
        )

    def _default_inputs(self) -> dict[str, dict[str, Any]]:
        inputs: dict[str, dict[str, Any]] = {}
        for component, sockets in self.obj.inputs(include_components_with_connected_inputs=False).items():
            for socket in sockets:
                if socket in QUESTION_INPUTS:
                    inputs.setdefault(component, {})[socket] = "{{ question }}"
                elif socket == "top_k" and component == self.retriever:
                    inputs.setdefault(component, {})[socket] = "{{ k }}"
        if not inputs:
            raise FrameworkSetupError(
                "inputs",
                "the pipeline has no open 'query', 'question' or 'text' input; say where the question goes",
            )
        return inputs

    async def start(self) -> None:
        """Put the timing tracer in front of the current one."""
        _HOOK.acquire()

    async def aclose(self) -> None:
        """Put the previous tracer back."""
        _HOOK.release()

    def _answer(self, outputs: Mapping[str, Any], trace: CallTrace) -> str | None:
        produced = outputs.get(self.generator or "", {}) if self.generator else {}
        replies = list(produced.get("replies") or [])
        metas = produced.get("meta")
        if not replies:
            return None
        per_reply = metas if isinstance(metas, list) else [getattr(r, "meta", None) for r in replies]
        first = per_reply[0] if per_reply else None
        model = first.get("model") if isinstance(first, Mapping) else None
        trace.set_model_calls([token_usage(first)], model if isinstance(model, str) else None)
        return _reply_text(replies[0])

    def ask(self, sample: Sample, question: str, k: int, trace: CallTrace) -> dict[str, Any]:
        """Run the pipeline once and read the retriever's documents and the generator's reply."""
        context = {"question": question, "id": sample.id, "k": k, "sample": sample_dict(sample)}
        data = render_template(self._inputs, context)
        trace.stage_of.update(self.stages)
        outputs = self.obj.run(data, include_outputs_from=set(self.stages))
        documents = (outputs.get(self.retriever) or {}).get("documents") or []
        output: dict[str, Any] = {
            "retrieved": [
                self.mapper.item(
                    getattr(d, "content", None),
                    getattr(d, "meta", None),
                    native_id=getattr(d, "id", None),
                    score=getattr(d, "score", None),
                )
                for d in documents
            ]
        }
        answer = self._answer(outputs, trace)
        if answer is not None:
            output["answer"] = answer
        return output
