"""Judging the answers of an evaluation: judge items from samples and outputs, one judge run, verdicts per query.

:func:`ragmeter.evaluate` calls :func:`judge_answers` when a judge is configured
(the ``judge=`` argument, else the config file's ``judge:`` block) or a judge
metric is requested, with the plan made by :func:`~ragmeter.judges.eval_plan.plan_judging`.
For every sample with a usable answer it builds one judge item — the question
(``input.question``, ``input.query`` or a string input), the answer, the texts of
the top-k retrieved chunks as context, ``metadata.expected_answer`` and the output's
own ``abstained`` flag — and runs one :func:`~ragmeter.judges.runner.run_judges`
(cache, resumable log, budget, reliability spot-check).

Failed or timed-out calls are not judged. Every verdict comes back as a
:class:`~ragmeter.metrics.inputs.JudgedValue` aligned with the samples: a value,
or why there is none — never 0.

>>> AnswerJudgements({"groundedness": [JudgedValue(None, NO_QUESTION)]}).values["groundedness"][0].value is None
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from ragmeter.errors import ConfigError
from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.conflict import METRIC as CONFLICT_VERDICT
from ragmeter.judges.eval_plan import (
    ABSTENTION_JUDGE,
    CONFLICT_JUDGE,
    EVAL_JUDGES,
    JUDGE_OF_METRIC,
    JudgingPlan,
)
from ragmeter.judges.factual import fuzzy_outcome
from ragmeter.judges.items import JudgeItem, outcome_key
from ragmeter.judges.results import UNSCORED_CODES, CostEstimate, JudgeOutcome, JudgeRun
from ragmeter.judges.runner import RunHooks, run_judges
from ragmeter.metrics.inputs import JudgedValue
from ragmeter.metrics.rag import CALL_FAILED, NO_OUTPUT, UNANSWERABLE
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.samples import Sample

NEEDS_QUESTION = frozenset({"correctness", "factual_match", ABSTENTION_JUDGE})
NO_ANSWER_FIELD = "no answer: the output has no 'answer' field"
NO_QUESTION = "no question: the sample's input has no question text"
DEFAULT_LOG_NAME = "judge_log.jsonl"
"""The judge log's name inside ``--out`` (the CLI's default ``judge_log``)."""


class JudgeObserver(Protocol):
    """What a caller (the CLI) hears while judges run: the estimate, progress, the end."""

    def estimated(
        self, estimate: CostEstimate, *, n_items: int, max_cost_usd: float | None, spot_check: bool
    ) -> None:
        """Before any call: what the run could cost (an upper bound; ``spot_check``: plus its re-judging)."""

    def progress(self, phase: str, done: int, total: int) -> None:
        """``phase`` (``judging`` / ``spot-check``) has ``done`` of ``total`` judgements."""

    def finished(self, run: JudgeRun) -> None:
        """The run is over (also when the budget stopped it)."""


@dataclass
class AnswerJudgements:
    """What judging an evaluation produced, aligned with its samples."""

    values: dict[str, list[JudgedValue]]
    """Judge metric (``groundedness``, ``fuzzy_match``, ``abstained``, …) → one verdict per sample."""
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Sample id → keys for its ``per_query.jsonl`` line (``judges``, ``abstained_source``)."""
    reliability: dict[str, dict[str, Any]] = field(default_factory=dict)
    provenance: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _verdict(outcome: JudgeOutcome) -> JudgedValue:
    if outcome.value is not None:
        return JudgedValue(outcome.value)
    code = outcome.unscored_code or "unscored"
    return JudgedValue(None, f"{code}: {UNSCORED_CODES.get(code, outcome.unscored_reason or code)}")


def _contexts(output: SystemOutput, k: int) -> list[str]:
    return [item.text for item in output.retrieved[:k] if item.text is not None and item.text.strip()]


@dataclass
class _Prepared:
    items: list[JudgeItem]
    blocked: dict[tuple[int, str], str]
    """(sample index, judge or metric) → why it is not judged."""


def _prepare(
    samples: Sequence[Sample],
    outputs: Sequence[SystemOutput | None],
    sample_k: Sequence[int],
    plan: JudgingPlan,
) -> _Prepared:
    items: list[JudgeItem] = []
    blocked: dict[tuple[int, str], str] = {}
    answer_like = [*plan.answer_judges, *(["fuzzy_match"] if plan.fuzzy else [])]
    for q, (sample, output) in enumerate(zip(samples, outputs, strict=True)):
        wanted = list(answer_like)
        abstention = sample.answerable in plan.abstention_for and (output is None or output.abstained is None)
        if abstention:
            wanted.append(ABSTENTION_JUDGE)
        if plan.conflict and sample.recency_conflict_rule == "acknowledge_both":
            wanted.append(CONFLICT_JUDGE)
        if not wanted:
            continue
        problem = None
        if output is None:
            problem = NO_OUTPUT
        elif output.failed():
            problem = CALL_FAILED
        elif output.answer is None:
            problem = NO_ANSWER_FIELD
        if problem is not None or output is None:
            for name in wanted:
                blocked[(q, name)] = problem or NO_OUTPUT
            continue
        question = sample.question()
        chosen = []
        for name in wanted:
            if name not in (ABSTENTION_JUDGE, CONFLICT_JUDGE) and not sample.answerable:
                blocked[(q, name)] = UNANSWERABLE
            elif name in NEEDS_QUESTION and question is None:
                blocked[(q, name)] = NO_QUESTION
            else:
                chosen.append(name)
        if not chosen:
            continue
        items.append(
            JudgeItem(
                id=sample.id,
                question=question or "",
                answer=output.answer or "",
                contexts=_contexts(output, sample_k[q]),
                expected_answer=sample.metadata.expected_answer,
                abstained=output.abstained,
                judges=tuple(n for n in chosen if n != "fuzzy_match"),
            )
        )
    return _Prepared(items, blocked)


def _run(
    items: Sequence[JudgeItem],
    *,
    cfg: JudgeConfig,
    judges: Sequence[str],
    log_path: Path | None,
    reliability: bool | None,
    hooks: RunHooks,
    warnings: list[str],
) -> JudgeRun:
    """One :func:`run_judges`; a log written with another judge setup is kept aside, not refused."""

    def once() -> JudgeRun:
        return run_judges(
            items,
            config=cfg,
            judges=judges,
            log_path=log_path,
            resume=True,
            reliability=reliability,
            hooks=hooks,
        )

    try:
        return once()
    except ConfigError as exc:
        if log_path is None or exc.where != str(log_path) or not log_path.is_file():
            raise
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    kept = log_path.with_name(f"{log_path.stem}.{stamp}{log_path.suffix}")
    log_path.rename(kept)
    warnings.append(
        f"judge: {log_path} was written with another judge setup (endpoint, model, decoding, prompts or "
        f"judges); kept it as {kept.name} and started a new log (cached judgements are still reused)"
    )
    return once()


def _warnings(run: JudgeRun) -> list[str]:
    out = list(run.notes)
    usage = run.usage
    if usage.budget_exhausted:
        left = sum(1 for o in run.outcomes if o.unscored_code == "budget_exhausted")
        out.append(
            f"judge: {usage.budget_message}; stopped with {left} judgement(s) not made (budget_exhausted). "
            "What was judged is kept in the judge log and cache: run again with a higher --max-cost / "
            "max_cost_usd to judge the rest"
        )
    for code in ("call_failed", "request_rejected", "unparseable_reply"):
        by_judge: dict[str, int] = {}
        for o in [*run.outcomes, *run.reliability_outcomes]:
            if o.unscored_code == code:
                by_judge[o.judge] = by_judge.get(o.judge, 0) + 1
        if by_judge:
            counts = ", ".join(f"{n} {judge}" for judge, n in sorted(by_judge.items()))
            out.append(f"judge: {counts} unscored ({code}: {UNSCORED_CODES[code]}); see per_query.jsonl")
    if usage.unpriced_calls:
        out.append(
            f"judge: no price is known for the judge model, so the cost of {usage.unpriced_calls} call(s) is "
            "unknown; add it under judge.prices"
        )
    return out


def _dump(outcome: JudgeOutcome) -> dict[str, Any]:
    return outcome.model_dump(mode="json", exclude={"key", "item_id", "result_id"})


def judge_answers(
    samples: Sequence[Sample],
    outputs: Sequence[SystemOutput | None],
    *,
    plan: JudgingPlan,
    config: JudgeConfig | None,
    sample_k: Sequence[int],
    log_path: Path | None = None,
    reliability: bool | None = None,
    observer: JudgeObserver | None = None,
) -> AnswerJudgements:
    """Judge the answers of an evaluation as ``plan`` says; verdicts per judge metric, per sample.

    ``sample_k`` is each sample's k (the top-k chunk texts are the context).
    Without ``config`` only the fuzzy match (no LLM) can run.
    """
    threshold = float(
        config.fuzzy_threshold if config is not None else JudgeConfig.model_fields["fuzzy_threshold"].default
    )
    prepared = _prepare(samples, outputs, sample_k, plan)
    llm_items = [i for i in prepared.items if i.judges]
    judges = [
        j
        for j in (*EVAL_JUDGES, ABSTENTION_JUDGE, CONFLICT_JUDGE)
        if any(j in (i.judges or ()) for i in llm_items)
    ]
    warnings: list[str] = []
    run = None
    if config is not None and judges:
        spot_check = config.reliability is not None if reliability is None else reliability

        def announce(estimate: CostEstimate) -> None:
            if observer is not None:
                observer.estimated(
                    estimate, n_items=len(llm_items), max_cost_usd=config.max_cost_usd, spot_check=spot_check
                )

        hooks = RunHooks(
            before_calls=announce,
            progress=observer.progress if observer is not None else None,
            check_endpoints=True,
        )
        run = _run(
            llm_items,
            cfg=config,
            judges=judges,
            log_path=log_path,
            reliability=reliability,
            hooks=hooks,
            warnings=warnings,
        )
        if observer is not None:
            observer.finished(run)
    by_item: dict[str, dict[str, JudgeOutcome]] = {}
    for outcome in run.outcomes if run is not None else []:
        by_item.setdefault(outcome.item_id, {})[outcome.metric] = outcome
    spot: dict[str, dict[str, JudgeOutcome]] = {}
    for outcome in run.reliability_outcomes if run is not None else []:
        spot.setdefault(outcome.item_id, {})[outcome.judge] = outcome
    items = {i.id: i for i in prepared.items}
    metrics = [
        *(m for m, j in JUDGE_OF_METRIC.items() if j is not None and j in plan.answer_judges),
        *(["fuzzy_match"] if plan.fuzzy else []),
        *(["abstained"] if plan.abstention_for else []),
        *([CONFLICT_VERDICT] if plan.conflict else []),
    ]
    values: dict[str, list[JudgedValue]] = {m: [] for m in metrics}
    details: dict[str, dict[str, Any]] = {}
    for q, sample in enumerate(samples):
        item = items.get(sample.id)
        found = dict(by_item.get(sample.id, {}))
        if (
            plan.fuzzy
            and item is not None
            and "fuzzy_match" not in found
            and (q, "fuzzy_match") not in prepared.blocked
        ):
            key = outcome_key("fuzzy_match", item.id)
            found["fuzzy_match"] = fuzzy_outcome(item, key=key, threshold=threshold)
        for metric in metrics:
            judge = {"abstained": ABSTENTION_JUDGE, CONFLICT_VERDICT: CONFLICT_JUDGE}.get(metric) or (
                JUDGE_OF_METRIC[metric] or metric
            )
            if metric in found:
                values[metric].append(_verdict(found[metric]))
            else:
                values[metric].append(JudgedValue(None, prepared.blocked.get((q, judge), "")))
        line: dict[str, Any] = {}
        if found:
            line["judges"] = {o.judge: _dump(o) for o in found.values()}
        if sample.id in spot:
            line["judges_spot_check"] = {j: _dump(o) for j, o in spot[sample.id].items()}
        output = outputs[q]
        if sample.answerable in plan.abstention_for and output is not None:
            if output.abstained is not None:
                line["abstained_source"] = "output"
            elif values["abstained"][q].value is not None:
                line["abstained_source"] = "judge"
        if line:
            details[sample.id] = line
    provenance: dict[str, Any] = {"judges": judges, "fuzzy_threshold": threshold}
    reliability_stats: dict[str, dict[str, Any]] = {}
    if run is not None:
        run_info = {k: v for k, v in run.provenance.items() if k != "ragmeter_version"}
        provenance |= run_info
        provenance["usage"] = run.usage.model_dump(mode="json")
        provenance["estimate"] = run.estimate.model_dump(mode="json") if run.estimate is not None else None
        provenance["summary"] = {m: s.model_dump(mode="json") for m, s in run.summary.items()}
        provenance["resumed"] = run.resumed
        reliability_stats = {m: s.model_dump(mode="json") for m, s in run.judge_reliability.items()}
        warnings.extend(_warnings(run))
    return AnswerJudgements(values, details, reliability_stats, provenance, warnings)
