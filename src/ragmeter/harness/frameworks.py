"""What the framework adapters (LangChain, LlamaIndex, Haystack, DSPy) share.

* :class:`DocumentMapper` — a framework document (text, metadata, native id, score)
  to one ranked item of the output contract, through the metadata mapping;
* :class:`CallTrace` — per-stage timings (``retrieval``, ``generation``), token counts
  and the model of one call, fed by the framework's own callbacks;
* :func:`token_usage` — token counts from any of the usual usage shapes, or unknown;
* :func:`detect_framework` — which framework an object belongs to, without importing any;
* :class:`FrameworkAdapter` — the adapter protocol around a synchronous ``ask``.

The frameworks themselves are imported only by their own modules, when used.

>>> mapper = DocumentMapper(DEFAULT_METADATA["langchain"])
>>> mapper.item("Run it.", {"source": "a/setup.md", "Header 1": "Setup", "Header 2": "Install"}, native_id="d1")
{'id': 'd1', 'text': 'Run it.', 'rel_path': 'a/setup.md', 'heading_path': ['Setup', 'Install'], 'metadata': {'source': 'a/setup.md', 'Header 1': 'Setup', 'Header 2': 'Install'}}
>>> token_usage({"usage_metadata": {"input_tokens": 12, "output_tokens": 3}})
(12, 3)
>>> token_usage({"prompt_tokens": 0, "completion_tokens": 0}) is None  # nothing reported, not zero
True
"""

from __future__ import annotations

import contextvars
import importlib
import json
import math
import re
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ragmeter.harness.calls import CallFailed, call_failure, call_in_thread, question_of
from ragmeter.harness.framework_suite import DEFAULT_METADATA, Framework, FrameworkSystem, MetadataMapping
from ragmeter.schema.samples import Sample

RETRIEVAL = "retrieval"
GENERATION = "generation"

_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_HEADING_SPLIT = re.compile(r"\s*(?:>|/|#)\s*")
_PROMPT_KEYS = ("prompt_tokens", "input_tokens", "prompt_token_count", "promptTokenCount")
_COMPLETION_KEYS = (
    "completion_tokens",
    "output_tokens",
    "candidates_token_count",
    "candidatesTokenCount",
)
_USAGE_KEYS = ("usage", "token_usage", "usage_metadata", "usageMetadata", "raw", "additional_kwargs", "meta")

CURRENT_TRACE: contextvars.ContextVar[CallTrace | None] = contextvars.ContextVar(
    "ragmeter_current_trace", default=None
)
"""The trace of the call running in this context (framework-wide hooks route events to it)."""


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) and value >= 0 else None


def _as_mapping(value: Any) -> Mapping[str, Any] | None:
    if isinstance(value, Mapping):
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            dumped = dump()
        except Exception:  # a model that cannot dump itself carries no usage we can read
            return None
        return dumped if isinstance(dumped, Mapping) else None
    return getattr(value, "__dict__", None) if hasattr(value, "__dict__") else None


def token_usage(value: Any, *, depth: int = 0) -> tuple[int, int] | None:
    """``(prompt, completion)`` tokens from a usage record in any usual shape; ``None`` when unknown.

    Keys probed: ``prompt_tokens``/``input_tokens``/``prompt_token_count`` and
    ``completion_tokens``/``output_tokens``/``candidates_token_count``, at the top or
    under ``usage``/``token_usage``/``usage_metadata``/``raw``/``meta``. A usage of 0
    and 0 is a client that reports nothing (DSPy's ``DummyLM``): unknown, never 0.

    >>> token_usage({"raw": {"usage": {"prompt_tokens": 7, "completion_tokens": 2}}})
    (7, 2)
    """
    mapping = _as_mapping(value)
    if mapping is None or depth > 3:
        return None
    prompt = next((c for k in _PROMPT_KEYS if (c := _count(mapping.get(k))) is not None), None)
    completion = next((c for k in _COMPLETION_KEYS if (c := _count(mapping.get(k))) is not None), None)
    if prompt is not None or completion is not None:
        if not prompt and not completion:
            return None
        return prompt or 0, completion or 0
    for key in _USAGE_KEYS:
        if mapping.get(key) is not None:
            found = token_usage(mapping[key], depth=depth + 1)
            if found is not None:
                return found
    return None


@dataclass
class CallTrace:
    """Stage timings, token counts and the model of one call, as the framework's hooks report them.

    A stage's seconds are the time covered by its runs (the union of their intervals),
    so nested or overlapping runs of one stage are not counted twice. Tokens are
    reported only when every model call reported them: a sum over some of the calls
    would be a silent undercount.

    >>> trace = CallTrace()
    >>> trace.begin("r1", "retrieval"); _ = trace.end("r1")
    >>> trace.begin("g1", "generation"); _ = trace.end("g1", usage=(12, 3), model="m")
    >>> sorted(trace.output_fields()), trace.output_fields()["tokens"], trace.output_fields()["model"]
    (['model', 'timings', 'tokens'], {'prompt': 12, 'completion': 3}, 'm')
    >>> trace = CallTrace(); trace.add_interval("retrieval", 1.0, 3.0); trace.add_interval("retrieval", 2.0, 4.0)
    >>> trace.output_fields()["timings"]
    {'retrieval': 3.0}
    """

    stage_of: dict[str, str] = field(default_factory=dict)
    """The stage of each named component, for hooks that see names (Haystack's tracer)."""
    documents: list[tuple[float, list[Any]]] = field(default_factory=list)
    """Documents the retrieval runs returned, with each run's start."""
    _intervals: dict[str, list[tuple[float, float]]] = field(default_factory=dict)
    _open: dict[Hashable, tuple[str, float]] = field(default_factory=dict)
    _usages: list[tuple[int, int] | None] = field(default_factory=list)
    _models: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self, key: Hashable, stage: str, *, outermost: bool = False) -> None:
        """A stage run starts; with ``outermost``, not while another run of the stage is open (nesting)."""
        with self._lock:
            if outermost and any(open_stage == stage for open_stage, _ in self._open.values()):
                return
            self._open[key] = (stage, time.perf_counter())

    def end(
        self, key: Hashable, *, usage: tuple[int, int] | None = None, model: str | None = None
    ) -> float | None:
        """A stage run ends (unknown keys are ignored); returns when it started (``perf_counter``)."""
        with self._lock:
            opened = self._open.pop(key, None)
            if opened is None:
                return None
            stage, started = opened
            self._intervals.setdefault(stage, []).append((started, time.perf_counter()))
            if stage == GENERATION:
                self._usages.append(usage)
                if model:
                    self._models.append(model)
            return started

    def add_interval(self, stage: str, started: float, ended: float) -> None:
        """A stage run known only once it ended (``perf_counter`` times)."""
        with self._lock:
            self._intervals.setdefault(stage, []).append((started, max(started, ended)))

    def set_model_calls(self, usages: Sequence[tuple[int, int] | None], model: str | None) -> None:
        """Replace what the model runs reported (for frameworks whose outputs, not hooks, carry usage)."""
        with self._lock:
            self._usages = list(usages)
            self._models = [model] if model else []

    def add_documents(self, started: float, documents: Sequence[Any]) -> None:
        """Documents one retrieval run returned (kept in the order the runs started)."""
        with self._lock:
            self.documents.append((started, list(documents)))

    def retrieved_documents(self) -> list[Any]:
        """Every retrieval run's documents, runs in start order."""
        with self._lock:
            return [doc for _, docs in sorted(self.documents, key=lambda pair: pair[0]) for doc in docs]

    def output_fields(self) -> dict[str, Any]:
        """``timings``, ``tokens`` and ``model`` for the output (each only when known)."""
        with self._lock:
            out: dict[str, Any] = {}
            if self._intervals:
                out["timings"] = {
                    stage: round(_covered(spans), 6) for stage, spans in self._intervals.items()
                }
            if self._usages and all(u is not None for u in self._usages):
                usages = [u for u in self._usages if u is not None]
                out["tokens"] = {"prompt": sum(u[0] for u in usages), "completion": sum(u[1] for u in usages)}
            if self._models:
                out["model"] = self._models[-1]
            return out


def _covered(intervals: Sequence[tuple[float, float]]) -> float:
    """The length of the union of ``intervals``."""
    total = 0.0
    reach = -math.inf
    for started, ended in sorted(intervals):
        if ended > reach:
            total += ended - max(started, reach)
            reach = ended
    return total


class SharedHook:
    """A framework-wide hook installed while at least one adapter runs, and removed after the last.

    ``install()`` returns a handle that ``uninstall(handle)`` takes back. The hook
    itself routes events through :data:`CURRENT_TRACE`, so it sees only our calls.

    >>> log = []
    >>> hook = SharedHook(lambda: log.append("on") or "h", lambda h: log.append(f"off {h}"))
    >>> hook.acquire(); hook.acquire(); hook.release(); hook.release(); log
    ['on', 'off h']
    """

    def __init__(self, install: Callable[[], Any], uninstall: Callable[[Any], None]) -> None:
        self._install = install
        self._uninstall = uninstall
        self._lock = threading.Lock()
        self._users = 0
        self._handle: Any = None

    def acquire(self) -> None:
        """One more adapter needs the hook (installed by the first)."""
        with self._lock:
            if self._users == 0:
                self._handle = self._install()
            self._users += 1

    def release(self) -> None:
        """One adapter is done with the hook (removed after the last)."""
        with self._lock:
            if self._users == 0:
                return
            self._users -= 1
            if self._users == 0:
                self._uninstall(self._handle)
                self._handle = None


def _json_safe(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if depth < 4 and isinstance(value, Mapping):
        return {str(k): _json_safe(v, depth + 1) for k, v in value.items()}
    if depth < 4 and isinstance(value, (list, tuple)):
        return [_json_safe(v, depth + 1) for v in value]
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return str(value)
    return value


def _own_heading(text: str) -> str | None:
    first = text.lstrip("\n").split("\n", 1)[0]
    match = _HEADING_LINE.match(first)
    return match.group(1).strip() if match else None


class DocumentMapper:
    """Maps framework documents to ranked items through a :class:`MetadataMapping`.

    ``rel_path``: the first mapped key present, with ``\\`` as ``/`` and made relative
    to ``path_root`` when it lies under it. ``heading_path``: every ``Header N``-style
    key present, in order; or a key holding a whole path (a list, or ``A > B``). LlamaIndex's
    ``header_path`` (``/A/B/``) names the ancestors only: the node's own heading,
    the first line of its text, is added. ``id``: the first mapped key present, else
    the framework's own id.
    """

    def __init__(self, mapping: MetadataMapping, *, base_dir: Path | None = None) -> None:
        self.mapping = mapping
        root = mapping.path_root
        self._root = None if root is None else ((base_dir or Path.cwd()) / root).resolve().as_posix()

    def _rel_path(self, metadata: Mapping[str, Any]) -> str | None:
        for key in self.mapping.rel_path or ():
            value = metadata.get(key)
            if isinstance(value, (str, PurePosixPath, Path)) and str(value).strip():
                path = str(value).replace("\\", "/")
                if self._root is not None and path.startswith(self._root + "/"):
                    path = path[len(self._root) + 1 :]
                return path
        return None

    def _heading_path(self, metadata: Mapping[str, Any], text: str | None) -> list[str] | None:
        parts: list[str] = []
        for key in self.mapping.heading_path or ():
            value = metadata.get(key)
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                return [str(v) for v in value if str(v).strip()]
            text_value = str(value).strip()
            if key == "header_path":  # LlamaIndex's MarkdownNodeParser: ancestors only, as /A/B/
                ancestors = [p for p in text_value.split("/") if p.strip()]
                own = _own_heading(text or "")
                return [*ancestors, own] if own is not None else ancestors or None
            if not parts and _HEADING_SPLIT.search(text_value) and key in ("heading_path", "headings"):
                return [p for p in _HEADING_SPLIT.split(text_value) if p]
            if text_value:
                parts.append(text_value)
        return parts or None

    def item(
        self,
        text: str | None,
        metadata: Mapping[str, Any] | None,
        *,
        native_id: Any = None,
        score: Any = None,
    ) -> dict[str, Any]:
        """One ranked item (fields without a value are left out; the metadata is kept, JSON-safe)."""
        meta = metadata or {}
        ident = next((meta[k] for k in self.mapping.id or () if meta.get(k) not in (None, "")), native_id)
        item: dict[str, Any] = {}
        if isinstance(ident, (str, int)) and not isinstance(ident, bool) and str(ident).strip():
            item["id"] = str(ident)
        if text is not None:
            item["text"] = str(text)
        rel_path = self._rel_path(meta)
        if rel_path is not None:
            item["rel_path"] = rel_path
        headings = self._heading_path(meta, text)
        if headings is not None:
            item["heading_path"] = headings
        if isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score):
            item["score"] = float(score)
        if meta:
            item["metadata"] = _json_safe(dict(meta))
        return item


_FRAMEWORK_BASES: dict[str, tuple[tuple[str, str], ...]] = {
    "langchain": (("langchain_core.", "BaseRetriever"), ("langchain_core.", "Runnable")),
    "llamaindex": (("llama_index.", "BaseRetriever"), ("llama_index.", "BaseQueryEngine")),
    "haystack": (("haystack.", "PipelineBase"), ("haystack.", "Pipeline")),
    "dspy": (("dspy.", "BaseModule"), ("dspy.", "Module")),
}


def detect_framework(obj: Any) -> Framework | None:
    """The framework ``obj`` belongs to, from the classes it derives from (no framework is imported).

    >>> detect_framework(print) is None
    True
    """
    for klass in type(obj).__mro__:
        module = getattr(klass, "__module__", "") or ""
        for framework, bases in _FRAMEWORK_BASES.items():
            if any(module.startswith(prefix) and klass.__name__ == name for prefix, name in bases):
                return framework  # type: ignore[return-value]
    return None


class FrameworkSetupError(ValueError):
    """The framework object does not fit the suite; ``key`` is the ``system`` key to fix."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(message)


_ADAPTER_CLASSES: dict[str, str] = {
    "langchain": "ragmeter.harness.langchain:LangchainAdapter",
    "llamaindex": "ragmeter.harness.llamaindex:LlamaIndexAdapter",
    "haystack": "ragmeter.harness.haystack:HaystackAdapter",
    "dspy": "ragmeter.harness.dspy:DspyAdapter",
}
EXTRAS = {"langchain_core": "langchain", "llama_index": "llamaindex", "haystack": "haystack", "dspy": "dspy"}
"""Framework package → the ragmeter extra that installs it (for install hints)."""


def framework_adapter(obj: Any, system: FrameworkSystem, *, base_dir: Path | None = None) -> FrameworkAdapter:
    """The adapter for a framework object; :class:`FrameworkSetupError` when it does not fit ``system``."""
    detected = detect_framework(obj)
    if detected != system.framework:
        what = f"a {detected} object" if detected else "not a LangChain, LlamaIndex, Haystack or DSPy object"
        raise FrameworkSetupError("object", f"{type(obj).__name__} is {what}, not a {system.framework} one")
    module_name, _, class_name = _ADAPTER_CLASSES[system.framework].partition(":")
    adapter_class = getattr(importlib.import_module(module_name), class_name)
    try:
        adapter: FrameworkAdapter = adapter_class(obj, system, base_dir=base_dir)
    except TypeError as exc:
        raise FrameworkSetupError("object", str(exc)) from None
    return adapter


class FrameworkAdapter:
    """An adapter around a framework object: each question runs :meth:`ask` on its own thread.

    Subclasses implement ``ask(sample, question, k, trace)`` returning the output
    contract (without ``timings``/``tokens``/``model``, which come from ``trace``).
    """

    framework: Framework

    def __init__(
        self, obj: Any, *, mapping: MetadataMapping | None = None, base_dir: Path | None = None
    ) -> None:
        self.obj = obj
        self.mapper = DocumentMapper(mapping or DEFAULT_METADATA[self.framework], base_dir=base_dir)
        self.description = f"{self.framework} {type(obj).__name__}"

    async def start(self) -> None:
        """Install the framework-wide hooks the adapter needs (none by default)."""

    async def aclose(self) -> None:
        """Remove what :meth:`start` installed."""

    def ask(self, sample: Sample, question: str, k: int, trace: CallTrace) -> dict[str, Any]:
        """Ask one question (on a worker thread); implemented by each framework."""
        raise NotImplementedError

    def _ask_traced(self, sample: Sample, k: int) -> dict[str, Any]:
        trace = CallTrace()
        token = CURRENT_TRACE.set(trace)
        try:
            output = self.ask(sample, question_of(sample) or "", k, trace)
        finally:
            CURRENT_TRACE.reset(token)
        return {**output, **trace.output_fields()}

    async def call(self, sample: Sample, *, k: int) -> Any:
        """Ask one question; the framework's exceptions are reported like the http adapter's."""
        try:
            return await call_in_thread(lambda: self._ask_traced(sample, k))
        except CallFailed:
            raise
        except Exception as exc:
            raise call_failure(exc) from None

    def provenance(self) -> dict[str, Any]:
        """The framework, its version and the object's class (for ``config.json``)."""
        from importlib.metadata import PackageNotFoundError, version

        package = {"langchain": "langchain-core", "llamaindex": "llama-index-core", "haystack": "haystack-ai"}
        try:
            found = version(package.get(self.framework, self.framework))
        except PackageNotFoundError:
            found = None
        cls = type(self.obj)
        return {
            "framework": {
                "name": self.framework,
                "version": found,
                "object": f"{cls.__module__}.{cls.__qualname__}",
            }
        }
