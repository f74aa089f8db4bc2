"""Operational and performance metrics: errors, timeouts, empty answers, latency, tokens, cost.

Per query these are 0/1 flags or measured numbers; the registry says how each
is aggregated (the mean, or a percentile for latency). Percentiles use numpy's
default *linear* method (``numpy.percentile(values, q)``). A sample without a
recorded output counts as an error (``error_rate`` 1) and is unscored for the
measured numbers.

>>> from ragmeter.schema.outputs import SystemOutput
>>> is_error(SystemOutput.from_raw({"error": "HTTP 500"})), is_error(None), is_empty(SystemOutput.from_raw({"answer": " "}))
(True, True, True)
>>> round(percentile([0.2, 0.4, 1.0, 3.0], 95), 6)
2.7
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.errors import ConfigError, MissingFieldError
from ragmeter.metrics.inputs import SampleScores, ScoringInput
from ragmeter.metrics.names import MetricName
from ragmeter.metrics.rag import NO_OUTPUT, ScoreBuilder, batch_of
from ragmeter.metrics.records import RagBatch
from ragmeter.metrics.relevance import Int64Array

if TYPE_CHECKING:  # annotations only: the metrics load without the pydantic models
    from ragmeter.schema.outputs import SystemOutput

OPERATIONAL_FAMILIES = frozenset(
    {"error_rate", "timeout_rate", "empty_response_rate", "latency_p50", "latency_p95", "tokens_prompt",
     "tokens_completion", "cost"}
)  # fmt: skip
"""Metric families whose presence adds the run-level ``operational`` section to a result."""

STAGES = ("folder_selection", "retrieval", "generation", "judge", "total")
"""The usual ``timings`` stages, in report order (any other stage name works too)."""


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile with numpy's default linear interpolation."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def is_error(output: SystemOutput | None) -> bool:
    """No recorded output, a non-blank ``error``, or ``timed_out: true``."""
    return output is None or output.failed()


def is_empty(output: SystemOutput | None) -> bool:
    """A call that did not fail and did not abstain, but whose ``answer`` is missing or blank."""
    if output is None or output.failed() or output.abstained:
        return False
    return output.answer is None or not output.answer.strip()


def _flags(inp: ScoringInput, metric: MetricName, flag: Any) -> SampleScores:
    batch = batch_of(inp, metric)
    out = ScoreBuilder(len(batch.samples))
    for q, output in enumerate(batch.outputs):
        out.set(q, flag(output))
    return out.done()


def error_rate(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1 when the call failed (error, timeout) or no output was recorded, else 0."""
    return _flags(inp, metric, is_error)


def timeout_rate(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1 when the output says ``timed_out: true``, else 0."""
    return _flags(inp, metric, lambda o: o is not None and bool(o.timed_out))


def empty_response_rate(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1 when a call that did not fail or abstain returned no answer (missing or blank), else 0."""
    batch = batch_of(inp, metric)
    if not batch.any_output(lambda o: o.has_field("answer")):
        raise MissingFieldError(f"metric {metric} needs 'answer' in the outputs; none of them has it")
    return _flags(inp, metric, is_empty)


def _measured(inp: ScoringInput, metric: MetricName, field: str, read: Any) -> SampleScores:
    batch = batch_of(inp, metric)
    out = ScoreBuilder(len(batch.samples))
    for q, output in enumerate(batch.outputs):
        value = None if output is None else read(output)
        if value is not None:
            out.set(q, float(value))
        else:
            out.skip(q, NO_OUTPUT if output is None else f"no {field!r} in the output")
    if not out.scored.any() and batch.any_output(lambda o: True):
        raise MissingFieldError(f"metric {metric} needs {field!r} in the outputs; none of them has it")
    return out.done()


def latency(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """Seconds: the harness's wall clock ``latency``, or ``timings[stage]`` for ``latency_pNN.<stage>``."""
    stage = metric.qualifier
    if stage is None:
        return _measured(inp, metric, "latency", lambda o: o.latency)
    return _measured(inp, metric, f"timings.{stage}", lambda o: (o.timings or {}).get(stage))


def tokens_prompt(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """Prompt tokens of the call (``tokens.prompt``)."""
    return _measured(inp, metric, "tokens.prompt", lambda o: o.tokens.prompt if o.tokens else None)


def tokens_completion(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """Completion tokens of the call (``tokens.completion``)."""
    return _measured(inp, metric, "tokens.completion", lambda o: o.tokens.completion if o.tokens else None)


def cost(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """Estimated cost: tokens priced by the output's ``model`` in the config's ``pricing`` (or its ``default``)."""
    batch = batch_of(inp, metric)
    if not batch.pricing:
        raise ConfigError(
            f"metric {metric} needs a price table: 'pricing: {{MODEL: {{prompt_per_1k: ..., completion_per_1k: ...}}}}' "
            "in the config (a 'default' entry prices every model)"
        )
    out = ScoreBuilder(len(batch.samples))
    for q, (sample, output) in enumerate(zip(batch.samples, batch.outputs, strict=True)):
        if output is None:
            out.skip(q, NO_OUTPUT)
            continue
        tokens = output.tokens
        if tokens is None or tokens.prompt is None or tokens.completion is None:
            out.skip(q, "no 'tokens.prompt' and 'tokens.completion' in the output")
            continue
        price = batch.pricing.get(output.model or "default") or batch.pricing.get("default")
        if price is None:
            raise ConfigError(
                f"no price for model {output.model!r} in 'pricing' (add it, or a 'default' entry)",
                where=f"sample {sample.id!r}",
            )
        out.set(q, price.cost(tokens.prompt, tokens.completion))
    if not out.scored.any() and batch.any_output(lambda o: True):
        raise MissingFieldError(
            f"metric {metric} needs 'tokens' (prompt and completion) in the outputs; none has them"
        )
    return out.done()


def stages_in(batch: RagBatch) -> list[str]:
    """Every ``timings`` stage recorded in the outputs: the usual ones in order, then the rest sorted."""
    seen = {stage for o in batch.outputs if o is not None and o.timings for stage in o.timings}
    return [s for s in STAGES if s in seen] + sorted(seen - set(STAGES))


def _sum_mean(values: list[float]) -> dict[str, float | int | None]:
    return {
        "sum": float(sum(values)) if values else None,
        "mean": float(np.mean(values)) if values else None,
        "n": len(values),
    }


def operational_summary(batch: RagBatch, cost_values: list[float] | None = None) -> dict[str, Any]:
    """Run-level totals: counts of outputs, failures, timeouts, empty answers; token and cost sums; suite time.

    ``suite_seconds`` is the sum of the per-question ``latency`` (the wall clock
    of a sequential run).
    """
    outputs = batch.outputs
    recorded = [o for o in outputs if o is not None]
    prompt = [float(o.tokens.prompt) for o in recorded if o.tokens and o.tokens.prompt is not None]
    completion = [
        float(o.tokens.completion) for o in recorded if o.tokens and o.tokens.completion is not None
    ]
    latencies = [o.latency for o in recorded if o.latency is not None]
    summary: dict[str, Any] = {
        "n_queries": len(outputs),
        "n_outputs": len(recorded),
        "n_errors": sum(is_error(o) for o in outputs),
        "n_timeouts": sum(bool(o.timed_out) for o in recorded),
        "n_empty_answers": sum(is_empty(o) for o in recorded),
        "tokens": {"prompt": _sum_mean(prompt), "completion": _sum_mean(completion)},
        "suite_seconds": float(sum(latencies)) if latencies else None,
    }
    if cost_values is not None:
        summary["cost"] = _sum_mean(cost_values)
    return summary
