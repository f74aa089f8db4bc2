"""Running judges over many items: planning, concurrency, the log, the budget, reliability, provenance.

:func:`run_judges` judges answered questions (groundedness, correctness,
abstention, factual match); :func:`label_relevance` labels (task, result)
pairs 0-4; :func:`estimate_cost` says what a run would cost before it starts.
All three take plain data and a ``judge:`` config (mapping or
:class:`~ragmeter.judges.config.JudgeConfig`).

>>> estimate = estimate_cost(
...     [{"id": "q1", "question": "Capital of France?", "answer": "Paris.", "contexts": ["Paris is..."]}],
...     config={"base_url": "http://127.0.0.1:9/v1", "model": "gpt-4o-mini", "cache": False},
...     judges=["groundedness", "correctness"],
... )
>>> estimate.planned_calls, estimate.priced, estimate.cost_usd_max is not None
(2, True, True)
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import ConfigError, InputError
from ragmeter.judges import abstention, correctness, factual, groundedness, relevance
from ragmeter.judges.cache import JudgeCache
from ragmeter.judges.client import Endpoint, JudgeClient
from ragmeter.judges.config import JudgeConfig, load_judge_config, resolve_api_key
from ragmeter.judges.costs import PRICE_TABLE_AS_OF, CostMeter, call_cost, estimate_prompt_tokens, price_for
from ragmeter.judges.engine import Engine
from ragmeter.judges.items import JudgeItem, RelevancePair, coerce, outcome_key
from ragmeter.judges.reliability import reliability_stats, select_subset
from ragmeter.judges.results import (
    CostEstimate,
    JudgeOutcome,
    JudgeRun,
    ReliabilityStats,
    UsageTotals,
    summarise,
)
from ragmeter.judges.runlog import RunLog

DEFAULT_JUDGES = ("groundedness", "correctness", "abstention", "factual_match")
"""The judges :func:`run_judges` runs unless told otherwise."""

_PROMPTS_OF = {
    "groundedness": ("groundedness",),
    "correctness": ("correctness",),
    "abstention": ("abstention",),
    "factual_match": ("factual_match", "factual_verify"),
    "relevance": ("relevance",),
}

ItemLike = JudgeItem | Mapping[str, Any]
PairLike = RelevancePair | Mapping[str, Any]
ConfigLike = JudgeConfig | Mapping[str, Any] | str | Path
Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: ``phase`` is ``"judging"`` or ``"spot-check"``; called with
``done=0`` when a phase starts and after every judgement made (not for outcomes taken from the log)."""


@dataclass
class _Unit:
    """One outcome to produce: immediately (``run`` is None) or by judging."""

    key: str
    unit_id: str
    judge: str
    immediate: JudgeOutcome | None = None
    run: Callable[[Engine], JudgeOutcome] | None = None
    prompts: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    possible_extra: int = 0


def _check_judges(judges: Sequence[str]) -> list[str]:
    names = list(dict.fromkeys(judges))
    if not names:
        raise ConfigError("name at least one judge", where="judges")
    for name in names:
        if name not in DEFAULT_JUDGES:
            close = difflib.get_close_matches(name, DEFAULT_JUDGES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"unknown judge {name!r} (known: {', '.join(DEFAULT_JUDGES)}){hint}", where="judges"
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
}
"""Judges that are one prompt and one call (their modules have ``SPEC`` and ``variables_for``)."""


def _single(spec_module: Any, item: JudgeItem, tag: str | None) -> _Unit:
    spec = spec_module.SPEC
    key = outcome_key(spec.name, item.id, tag=tag)
    variables = spec_module.variables_for(item)
    if isinstance(variables, tuple):
        unscored = _unscored(key, item.id, spec.name, spec.metric, variables)
        return _Unit(key, item.id, spec.name, immediate=unscored)

    def run(engine: Engine) -> JudgeOutcome:
        return engine.judge(spec, key=key, item_id=item.id, variables=variables, inputs=variables)

    return _Unit(key, item.id, spec.name, run=run, prompts=[(spec.name, variables)])


def _abstention_flag(item: JudgeItem, abstained: bool) -> _Unit:
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
    return _Unit(key, item.id, abstention.NAME, immediate=outcome)


def _factual(item: JudgeItem, cfg: JudgeConfig, tag: str | None) -> list[_Unit]:
    units = []
    if tag is None:  # the fuzzy match is deterministic: never re-judged
        fuzzy_key = outcome_key(factual.FUZZY, item.id)
        fuzzy = factual.fuzzy_outcome(item, key=fuzzy_key, threshold=cfg.fuzzy_threshold)
        units.append(_Unit(fuzzy_key, item.id, factual.FUZZY, immediate=fuzzy))
    key = outcome_key(factual.NAME, item.id, tag=tag)
    variables = factual.variables_for(item)
    if isinstance(variables, tuple):
        unscored = _unscored(key, item.id, factual.NAME, factual.NAME, variables)
        return [*units, _Unit(key, item.id, factual.NAME, immediate=unscored)]

    def run(engine: Engine) -> JudgeOutcome:
        return factual.judge_factual(engine, item, key=key, threshold=cfg.fuzzy_threshold)

    prompts = [(factual.NAME, variables)]
    return [*units, _Unit(key, item.id, factual.NAME, run=run, prompts=prompts, possible_extra=1)]


def _plan_items(
    items: Sequence[JudgeItem], judges: Sequence[str], cfg: JudgeConfig, tag: str | None
) -> list[_Unit]:
    """The units of every (item, judge); ``tag`` marks the reliability re-run (judged units only)."""
    units: list[_Unit] = []
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


def _plan_pairs(pairs: Sequence[RelevancePair], tag: str | None) -> list[_Unit]:
    units = []
    for pair in pairs:
        key = outcome_key(relevance.NAME, pair.id, pair.result_id, tag=tag)
        unit_id = f"{pair.id}/{pair.result_id}"
        variables = relevance.variables_for(pair)
        if isinstance(variables, tuple):
            outcome = _unscored(key, pair.id, relevance.NAME, relevance.NAME, variables)
            units.append(
                _Unit(
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

        units.append(_Unit(key, unit_id, relevance.NAME, run=run, prompts=[(relevance.NAME, variables)]))
    return units


def _endpoint(cfg: JudgeConfig, *, model: str, base_url: str, api_key: str) -> Endpoint:
    return Endpoint(
        base_url=base_url.rstrip("/"),
        model=model,
        api_key=api_key,
        temperature=cfg.temperature,
        seed=cfg.seed,
        max_tokens=cfg.max_tokens,
        timeout_s=cfg.timeout_s,
        max_retries=cfg.max_retries,
        retry_base_delay_s=cfg.retry_base_delay_s,
        retry_max_delay_s=cfg.retry_max_delay_s,
        response_format=cfg.response_format,
        concurrency=cfg.concurrency,
    )


def _estimate(units: Sequence[_Unit], engine: Engine) -> CostEstimate:
    planned = cached = extra = prompt_tokens = 0
    extra_tokens = 0
    for unit in units:
        if unit.run is None:
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


def _prompt_refs(engine: Engine, judges: Sequence[str]) -> dict[str, dict[str, str]]:
    refs = {}
    for judge in judges:
        for prompt_id in _PROMPTS_OF[judge]:
            refs[prompt_id] = engine.prompt(prompt_id).provenance()
    return refs


def _fingerprint(engine: Engine, refs: Mapping[str, Mapping[str, str]]) -> str:
    payload = {
        "endpoint": engine.endpoint.base_url,
        "model": engine.endpoint.model,
        "decoding": engine.decoding,
        "prompts": {k: dict(v) for k, v in sorted(refs.items())},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]


class _Session:
    """Owns the clients, the cache and the log of one run; closes them all."""

    def __init__(self, cfg: JudgeConfig, *, create_cache: bool = True) -> None:
        self.cfg = cfg
        use_cache = cfg.cache and (create_cache or Path(cfg.cache_path).is_file())
        self.cache = JudgeCache(cfg.cache_path) if use_cache else None
        self.meter = CostMeter(max_cost_usd=cfg.max_cost_usd)
        self.clients: list[JudgeClient] = []

    def engine(
        self,
        *,
        model: str,
        base_url: str,
        api_key_env: str | None,
        prompt_versions: Mapping[str, str],
        role: Literal["primary", "reliability"],
        connect: bool,
    ) -> Engine:
        price = price_for(model, self.cfg.prices)
        if self.cfg.max_cost_usd is not None and price is None:
            raise ConfigError(
                f"max_cost_usd is set but no price is known for model {model!r}; add it under judge.prices"
                " (input_per_mtok, output_per_mtok)",
                where="judge.prices",
            )
        endpoint = _endpoint(
            self.cfg, model=model, base_url=base_url, api_key=resolve_api_key(api_key_env) if connect else ""
        )
        client = None
        if connect:
            client = JudgeClient(endpoint)
            self.clients.append(client)
        return Engine(
            endpoint=endpoint,
            client=client,
            cache=self.cache,
            meter=self.meter,
            price=price,
            prompt_versions=prompt_versions,
            prompts_dir=self.cfg.prompts_dir,
            role=role,
        )

    def close(self) -> None:
        for client in self.clients:
            client.close()
        if self.cache is not None:
            self.cache.close()


def _reusable(unit: _Unit, logged: JudgeOutcome) -> bool:
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


def _execute_units(
    units: Sequence[_Unit],
    engine: Engine,
    *,
    log: RunLog | None,
    concurrency: int,
    progress: Progress | None = None,
    phase: str = "judging",
) -> tuple[dict[str, JudgeOutcome], set[str]]:
    """Run every unit not already in the log; return outcomes by key and the keys taken from the log."""
    results: dict[str, JudgeOutcome] = {}
    resumed: set[str] = set()
    pending: list[tuple[_Unit, Callable[[Engine], JudgeOutcome]]] = []
    for unit in units:
        logged = log.done.get(unit.key) if log is not None else None
        if logged is not None and _reusable(unit, logged):
            results[unit.key] = logged
            resumed.add(unit.key)
        elif unit.run is not None:
            pending.append((unit, unit.run))
        elif unit.immediate is not None:
            results[unit.key] = unit.immediate
            if log is not None:
                log.append(unit.immediate)
    if not pending:
        return results, resumed
    done_count = 0
    if progress is not None:
        progress(phase, 0, len(pending))
    executor = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="ragmeter-judge")
    try:
        futures: dict[Future[JudgeOutcome], _Unit] = {}
        queue = list(reversed(pending))
        while queue or futures:
            while queue and len(futures) < concurrency:
                unit, runner = queue.pop()
                futures[executor.submit(runner, engine)] = unit
            done, _ = wait(futures, return_when=FIRST_COMPLETED)
            for future in done:
                unit = futures.pop(future)
                outcome = future.result()
                results[unit.key] = outcome
                if log is not None:
                    log.append(outcome)
                done_count += 1
                if progress is not None:
                    progress(phase, done_count, len(pending))
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
    return results, resumed


@dataclass
class _SpotCheck:
    """What the reliability re-run produced."""

    outcomes: list[JudgeOutcome]
    info: dict[str, Any]
    stats: dict[str, ReliabilityStats]
    resumed: set[str]


def _second_engine(
    session: _Session, first: Engine, refs: Mapping[str, Any], judges: Sequence[str]
) -> Engine:
    """The second judge of the spot-check; refused when it is identical to the first."""
    cfg = session.cfg
    rel = cfg.reliability
    if rel is None:
        raise ConfigError("the reliability spot-check needs a judge.reliability block", where="judge")
    second = session.engine(
        model=rel.model or cfg.model,
        base_url=rel.base_url or cfg.base_url,
        api_key_env=rel.api_key_env if rel.api_key_env is not None else cfg.api_key_env,
        prompt_versions={**cfg.prompt_versions, **rel.prompt_versions},
        role="reliability",
        connect=True,
    )
    same_endpoint = (second.endpoint.model, second.endpoint.base_url) == (
        first.endpoint.model,
        first.endpoint.base_url,
    )
    if same_endpoint and _prompt_refs(second, judges) == refs:
        raise ConfigError(
            "the second judge is identical to the first: set judge.reliability.model or"
            " judge.reliability.prompt_versions",
            where="judge.reliability",
        )
    return second


def _spot_check(
    second: Engine,
    first: Engine,
    *,
    cfg: JudgeConfig,
    judges: Sequence[str],
    units: Sequence[_Unit],
    primary: Sequence[JudgeOutcome],
    plan: Callable[[str | None], list[_Unit]],
    log: RunLog | None,
    progress: Progress | None = None,
) -> _SpotCheck:
    """Re-judge a seeded subset of the judged units with ``second`` and compare."""
    rel = cfg.reliability
    if rel is None:  # pragma: no cover - _second_engine refused this already
        raise ConfigError("the reliability spot-check needs a judge.reliability block", where="judge")
    refs, second_refs = _prompt_refs(first, judges), _prompt_refs(second, judges)
    tag = "reliability-" + _fingerprint(second, second_refs)[:8]
    judged = sorted({u.unit_id for u in units if u.run is not None})
    chosen = set(select_subset(judged, fraction=rel.fraction, min_n=rel.min_n, n=rel.n, seed=rel.seed))
    rel_units = [u for u in plan(tag) if u.unit_id in chosen and u.run is not None]
    results, resumed = _execute_units(
        rel_units, second, log=log, concurrency=cfg.concurrency, progress=progress, phase="spot-check"
    )
    outcomes = [results[u.key].model_copy(update={"role": "reliability"}) for u in rel_units]
    option = []
    if (second.endpoint.model, second.endpoint.base_url) != (first.endpoint.model, first.endpoint.base_url):
        option.append("A: second model")
    if second_refs != refs:
        option.append("B: prompt variant")
    info = {
        "model": second.endpoint.model,
        "endpoint": second.endpoint.base_url,
        "prompts": second_refs,
        "option": " + ".join(option),
        "selected_units": sorted(chosen),
        "fraction": rel.fraction,
        "min_n": rel.min_n,
        "n": rel.n,
        "seed": rel.seed,
    }
    described = {k: info[k] for k in ("model", "endpoint", "option")}
    described["prompt_versions"] = {k: v["version"] for k, v in second_refs.items()}
    stats = reliability_stats(primary, outcomes, second_judge=described, seed=rel.seed)
    return _SpotCheck(outcomes=outcomes, info=info, stats=stats, resumed=resumed)


def _run(
    *,
    cfg: JudgeConfig,
    judges: Sequence[str],
    plan: Callable[[str | None], list[_Unit]],
    log_path: str | Path | None,
    resume: bool,
    reliability: bool | None,
    progress: Progress | None = None,
) -> JudgeRun:
    started = datetime.now(UTC).isoformat(timespec="seconds")
    session = _Session(cfg)
    try:
        engine = session.engine(
            model=cfg.model,
            base_url=cfg.base_url,
            api_key_env=cfg.api_key_env,
            prompt_versions=cfg.prompt_versions,
            role="primary",
            connect=True,
        )
        refs = _prompt_refs(engine, judges)
        use_reliability = cfg.reliability is not None if reliability is None else reliability
        second = _second_engine(session, engine, refs, judges) if use_reliability else None
        fingerprint = _fingerprint(engine, refs)
        units = plan(None)
        estimate = _estimate(units, engine)
        log = None
        if log_path is not None:
            log = RunLog.open(
                log_path, fingerprint=fingerprint, resume=resume, header={"created_at": started}
            )
        try:
            results, resumed = _execute_units(
                units, engine, log=log, concurrency=cfg.concurrency, progress=progress
            )
            primary = [results[u.key] for u in units]
            spot = None
            if second is not None:
                spot = _spot_check(
                    second,
                    engine,
                    cfg=cfg,
                    judges=judges,
                    units=units,
                    primary=primary,
                    plan=plan,
                    log=log,
                    progress=progress,
                )
        finally:
            if log is not None:
                log.close()
        second_outcomes = spot.outcomes if spot is not None else []
        from_log = resumed | (spot.resumed if spot is not None else set())
        usage = UsageTotals(max_cost_usd=cfg.max_cost_usd)
        for outcome in [*primary, *second_outcomes]:
            if outcome.key not in from_log:
                for call in outcome.calls:
                    usage.add(call)
        usage.budget_exhausted = session.meter.exhausted
        usage.budget_message = session.meter.message
        provenance = _provenance(
            cfg,
            engine,
            refs,
            primary,
            started=started,
            fingerprint=fingerprint,
            log_path=log_path,
            reliability_info=spot.info if spot is not None else None,
            query_server=usage.http_attempts > 0,
            session=session,
        )
    finally:
        session.close()
    return JudgeRun(
        outcomes=primary,
        reliability_outcomes=second_outcomes,
        summary=summarise(primary),
        usage=usage,
        estimate=estimate,
        judge_reliability=spot.stats if spot is not None else {},
        provenance=provenance,
        resumed=len(from_log),
    )


def _provenance(
    cfg: JudgeConfig,
    engine: Engine,
    refs: Mapping[str, Mapping[str, str]],
    outcomes: Sequence[JudgeOutcome],
    *,
    started: str,
    fingerprint: str,
    log_path: str | Path | None,
    reliability_info: dict[str, Any] | None,
    query_server: bool,
    session: _Session,
) -> dict[str, Any]:
    from ragmeter import __version__

    calls = [c for o in outcomes for c in o.calls]
    client = session.clients[0] if session.clients else None
    server_model: dict[str, Any] | str | None = "not queried (no call was made in this run)"
    if query_server and client is not None:
        server_model = client.server_model_info() or "the server did not answer GET /models"
    price = engine.price
    return {
        "ragmeter_version": __version__,
        "created_at": started,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "judge": {
            "endpoint": cfg.base_url,
            "model": cfg.model,
            "model_revision": cfg.model_revision,
            "models_reported": sorted({c.model_reported for c in calls if c.model_reported}),
            "system_fingerprints": sorted({c.system_fingerprint for c in calls if c.system_fingerprint}),
            "server_model": server_model,
            "temperature": cfg.temperature,
            "seed": cfg.seed,
            "max_tokens": cfg.max_tokens,
            "response_format": cfg.response_format,
            "response_format_used": client.format_mode if client is not None else None,
            "response_format_notes": list(client.format_notes) if client is not None else [],
            "api_key_env": cfg.api_key_env,
            "concurrency": cfg.concurrency,
            "timeout_s": cfg.timeout_s,
            "max_retries": cfg.max_retries,
        },
        "prompts": {k: dict(v) for k, v in refs.items()},
        "price": price.model_dump() if price is not None else None,
        "price_table_as_of": PRICE_TABLE_AS_OF,
        "cache": {"enabled": cfg.cache, "path": cfg.cache_path if cfg.cache else None},
        "log": {"path": str(log_path) if log_path is not None else None, "fingerprint": fingerprint},
        "reliability": reliability_info,
        "config": cfg.public_dict(),
    }


def _check_item_judges(items: Sequence[JudgeItem]) -> None:
    for index, item in enumerate(items):
        for name in item.judges or ():
            if name not in DEFAULT_JUDGES:
                raise ConfigError(
                    f"unknown judge {name!r} (known: {', '.join(DEFAULT_JUDGES)})",
                    where=f"items[{index}].judges",
                )


def _check_unique(ids: Sequence[str], label: str) -> None:
    seen: set[str] = set()
    for index, value in enumerate(ids):
        if value in seen:
            raise InputError(f"duplicate id {value!r}", where=f"{label}[{index}]")
        seen.add(value)


def run_judges(
    items: Sequence[ItemLike],
    *,
    config: ConfigLike,
    judges: Sequence[str] = DEFAULT_JUDGES,
    log_path: str | Path | None = None,
    resume: bool = True,
    reliability: bool | None = None,
    progress: Progress | None = None,
) -> JudgeRun:
    """Judge answered questions: groundedness, correctness, abstention, factual match (+ fuzzy match).

    ``items`` are :class:`~ragmeter.judges.items.JudgeItem` or mappings with the
    same fields (``id``, ``question``, ``answer``, ``contexts``,
    ``expected_answer``, ``abstained``, and ``judges`` to run only some of the
    run's judges on an item). Outcomes are appended
    to ``log_path`` (JSON Lines) as they complete; with ``resume`` an existing
    log is continued and its items are not judged again (unless their judge
    inputs changed). ``reliability`` (default: when ``judge.reliability`` is
    configured) re-judges a seeded subset with the second judge. ``progress``
    is called as judgements complete (see :data:`Progress`).

    >>> run = run_judges([{"id": "q1", "question": "?", "answer": "I don't know.", "abstained": True}],
    ...                  config={"base_url": "http://127.0.0.1:9/v1", "model": "m", "cache": False},
    ...                  judges=["abstention", "groundedness"])
    >>> run.values()
    {'q1': {'abstained': 1.0, 'groundedness': None}}
    >>> run.outcomes[1].unscored_code, run.usage.calls
    ('no_context', 0)
    """
    cfg = load_judge_config(config)
    names = _check_judges(judges)
    checked = coerce(JudgeItem, items, label="items")
    _check_unique([i.id for i in checked], "items")
    _check_item_judges(checked)
    return _run(
        cfg=cfg,
        judges=names,
        plan=lambda tag: _plan_items(checked, names, cfg, tag),
        log_path=log_path,
        resume=resume,
        reliability=reliability,
        progress=progress,
    )


def label_relevance(
    pairs: Sequence[PairLike],
    *,
    config: ConfigLike,
    log_path: str | Path | None = None,
    resume: bool = True,
    reliability: bool | None = None,
    progress: Progress | None = None,
) -> JudgeRun:
    """Label (task, result) pairs with 0-4 gains; ``JudgeRun.gains()`` gives ``query -> result -> gain``.

    >>> run = label_relevance([{"id": "t1", "result_id": "r1", "task": "find X", "text": ""}],
    ...                       config={"base_url": "http://127.0.0.1:9/v1", "model": "m", "cache": False})
    >>> run.gains(), run.outcomes[0].unscored_code
    ({'t1': {'r1': None}}, 'empty_result')
    """
    cfg = load_judge_config(config)
    checked = coerce(RelevancePair, pairs, label="pairs")
    _check_unique([f"{p.id}/{p.result_id}" for p in checked], "pairs")
    return _run(
        cfg=cfg,
        judges=["relevance"],
        plan=lambda tag: _plan_pairs(checked, tag),
        log_path=log_path,
        resume=resume,
        reliability=reliability,
        progress=progress,
    )


@contextmanager
def _offline_engine(cfg: JudgeConfig) -> Iterator[Engine]:
    """The primary judge's engine without a connection or a cache: for estimates."""
    session = _Session(cfg, create_cache=False)
    try:
        yield session.engine(
            model=cfg.model,
            base_url=cfg.base_url,
            api_key_env=cfg.api_key_env,
            prompt_versions=cfg.prompt_versions,
            role="primary",
            connect=False,
        )
    finally:
        session.close()


def estimate_cost(
    items: Sequence[ItemLike], *, config: ConfigLike, judges: Sequence[str] = DEFAULT_JUDGES
) -> CostEstimate:
    """What :func:`run_judges` would cost, before it runs (cache hits excluded; no network)."""
    cfg = load_judge_config(config)
    names = _check_judges(judges)
    checked = coerce(JudgeItem, items, label="items")
    _check_item_judges(checked)
    with _offline_engine(cfg) as engine:
        return _estimate(_plan_items(checked, names, cfg, None), engine)


def estimate_relevance_cost(pairs: Sequence[PairLike], *, config: ConfigLike) -> CostEstimate:
    """What :func:`label_relevance` would cost, before it runs."""
    cfg = load_judge_config(config)
    checked = coerce(RelevancePair, pairs, label="pairs")
    with _offline_engine(cfg) as engine:
        return _estimate(_plan_pairs(checked, None), engine)
