"""The ``langchain`` system: a ``BaseRetriever``, or a Runnable chain that returns documents and/or an answer.

Each question is ``obj.invoke(question)`` (or ``obj.invoke({input_key: question})``)
with a callback handler scoped to that call (``config={"callbacks": [handler]}``; no
global patching). The handler times the retriever runs (``retrieval``) and the model
runs (``generation``), and reads each model run's token usage (``usage_metadata``,
else ``llm_output["token_usage"]``) and model name.

What the chain returns decides the output:

* a list of ``Document`` — the ranking;
* a ``str`` or a message — the answer;
* a mapping — the documents under ``documents_key`` (default: the first value that
  is a list of ``Document``) and the answer under ``answer_key`` (default: ``answer``,
  ``result``, ``output``, ``response``, ``text``).

A chain that returns only an answer is ranked by the documents its retriever runs
returned (all of them, runs in start order). ``Document.metadata`` goes through the
metadata mapping (default: ``source`` / ``file_path`` for the path, ``Header 1`` …
``Header 6`` for the heading path); ``Document.id`` is the id unless mapped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

from ragmeter.harness.framework_suite import LangchainSystem
from ragmeter.harness.frameworks import GENERATION, RETRIEVAL, CallTrace, FrameworkAdapter, token_usage
from ragmeter.schema.samples import Sample

_ANSWER_KEYS = ("answer", "result", "output", "response", "text", "content")
_DOCUMENT_KEYS = ("context", "documents", "source_documents", "docs")


def _is_document(value: Any) -> bool:
    return hasattr(value, "page_content") and hasattr(value, "metadata")


def _is_documents(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and all(_is_document(v) for v in value) and bool(value)


def _text_of(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    content = getattr(value, "content", None)  # an AIMessage
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        texts = [b.get("text") if isinstance(b, Mapping) else b for b in content]
        return "".join(t for t in texts if isinstance(t, str))
    return None


def _model_usage(response: Any) -> tuple[tuple[int, int] | None, str | None]:
    """Token usage and model name of one model run (an ``LLMResult``)."""
    usage: tuple[int, int] | None = None
    model: str | None = None
    for generations in getattr(response, "generations", None) or []:
        for generation in generations:
            message = getattr(generation, "message", None)
            found = token_usage({"usage_metadata": getattr(message, "usage_metadata", None)})
            if found is not None:
                usage = found if usage is None else (usage[0] + found[0], usage[1] + found[1])
            metadata = getattr(message, "response_metadata", None) or {}
            model = model or metadata.get("model_name") or metadata.get("model")
    llm_output = getattr(response, "llm_output", None) or {}
    if usage is None:
        usage = token_usage(llm_output)
    model = model or llm_output.get("model_name") or llm_output.get("model")
    return usage, model if isinstance(model, str) else None


def _handler(trace: CallTrace) -> Any:
    """A LangChain callback handler feeding ``trace`` (built lazily: langchain-core is imported here)."""
    from langchain_core.callbacks import BaseCallbackHandler

    class RagmeterHandler(BaseCallbackHandler):
        raise_error = False

        def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID, **kwargs: Any) -> None:
            trace.begin(run_id, RETRIEVAL)

        def on_retriever_end(self, documents: Sequence[Any], *, run_id: UUID, **kwargs: Any) -> None:
            started = trace.end(run_id)
            if started is not None:
                trace.add_documents(started, documents)

        def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            trace.end(run_id)

        def on_llm_start(self, serialized: Any, prompts: Any, *, run_id: UUID, **kwargs: Any) -> None:
            trace.begin(run_id, GENERATION)

        def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any) -> None:
            trace.begin(run_id, GENERATION)

        def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
            usage, model = _model_usage(response)
            trace.end(run_id, usage=usage, model=model)

        def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
            trace.end(run_id)

    return RagmeterHandler()


class LangchainAdapter(FrameworkAdapter):
    """Runs a LangChain retriever or chain (``invoke`` with a call-scoped callback handler)."""

    framework = "langchain"

    def __init__(self, obj: Any, system: LangchainSystem, *, base_dir: Path | None = None) -> None:
        if not callable(getattr(obj, "invoke", None)):
            raise TypeError(f"a {type(obj).__name__} has no invoke(); expected a BaseRetriever or a Runnable")
        super().__init__(obj, mapping=system.metadata_mapping(), base_dir=base_dir)
        self.system = system

    def _documents(self, found: Sequence[Any]) -> list[dict[str, Any]]:
        return [
            self.mapper.item(
                d.page_content,
                d.metadata,
                native_id=getattr(d, "id", None),
                score=(d.metadata or {}).get("score"),
            )
            for d in found
        ]

    def _split(self, result: Any) -> tuple[list[Any] | None, Any]:
        """The documents and the answer in what the chain returned (``None``: not there)."""
        if _is_documents(result) or (isinstance(result, list) and not result):
            return list(result), None
        if not isinstance(result, Mapping):
            return None, _text_of(result)
        system = self.system
        if system.documents_key is not None:
            if system.documents_key not in result:
                raise KeyError(f"the chain's output has no {system.documents_key!r} (documents_key)")
            documents = result[system.documents_key]
            if not isinstance(documents, (list, tuple)) or not all(_is_document(d) for d in documents):
                raise TypeError(f"the chain's {system.documents_key!r} is not a list of Documents")
            docs: list[Any] | None = list(documents)
        else:
            keys = [*_DOCUMENT_KEYS, *result]
            docs = next((list(result[k]) for k in keys if k in result and _is_documents(result[k])), None)
        if system.answer_key is not None:
            if system.answer_key not in result:
                raise KeyError(f"the chain's output has no {system.answer_key!r} (answer_key)")
            return docs, _text_of(result[system.answer_key])
        answer = next(
            (_text_of(result[k]) for k in _ANSWER_KEYS if _text_of(result.get(k)) is not None), None
        )
        return docs, answer

    def ask(self, sample: Sample, question: str, k: int, trace: CallTrace) -> dict[str, Any]:
        """Invoke the retriever or chain with a handler scoped to this call."""
        payload: Any = question if self.system.input_key is None else {self.system.input_key: question}
        result = self.obj.invoke(payload, config={"callbacks": [_handler(trace)]})
        documents, answer = self._split(result)
        if documents is None and trace.documents:  # an answer-only chain: its retriever runs' documents
            documents = trace.retrieved_documents()
        if documents is None and answer is None:
            raise TypeError(
                f"the chain returned {type(result).__name__} with neither Documents nor an answer "
                "(set documents_key / answer_key)"
            )
        output: dict[str, Any] = {"retrieved": self._documents(documents or [])}
        if answer is not None:
            output["answer"] = answer
        return output
