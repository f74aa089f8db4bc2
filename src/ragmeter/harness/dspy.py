"""The ``dspy`` system: a ``dspy.Module`` whose prediction carries passages and an answer.

Each question is ``module(**{input_field: question})`` inside
``dspy.context(callbacks=[...], track_usage=True)``, so the hooks and the usage
tracking belong to that call only (DSPy's settings are per thread). The ranking is
the prediction's ``passages_field`` (default: the first of ``passages``, ``context``,
``documents``, ``retrieved``): each passage a string (its text), or a mapping / object
with ``text`` / ``long_text`` / ``content`` and metadata, read through the metadata
mapping (default ``source`` / ``file_path`` for the path, ``heading_path`` / ``headings``).
The answer is ``answer_field`` (default ``answer``).

Timings: ``generation`` is each LM call (``on_lm_start`` → ``on_lm_end``);
``retrieval`` is each sub-module whose output carries passages (a retriever, found by
what it returns), overlapping runs counted once. Tokens are the prediction's
``get_lm_usage()``; a usage of 0 and 0 (``DummyLM``) is recorded as unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragmeter.harness.framework_suite import DspySystem
from ragmeter.harness.frameworks import GENERATION, RETRIEVAL, CallTrace, FrameworkAdapter, token_usage
from ragmeter.schema.samples import Sample

PASSAGE_FIELDS = ("passages", "context", "documents", "retrieved")
_TEXT_KEYS = ("text", "long_text", "content", "page_content", "passage")


def _get(prediction: Any, name: str) -> Any:
    if isinstance(prediction, Mapping):
        return prediction.get(name)
    try:
        return (
            prediction.get(name) if callable(getattr(prediction, "get", None)) else getattr(prediction, name)
        )
    except (AttributeError, KeyError):
        return None


def _has_passages(outputs: Any) -> bool:
    passages = _get(outputs, "passages")
    return isinstance(passages, (list, tuple))


def _callback(trace: CallTrace, top: Any) -> Any:
    """A DSPy callback feeding ``trace`` (built lazily: dspy is imported here)."""
    import time

    from dspy.utils.callback import BaseCallback

    starts: dict[str, float] = {}

    class RagmeterCallback(BaseCallback):  # type: ignore[misc]
        def on_module_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
            if instance is not top:
                starts[call_id] = time.perf_counter()

        def on_module_end(self, call_id: str, outputs: Any, exception: Exception | None = None) -> None:
            started = starts.pop(call_id, None)
            if started is not None and _has_passages(outputs):  # a retriever, by what it returns
                trace.add_interval(RETRIEVAL, started, time.perf_counter())

        def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
            trace.begin(call_id, GENERATION)

        def on_lm_end(self, call_id: str, outputs: Any, exception: Exception | None = None) -> None:
            trace.end(call_id)

    return RagmeterCallback()


class DspyAdapter(FrameworkAdapter):
    """Runs a DSPy module."""

    framework = "dspy"

    def __init__(self, obj: Any, system: DspySystem, *, base_dir: Path | None = None) -> None:
        if not callable(obj):
            raise TypeError(f"a {type(obj).__name__} is not callable; expected a dspy.Module")
        super().__init__(obj, mapping=system.metadata_mapping(), base_dir=base_dir)
        self.system = system

    def _passage(self, passage: Any) -> dict[str, Any]:
        if isinstance(passage, str):
            return self.mapper.item(passage, None)
        data = passage if isinstance(passage, Mapping) else getattr(passage, "__dict__", None) or {}
        nested = data.get("metadata")
        metadata = {**data, **nested} if isinstance(nested, Mapping) else dict(data)
        text = next((data[k] for k in _TEXT_KEYS if isinstance(data.get(k), str)), None)
        return self.mapper.item(text, metadata, score=data.get("score"))

    def _passages(self, prediction: Any) -> list[Any] | None:
        name = self.system.passages_field
        if name is not None:
            found = _get(prediction, name)
            if not isinstance(found, (list, tuple)):
                raise TypeError(f"the prediction's {name!r} (passages_field) is not a list of passages")
            return list(found)
        return next(
            (list(v) for f in PASSAGE_FIELDS if isinstance(v := _get(prediction, f), (list, tuple))), None
        )

    def ask(self, sample: Sample, question: str, k: int, trace: CallTrace) -> dict[str, Any]:
        """Call the module with call-scoped callbacks and usage tracking."""
        import dspy

        callbacks = [*(dspy.settings.get("callbacks") or []), _callback(trace, self.obj)]
        with dspy.context(callbacks=callbacks, track_usage=True):
            prediction = self.obj(**{self.system.input_field: question})
        usage_by_model = (
            prediction.get_lm_usage() if callable(getattr(prediction, "get_lm_usage", None)) else None
        )
        if isinstance(usage_by_model, Mapping) and usage_by_model:
            models = list(usage_by_model)
            trace.set_model_calls([token_usage(usage_by_model[m]) for m in models], str(models[-1]))
        answer = _get(prediction, self.system.answer_field)
        passages = self._passages(prediction)
        if passages is None and answer is None:
            raise TypeError(
                f"the prediction has neither passages ({', '.join(PASSAGE_FIELDS)}) nor "
                f"{self.system.answer_field!r} (set passages_field / answer_field)"
            )
        output: dict[str, Any] = {"retrieved": [self._passage(p) for p in passages or []]}
        if answer is not None:
            output["answer"] = str(answer)
        return output
