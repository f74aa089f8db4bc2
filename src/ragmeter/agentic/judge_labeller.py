"""A :class:`~ragmeter.agentic.gains.GainLabeller` backed by the LLM relevance judge.

Each unique result (a dedup cluster, never a duplicate) is labelled 0-4 against
the user's task through :func:`ragmeter.judges.label_relevance`, so the judge's
cache, retries, cost tracking and pinning all apply. A reply that cannot be
used becomes :class:`~ragmeter.agentic.gains.Unscored` with the judge's reason.

>>> labeller = JudgeLabeller({"base_url": "http://127.0.0.1:9/v1", "model": "m", "cache": False})
>>> labeller.name
'judge:m/relevance'
>>> labeller.label(None, [])
[]
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.agentic.gains import UniqueResult, Unscored
from ragmeter.judges import load_judge_config
from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.results import JudgeRun


class JudgeLabeller:
    """Label unique search results with the relevance judge (0-4 gains against the task)."""

    def __init__(self, config: JudgeConfig | Mapping[str, Any] | str | Path) -> None:
        from ragmeter.judges.runner import RunHooks
        from ragmeter.judges.session import ServerModels

        self.config = load_judge_config(config)
        self.runs: list[JudgeRun] = []
        # one GET /models per endpoint for every trace labelled, and one line when nothing answers
        self._hooks = RunHooks(check_endpoints=True, server_models=ServerModels())

    @property
    def name(self) -> str:
        """The judge model and prompt, for provenance."""
        return f"judge:{self.config.model}/relevance"

    def label(self, task: str | None, results: Sequence[UniqueResult]) -> list[float | Unscored]:
        """One gain or :class:`Unscored` per result, in order."""
        from ragmeter.judges import label_relevance

        if not results:
            return []
        if not task or not task.strip():
            return [Unscored("the trace has no user task to judge relevance against")] * len(results)
        task_id = "task-" + hashlib.sha256(task.encode("utf-8")).hexdigest()[:16]
        pairs = [
            {
                "id": task_id,
                "result_id": str(index),
                "task": task,
                "text": result.snippet or "",
                "title": result.title,
                "url": result.url,
            }
            for index, result in enumerate(results)
        ]
        run = label_relevance(pairs, config=self.config, resume=False, hooks=self._hooks)
        self.runs.append(run)
        by_result = {o.result_id: o for o in run.outcomes if o.metric == "relevance"}
        gains: list[float | Unscored] = []
        for index in range(len(results)):
            outcome = by_result.get(str(index))
            if outcome is None:
                gains.append(Unscored("the relevance judge returned no outcome"))
            elif outcome.value is None:
                gains.append(Unscored(outcome.unscored_reason or outcome.unscored_code or "unscored"))
            else:
                gains.append(float(outcome.value))
        return gains

    def usage(self) -> dict[str, Any]:
        """Calls, cache hits, tokens and cost over every labelling call so far."""
        total: dict[str, Any] = {"labelling_calls": len(self.runs)}
        for run in self.runs:
            for key, value in run.usage.model_dump().items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    total[key] = total.get(key, 0) + value
        return total
