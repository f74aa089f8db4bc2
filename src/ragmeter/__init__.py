"""ragmeter: measure retrieval, RAG and agentic search systems.

>>> import ragmeter
>>> r = ragmeter.evaluate([{"id": "q", "expected_output": ["a"]}], {"q": ["b", "a"]}, metrics=["mrr"])
>>> r.aggregate
{'mrr': 0.5}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from ragmeter.api import evaluate, evaluate_trec
    from ragmeter.harness.in_process import run
    from ragmeter.report.multi_compare import compare
    from ragmeter.results import EvalResult

__all__ = ["EvalResult", "__version__", "compare", "evaluate", "evaluate_trec", "run"]


def __getattr__(name: str) -> Any:
    # Lazy: `import ragmeter` stays cheap (the CLI imports what each command needs).
    if name in {"evaluate", "evaluate_trec"}:
        from ragmeter import api

        return getattr(api, name)
    if name == "run":
        from ragmeter.harness.in_process import run

        return run
    if name == "compare":
        from ragmeter.report.multi_compare import compare

        return compare
    if name == "EvalResult":
        from ragmeter.results import EvalResult

        return EvalResult
    raise AttributeError(f"module 'ragmeter' has no attribute {name!r}")
