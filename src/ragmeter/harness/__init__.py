"""The harness: run a suite against a system under test, record every answer, score the run.

The flow is one way::

    suite.yaml ─ load_suite ─▶ adapter (http | python | builtin)
                                  │  run_calls: bounded concurrency, timeouts, retries
                                  ▼
                      <results>/outputs.jsonl  (fsync'd per answer; --resume continues)
                                  │  ragmeter.api.evaluate
                                  ▼
            metrics.json + per_query.jsonl + config.json (+ index_stats.json)

:func:`run_suite` does all of it; the pieces are importable for other uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragmeter.harness.suite import LoadedSuite, Suite, load_suite
    from ragmeter.harness.suite_run import RunOutcome, run_suite

__all__ = ["LoadedSuite", "RunOutcome", "Suite", "load_suite", "run_suite"]


def __getattr__(name: str) -> Any:
    # Lazy, so `import ragmeter.harness.suite` does not pull in httpx or the runner.
    if name in {"RunOutcome", "run_suite"}:
        from ragmeter.harness import suite_run as module

        return getattr(module, name)
    if name in {"LoadedSuite", "Suite", "load_suite"}:
        from ragmeter.harness import suite

        return getattr(suite, name)
    raise AttributeError(f"module 'ragmeter.harness' has no attribute {name!r}")
