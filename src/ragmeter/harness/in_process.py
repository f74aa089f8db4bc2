"""``ragmeter.run``: ask a dataset's questions to a system given in Python, then score the answers.

The system is a framework object (a LangChain retriever or chain, a LlamaIndex
retriever or query engine, a Haystack pipeline, a DSPy module — recognised by the
classes it derives from) or a plain function taking the sample (as a ``python``
suite system). The calls go through the same runner as ``ragmeter run``: bounded
concurrency, a timeout per call, retries of connection errors and HTTP 429/5xx;
each failure is recorded with its error and scored, never dropped.

>>> def search(sample, k):
...     return {"retrieved": [{"id": "doc-3"}, {"id": "doc-9"}][:k]}
>>> result = run([{"id": "q-1", "input": "Why?", "expected_output": ["doc-9"]}], search, metrics=["mrr"])
>>> result.aggregate, result.provenance["system"]["kind"]
({'mrr': 0.5}, 'python')
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from ragmeter.config import RagmeterConfig, load_config
from ragmeter.errors import ConfigError, InputError
from ragmeter.evaluation.dataset_inputs import load_samples
from ragmeter.harness.calls import Adapter, question_of
from ragmeter.harness.framework_suite import FRAMEWORK_SYSTEMS
from ragmeter.harness.frameworks import FrameworkSetupError, detect_framework, framework_adapter
from ragmeter.harness.journal import OUTPUTS_FILENAME, OutputsJournal
from ragmeter.harness.runner import QuestionProgress, RunAborted, RunSettings, RunSummary, call_all
from ragmeter.progress import make_progress
from ragmeter.results import EvalResult
from ragmeter.schema.samples import Sample

T = TypeVar("T")


class MemoryJournal:
    """Outputs kept in memory (when ``run`` is given no ``results_dir``)."""

    def __init__(self) -> None:
        self.outputs: dict[str, dict[str, Any]] = {}

    def append(self, sample_id: str, output: dict[str, Any]) -> None:
        """Keep one output."""
        self.outputs[sample_id] = output


def system_adapter(system: Any, options: Mapping[str, Any]) -> tuple[Adapter, dict[str, Any]]:
    """The adapter for a framework object or a function, and its provenance.

    ``options`` are the framework system's suite keys (``metadata``, ``input_key``,
    ``retriever``, …) or, for a function, extra keyword arguments.
    """
    framework = detect_framework(system)
    if framework is not None:
        cls = type(system)
        data = {"type": framework, "object": f"{cls.__module__}:{cls.__name__}", **options}
        try:
            model = FRAMEWORK_SYSTEMS[framework].model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(part) for part in err["loc"]) or "system"
            raise ConfigError(f"{key}: {str(err['msg']).removeprefix('Value error, ')}") from None
        try:
            adapter = framework_adapter(system, model)  # type: ignore[arg-type]
        except FrameworkSetupError as exc:
            raise ConfigError(f"{exc.key}: {exc}") from None
        return adapter, {"kind": framework, **adapter.provenance()}
    if callable(system):
        from ragmeter.harness.python import PythonAdapter
        from ragmeter.harness.suite import PythonSystem

        name = f"{getattr(system, '__module__', None) or 'python'}:{getattr(system, '__name__', 'system')}"
        spec = PythonSystem.model_construct(
            type="python", function=name, kwargs=dict(options), python_path=[]
        )
        return PythonAdapter(spec, python_path=[], function=system), {"kind": "python", "function": name}
    raise ConfigError(
        f"system must be a LangChain, LlamaIndex, Haystack or DSPy object or a function, got {type(system).__name__}"
    )


def _run_coroutine(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run``, also from inside a running event loop (a notebook): then on its own thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def run(
    dataset: str | Path | Sequence[Sample | Mapping[str, Any]],
    system: Any,
    *,
    metrics: Sequence[str] | None = None,
    k: int | None = None,
    config: RagmeterConfig | str | Path | None = None,
    concurrency: int = 4,
    timeout_seconds: float = 30.0,
    retries: int = 2,
    results_dir: str | Path | None = None,
    progress: bool = False,
    **options: Any,
) -> EvalResult:
    """Ask every question of ``dataset`` to ``system`` and score the answers (see the module docstring).

    ``options`` are the framework system's suite keys (docs/frameworks.md), e.g.
    ``metadata={"rel_path": "source"}`` or, for a Haystack pipeline,
    ``retriever="bm25"``. With ``results_dir`` the outputs are written there as
    ``outputs.jsonl`` and the evaluation next to them. ``progress`` shows the progress on stderr
    (a bar on a terminal, plain lines in logs).
    """
    from ragmeter.api import evaluate

    samples, _ = load_samples(dataset)
    cfg, _ = load_config(config) if not isinstance(config, RagmeterConfig) else (config, None)
    default_k = k or cfg.metrics.retrieval.default_k
    adapter, described = system_adapter(system, options)
    if described["kind"] != "python":
        missing = [s.id for s in samples if question_of(s) is None]
        if missing:
            raise InputError(f"sample {missing[0]!r} has no question (give 'input' or 'input.question')")
    settings = RunSettings(
        concurrency=concurrency, timeout_seconds=timeout_seconds, retries=retries, default_k=default_k
    )
    folder = Path(results_dir) if results_dir is not None else None
    memory = MemoryJournal()
    sink = QuestionProgress(make_progress(quiet=not progress))
    try:
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            with OutputsJournal(folder / OUTPUTS_FILENAME) as journal:
                summary = _ask(adapter, samples, settings, _Tee(journal, memory), sink)
        else:
            summary = _ask(adapter, samples, settings, memory, sink)
    except RunAborted as exc:
        raise ConfigError(exc.message) from None
    result = evaluate(samples, memory.outputs, metrics=metrics, k=k, config=cfg)
    warnings = list(result.warnings)
    if summary.n_errors or summary.n_timeouts:
        warnings.insert(
            0,
            f"{summary.n_errors + summary.n_timeouts} of {summary.n_called} calls failed "
            f"({summary.n_timeouts} timed out); first: {'; '.join(summary.first_errors[:3])}",
        )
    provenance = {**result.provenance, "system": described, "run": summary.to_json_dict()}
    result = result.model_copy(update={"warnings": warnings, "provenance": provenance})
    if folder is not None:
        result.write(folder)
    return result


class _Tee:
    def __init__(self, *journals: Any) -> None:
        self.journals = journals

    def append(self, sample_id: str, output: dict[str, Any]) -> None:
        for journal in self.journals:
            journal.append(sample_id, output)


def _ask(
    adapter: Adapter, samples: list[Sample], settings: RunSettings, journal: Any, sink: Any
) -> RunSummary:
    return _run_coroutine(
        call_all(
            adapter,
            samples,
            settings=settings,
            journal=journal,
            progress=sink,
            total=len(samples),
            done=0,
        )
    )
