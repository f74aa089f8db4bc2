"""The units of a judge run: one outcome to make per (item, judge) or (task, result) pair, and their cost.

A unit is made at once (an input problem, the system's own ``abstained`` flag, the
fuzzy match) or by judging with an :class:`~ragmeter.judges.engine.Engine`.
:func:`estimate_units` says what judging the units would cost, before any call.

>>> [u.judge for u in plan_items([JudgeItem(id="q", question="?", answer="a", abstained=True)],
...                               ["abstention"], JudgeConfig(base_url="http://127.0.0.1:9/v1", model="m"), None)]
['abstention']
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.judges import abstention, conflict, correctness, factual, groundedness, relevance
from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.costs import call_cost, estimate_prompt_tokens
from ragmeter.judges.engine import Engine
from ragmeter.judges.items import JudgeItem, RelevancePair, outcome_key
from ragmeter.judges.results import CostEstimate, JudgeOutcome

DEFAULT_JUDGES = ("groundedness", "correctness", "abstention", "factual_match")
"""The judges :func:`run_judges` runs unless told otherwise."""
ANSWER_JUDGES = (*DEFAULT_JUDGES, "conflict")
"""Every judge of answered questions (``conflict``: the ``acknowledge_both`` recency rule)."""

PROMPTS_OF = {
    "groundedness": ("groundedness",),
    "correctness": ("correctness",),
    "abstention": ("abstention",),
    "conflict": ("conflict",),
    "factual_match": ("factual_match", "factual_verify"),
    "relevance": ("relevance",),
}


@dataclass
class Unit:
    """One outcome to produce: immediately (``run`` is None) or by judging."""

    key: str
    unit_id: str
    judge: str
    immediate: JudgeOutcome | None = None
    run: Callable[[Engine], JudgeOutcome] | None = None
    prompts: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    possible_extra: int = 0


def check_judges(judges: Sequence[str]) -> list[str]:
    """``judges`` without repeats; an unknown or missing judge is a :class:`~ragmeter.errors.ConfigError`."""
    names = list(dict.fromkeys(judges))
    if not names:
        raise ConfigError("name at least one judge", where="judges")
    for name in names:
        if name not in ANSWER_JUDGES:
            close = difflib.get_close_matches(name, ANSWER_JUDGES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"unknown judge {name!r} (known: {', '.join(ANSWER_JUDGES)}){hint}", where="judges"
            )
    return names


def _unscored(key: str, item_id: str, judge: str, metric: str, problem: tuple[str, str]) -> JudgeOutcome:
    return JudgeOutcome(
        key=key,
        item_id=item_id,
        judge=judge,
        metric=metric,
        value=None,
        unscored_code=problem[0],
        unscored_reason=problem[1],
        source="input",
    )


_SINGLE_CALL: dict[str, Any] = {
    "groundedness": groundedness,
    "correctness": correctness,
    "abstention": abstention,
    "conflict": conflict,
}
"""Judges that are one prompt and one call (their modules have ``SPEC`` and ``variables_for``)."""


def _single(spec_module: Any, item: JudgeItem, tag: str | None) -> Unit:
    spec = spec_module.SPEC
    key = outcome_key(spec.name, item.id, tag=tag)
    variables = spec_module.variables_for(item)
    if isinstance(variables, tuple):
        unscored = _unscored(key, item.id, spec.name, spec.metric, variables)
        return Unit(key, item.id, spec.name, immediate=unscored)

    def run(engine: Engine) -> JudgeOutcome:
        return engine.judge(spec, key=key, item_id=item.id, variables=variables, inputs=variables)

    return Unit(key, item.id, spec.name, run=run, prompts=[(spec.name, variables)])


def _abstention_flag(item: JudgeItem, abstained: bool) -> Unit:
    key = outcome_key(abstention.NAME, item.id)
    outcome = JudgeOutcome(
        key=key,
        item_id=item.id,
        judge=abstention.NAME,
        metric=abstention.METRIC,
        value=1.0 if abstained else 0.0,
        source="field",
        details={"from": "the output's 'abstained' field"},
    )
    return Unit(key, item.id, abstention.NAME, immediate=outcome)


def _factual(item: JudgeItem, cfg: JudgeConfig, tag: str | None) -> list[Unit]:
    units = []
    if tag is None:  # the fuzzy match is deterministic: never re-judged
        fuzzy_key = outcome_key(factual.FUZZY, item.id)
        fuzzy = factual.fuzzy_outcome(item, key=fuzzy_key, threshold=cfg.fuzzy_threshold)
        units.append(Unit(fuzzy_key, item.id, factual.FUZZY, immediate=fuzzy))
    key = outcome_key(factual.NAME, item.id, tag=tag)
    variables = factual.variables_for(item)
    if isinstance(variables, tuple):
        unscored = _unscored(key, item.id, factual.NAME, factual.NAME, variables)
        return [*units, Unit(key, item.id, factual.NAME, immediate=unscored)]

    def run(engine: Engine) -> JudgeOutcome:
        return factual.judge_factual(engine, item, key=key, threshold=cfg.fuzzy_threshold)

    prompts = [(factual.NAME, variables)]
    return [*units, Unit(key, item.id, factual.NAME, run=run, prompts=prompts, possible_extra=1)]


def plan_items(
    items: Sequence[JudgeItem], judges: Sequence[str], cfg: JudgeConfig, tag: str | None
) -> list[Unit]:
    """The units of every (item, judge); ``tag`` marks the reliability re-run (judged units only)."""
    units: list[Unit] = []
    for item in items:
        for judge in judges:
            if item.judges is not None and judge not in item.judges:
                continue
            if judge == "factual_match":
                units.extend(_factual(item, cfg, tag))
            elif judge == "abstention" and item.abstained is not None:
                if tag is None:  # the system's own flag: nothing to judge or re-judge
                    units.append(_abstention_flag(item, item.abstained))
            else:
                units.append(_single(_SINGLE_CALL[judge], item, tag))
    return units


def plan_pairs(pairs: Sequence[RelevancePair], tag: str | None) -> list[Unit]:
    """The units of every (task, result) pair; ``tag`` marks the reliability re-run."""
    units = []
    for pair in pairs:
        key = outcome_key(relevance.NAME, pair.id, pair.result_id, tag=tag)
        unit_id = f"{pair.id}/{pair.result_id}"
        variables = relevance.variables_for(pair)
        if isinstance(variables, tuple):
            outcome = _unscored(key, pair.id, relevance.NAME, relevance.NAME, variables)
            units.append(
                Unit(
                    key,
                    unit_id,
                    relevance.NAME,
                    immediate=outcome.model_copy(update={"result_id": pair.result_id}),
                )
            )
            continue

        def run(
            engine: Engine, pair: RelevancePair = pair, key: str = key, variables: dict[str, str] = variables
        ) -> JudgeOutcome:
            return engine.judge(
                relevance.SPEC,
                key=key,
                item_id=pair.id,
                result_id=pair.result_id,
                variables=variables,
                inputs={**variables, "title": pair.title, "url": pair.url},
            )

        units.append(Unit(key, unit_id, relevance.NAME, run=run, prompts=[(relevance.NAME, variables)]))
    return units


def estimate_units(
    units: Sequence[Unit], engine: Engine, *, logged: Mapping[str, JudgeOutcome] | None = None
) -> CostEstimate:
    """What judging ``units`` with ``engine`` would cost at most (no network).

    Calls answered by the cache and units whose outcome the judge log already holds
    (``logged``, a resumed run) are counted apart: only the calls that remain are priced.
    """
    planned = cached = extra = prompt_tokens = from_log = 0
    extra_tokens = 0
    for unit in units:
        if unit.run is None:
            continue
        done = (logged or {}).get(unit.key)
        if done is not None and reusable(unit, done):
            from_log += len(done.calls)
            continue
        for prompt_id, variables in unit.prompts:
            messages = engine.messages(prompt_id, variables)
            if engine.cache is not None and engine.cache.contains(engine.key_for(prompt_id, messages)):
                cached += 1
                continue
            planned += 1
            prompt_tokens += estimate_prompt_tokens(messages)
            if unit.possible_extra:
                extra += unit.possible_extra
                extra_tokens += unit.possible_extra * estimate_prompt_tokens(messages)
    completion_max = (planned + extra) * engine.endpoint.max_tokens
    cost = call_cost(
        engine.price, prompt_tokens=prompt_tokens + extra_tokens, completion_tokens=completion_max
    )
    return CostEstimate(
        planned_calls=planned,
        cached_calls=cached,
        logged_calls=from_log,
        possible_extra_calls=extra,
        prompt_tokens_estimate=prompt_tokens + extra_tokens,
        completion_tokens_max=completion_max,
        cost_usd_max=cost,
        priced=engine.price is not None,
        note=(
            "upper bound: prompt tokens estimated at 1 per 3 characters, every reply at max_tokens, "
            "verification passes included; repair requests are not"
        ),
    )


def reusable(unit: Unit, logged: JudgeOutcome) -> bool:
    """Whether a logged outcome still answers ``unit``: it was made from the same judge inputs.

    A changed answer, context or expected answer under the same item id is
    judged again, never served stale from the log.
    """
    if unit.run is None:
        return unit.immediate is not None and logged.model_dump() == unit.immediate.model_dump()
    if not unit.prompts:
        return True
    variables = unit.prompts[0][1]
    return all(logged.inputs.get(name) == value for name, value in variables.items())
