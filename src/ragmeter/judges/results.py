"""What the judges return: one :class:`JudgeOutcome` per (item, judge), with its calls and provenance.

An outcome is *scored* (a number in ``value``) or *unscored* (``value`` is
``None`` and ``unscored_code`` / ``unscored_reason`` say why) — never 0 or NaN
for a failure. Every outcome carries the judge input payload (``inputs``), and
each of its calls the exact request body and the raw reply text, so any
judgement can be audited or re-judged later.

>>> o = JudgeOutcome(key="groundedness:q1", item_id="q1", judge="groundedness", metric="groundedness",
...                  value=None, unscored_code="no_context", unscored_reason="no context chunks given")
>>> o.status
'unscored'
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

UNSCORED_CODES = {
    "empty_answer": "the answer is empty",
    "no_context": "no context chunks were given",
    "no_expected_answer": "the sample has no expected answer",
    "empty_result": "the search result has no text",
    "no_claims": "the answer makes no factual claim to check",
    "unparseable_reply": "the judge's reply could not be parsed, even after one repair request",
    "call_failed": "the judge endpoint failed (errors, rate limits or timeouts) after all retries",
    "request_rejected": "the judge endpoint rejected the request (HTTP 4xx)",
    "budget_exhausted": "max_cost_usd was reached before this item was judged",
}
"""Every reason an outcome can be unscored, with its meaning (also in docs/judges.md)."""

RETRYABLE_CODES = frozenset({"call_failed", "budget_exhausted"})
"""Unscored codes that a resumed run judges again; the others are final."""


class JudgeCall(BaseModel):
    """One judge call (possibly answered from the cache): request, raw replies, usage, cost."""

    model_config = ConfigDict(extra="forbid")

    purpose: str = Field(description="judge, verify, …")
    prompt: dict[str, str] = Field(description="id, version, sha256 of the prompt file")
    endpoint: str
    model_requested: str
    model_reported: str | None = None
    system_fingerprint: str | None = None
    request: dict[str, Any] = Field(description="The exact body of the first request.")
    raw_replies: list[str] = Field(default_factory=list, description="Reply text of the call and its repair.")
    repair_reason: str | None = None
    parsed: dict[str, Any] | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    cache_hit: bool = False
    cache_key: str
    http_attempts: int = 0
    latency_s: float = 0.0
    error: str | None = None


class JudgeOutcome(BaseModel):
    """The result of one judge on one item (or one relevance pair)."""

    model_config = ConfigDict(extra="forbid")

    key: str
    item_id: str
    result_id: str | None = None
    judge: str
    metric: str
    role: Literal["primary", "reliability"] = "primary"
    value: float | None
    unscored_code: str | None = None
    unscored_reason: str | None = None
    source: Literal["judge", "field", "fuzzy", "verification", "input"] = "judge"
    details: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, Any] = Field(default_factory=dict, description="The judge input payload.")
    calls: list[JudgeCall] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _drop_status(cls, data: Any) -> Any:
        # ``status`` is computed; accept dumps that contain it (logs, saved runs).
        if isinstance(data, dict) and "status" in data:
            data = {k: v for k, v in data.items() if k != "status"}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> JudgeOutcome:
        if (self.value is None) != (self.unscored_code is not None):
            raise ValueError("an outcome has a value or an unscored_code, exactly one of them")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def status(self) -> Literal["scored", "unscored"]:
        """``scored`` or ``unscored``."""
        return "scored" if self.value is not None else "unscored"

    @property
    def retryable(self) -> bool:
        """Whether a resumed run should judge this item again."""
        return self.unscored_code in RETRYABLE_CODES


class MetricSummary(BaseModel):
    """Aggregate of one judge metric: the mean over scored items and what could not be scored."""

    mean: float | None
    n_scored: int
    n_unscored: int
    unscored_by_code: dict[str, int] = Field(default_factory=dict)
    n_disagreements: int | None = Field(
        default=None,
        description="factual_match only: fuzzy match and judge disagreed (verification decided).",
    )


class UsageTotals(BaseModel):
    """Calls, cache hits, tokens and cost of a run (cache hits cost nothing)."""

    calls: int = 0
    http_attempts: int = 0
    cache_hits: int = 0
    from_log: int = Field(
        default=0, description="Calls whose judgements came from the judge log of an earlier run."
    )
    seconds: float = Field(default=0.0, description="Wall-clock seconds ragmeter spent judging in this run.")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls_without_usage: int = 0
    cost_usd: float | None = Field(default=0.0, description="None when any call's model has no known price.")
    unpriced_calls: int = 0
    max_cost_usd: float | None = None
    budget_exhausted: bool = False
    budget_message: str | None = None

    def add(self, call: JudgeCall) -> None:
        """Count one call."""
        if call.cache_hit:
            self.cache_hits += 1
            return
        self.http_attempts += call.http_attempts
        if not call.raw_replies:
            return
        self.calls += len(call.raw_replies)
        if call.prompt_tokens is None or call.completion_tokens is None:
            self.calls_without_usage += 1
        else:
            self.prompt_tokens += call.prompt_tokens
            self.completion_tokens += call.completion_tokens
        if call.cost_usd is None:
            self.unpriced_calls += 1
            self.cost_usd = None
        elif self.cost_usd is not None:
            self.cost_usd = round(self.cost_usd + call.cost_usd, 12)


class CostEstimate(BaseModel):
    """What a run would cost before it starts (an upper bound: full ``max_tokens`` per reply)."""

    planned_calls: int
    cached_calls: int
    logged_calls: int = Field(
        default=0,
        description="Calls whose judgements a resumed run takes from its judge log (not made again).",
    )
    possible_extra_calls: int = Field(description="Verification passes that run only on disagreement.")
    prompt_tokens_estimate: int
    completion_tokens_max: int
    cost_usd_max: float | None
    priced: bool
    note: str = "prompt tokens estimated at 1 per 3 characters; replies at max_tokens each"


class ReliabilityStats(BaseModel):
    """The judge reliability spot-check of one metric (``judge_reliability`` in results)."""

    disagreement_rate: float | None
    kappa: float | None = Field(description="Cohen's kappa (unweighted) between the two judges.")
    spot_check_n: int = Field(description="Items both judges scored (used for the two numbers above).")
    n_selected: int
    n_unscored: int
    rule: str
    second_judge: dict[str, Any]
    seed: int
    note: str | None = None


class JudgeRun(BaseModel):
    """Everything a judge run produced."""

    outcomes: list[JudgeOutcome]
    reliability_outcomes: list[JudgeOutcome] = Field(default_factory=list)
    summary: dict[str, MetricSummary]
    usage: UsageTotals
    estimate: CostEstimate | None = None
    judge_reliability: dict[str, ReliabilityStats] = Field(default_factory=dict)
    provenance: dict[str, Any]
    resumed: int = Field(default=0, description="Outcomes taken from the log of an earlier run.")
    notes: list[str] = Field(default_factory=list, description="What reading the log repaired.")

    def values(self) -> dict[str, dict[str, float | None]]:
        """``item_id -> metric -> value`` (``None`` = unscored); relevance uses ``item_id/result_id``."""
        out: dict[str, dict[str, float | None]] = {}
        for o in self.outcomes:
            item = o.item_id if o.result_id is None else f"{o.item_id}/{o.result_id}"
            out.setdefault(item, {})[o.metric] = o.value
        return out

    def gains(self) -> dict[str, dict[str, int | None]]:
        """Relevance runs: ``item_id -> result_id -> gain`` (``None`` = unscored)."""
        out: dict[str, dict[str, int | None]] = {}
        for o in self.outcomes:
            if o.metric == "relevance" and o.result_id is not None:
                out.setdefault(o.item_id, {})[o.result_id] = None if o.value is None else int(o.value)
        return out


def summarise(outcomes: list[JudgeOutcome]) -> dict[str, MetricSummary]:
    """Per-metric mean over scored outcomes and counts of the unscored, by code.

    >>> a = JudgeOutcome(key="a", item_id="1", judge="g", metric="g", value=4.0)
    >>> b = JudgeOutcome(key="b", item_id="2", judge="g", metric="g", value=None,
    ...                  unscored_code="call_failed", unscored_reason="HTTP 500")
    >>> summarise([a, b])["g"].model_dump()
    {'mean': 4.0, 'n_scored': 1, 'n_unscored': 1, 'unscored_by_code': {'call_failed': 1}, 'n_disagreements': None}
    """
    by_metric: dict[str, list[JudgeOutcome]] = {}
    for o in outcomes:
        by_metric.setdefault(o.metric, []).append(o)
    summary = {}
    for metric, group in by_metric.items():
        scored = [o.value for o in group if o.value is not None]
        codes = Counter(o.unscored_code for o in group if o.unscored_code is not None)
        disagreements = None
        if metric == "factual_match":
            disagreements = sum(1 for o in group if o.details.get("disagreement"))
        summary[metric] = MetricSummary(
            mean=sum(scored) / len(scored) if scored else None,
            n_scored=len(scored),
            n_unscored=len(group) - len(scored),
            unscored_by_code=dict(sorted(codes.items())),
            n_disagreements=disagreements,
        )
    return summary
