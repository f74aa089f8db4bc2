"""The ``builtin`` system: ragmeter's reference pipeline (:class:`ragmeter.pipeline.ReferencePipeline`).

The index is built once before the first question; answers run on threads
(the pipeline is safe to share). The pipeline is imported only here, so runs
of other systems do not pay for it. Its index statistics are written to the
results folder as ``index_stats.json`` and scored as index coverage.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.extras import MissingExtraError
from ragmeter.harness.calls import CallFailed, call_in_thread, describe_exception, question_of
from ragmeter.harness.suite import BuiltinSystem, LoadedSuite
from ragmeter.schema.samples import Sample


class BuiltinAdapter:
    """Runs the reference pipeline in-process."""

    def __init__(self, pipeline: Any, *, description: str) -> None:
        self._pipeline = pipeline
        self.description = description

    @classmethod
    def from_suite(cls, loaded: LoadedSuite, system: BuiltinSystem, *, default_k: int) -> BuiltinAdapter:
        """Configure the pipeline from the suite (paths relative to the suite file)."""
        from ragmeter.pipeline import ReferencePipeline

        try:
            pipeline = ReferencePipeline(system.pipeline_settings(loaded.resolve), k=default_k)
        except ConfigError as exc:  # load_suite validated the settings; this is a backstop
            raise loaded.error(["system"], str(exc)) from None
        return cls(pipeline, description=f"builtin pipeline on {system.vault}")

    def provenance(self) -> dict[str, Any]:
        """The pipeline's full configuration, defaults included (for ``config.json``)."""
        config = getattr(self._pipeline, "config", None)
        dump = getattr(config, "model_dump", None)
        return {"pipeline_config": dump(mode="json")} if callable(dump) else {}

    async def start(self) -> None:
        """Build (or load) the index."""
        try:
            await call_in_thread(self._pipeline.build_index)
        except MissingExtraError:
            raise
        except Exception as exc:
            raise ConfigError(
                f"building the index of the builtin pipeline failed: {describe_exception(exc)}"
            ) from None

    async def aclose(self) -> None:
        """Nothing to close."""

    async def call(self, sample: Sample, *, k: int) -> Any:
        """Answer one question with the pipeline."""
        question = question_of(sample) or ""
        try:
            return await call_in_thread(lambda: self._pipeline.answer(question, k=k))
        except Exception as exc:
            raise CallFailed(describe_exception(exc)) from None

    def write_index_stats(self, path: Path) -> Path:
        """Write the index statistics (building the index first if needed)."""
        written: Path = self._pipeline.write_index_stats(path)
        return written
