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

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmeter import __version__
from ragmeter.errors import ConfigError, InputError
from ragmeter.judges.config import JudgeConfig, load_judge_config
from ragmeter.judges.costs import PRICE_TABLE_AS_OF
from ragmeter.judges.engine import Engine
from ragmeter.judges.items import JudgeItem, RelevancePair, coerce
from ragmeter.judges.results import CostEstimate, JudgeOutcome, JudgeRun, UsageTotals, summarise
from ragmeter.judges.runlog import RunLog
from ragmeter.judges.session import (
    Progress,
    ServerModels,
    Session,
    execute_units,
    prompt_refs,
    run_fingerprint,
)
from ragmeter.judges.spot_check import second_engine, spot_check
from ragmeter.judges.units import (
    ANSWER_JUDGES,
    DEFAULT_JUDGES,
    Unit,
    check_judges,
    estimate_units,
    plan_items,
    plan_pairs,
)

ItemLike = JudgeItem | Mapping[str, Any]
PairLike = RelevancePair | Mapping[str, Any]
ConfigLike = JudgeConfig | Mapping[str, Any] | str | Path


@dataclass(frozen=True)
class RunHooks:
    """What a caller of a judge run hears and asks for, besides the outcomes.

    ``before_calls`` gets the estimate of the calls that remain (after the API keys were read
    and the judge log opened, before any call); ``progress`` is called as judgements complete;
    ``check_endpoints`` stops the run with one line when an endpoint does not answer (one
    ``GET /models`` each, made only when calls remain); ``server_models`` shares those requests
    between runs.
    """

    before_calls: Callable[[CostEstimate], None] | None = None
    progress: Progress | None = None
    check_endpoints: bool = False
    server_models: ServerModels | None = None


def _run(
    *,
    cfg: JudgeConfig,
    judges: Sequence[str],
    plan: Callable[[str | None], list[Unit]],
    log_path: str | Path | None,
    resume: bool,
    reliability: bool | None,
    hooks: RunHooks,
) -> JudgeRun:
    started = datetime.now(UTC).isoformat(timespec="seconds")
    session = Session(cfg, server_models=hooks.server_models)
    progress = hooks.progress
    try:
        engine = session.engine(
            model=cfg.model,
            base_url=cfg.base_url,
            api_key_env=cfg.api_key_env,
            prompt_versions=cfg.prompt_versions,
            role="primary",
            connect=True,
        )
        refs = prompt_refs(engine, judges)
        use_reliability = cfg.reliability is not None if reliability is None else reliability
        second = second_engine(session, engine, refs, judges) if use_reliability else None
        fingerprint = run_fingerprint(engine, refs)
        units = plan(None)
        log = None
        if log_path is not None:
            log = RunLog.open(
                log_path, fingerprint=fingerprint, resume=resume, header={"created_at": started}
            )
        clock = time.perf_counter()
        try:
            estimate = estimate_units(units, engine, logged=log.done if log is not None else None)
            if hooks.check_endpoints and estimate.planned_calls:
                session.check_endpoints()
            if hooks.before_calls is not None:
                hooks.before_calls(estimate)
            results, resumed = execute_units(
                units, engine, log=log, concurrency=cfg.concurrency, progress=progress
            )
            primary = [results[u.key] for u in units]
            spot = None
            if second is not None:
                spot = spot_check(
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
        usage = UsageTotals(max_cost_usd=cfg.max_cost_usd, seconds=round(time.perf_counter() - clock, 6))
        for outcome in [*primary, *second_outcomes]:
            if outcome.key not in from_log:
                for call in outcome.calls:
                    usage.add(call)
            else:
                usage.from_log += len(outcome.calls)
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
            server_model=session.server_model(asked_anyway=usage.http_attempts > 0),
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
        notes=log.notes if log is not None else [],
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
    server_model: dict[str, Any] | str,
    session: Session,
) -> dict[str, Any]:
    calls = [c for o in outcomes for c in o.calls]
    client = session.clients[0] if session.clients else None
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
            if name not in ANSWER_JUDGES:
                raise ConfigError(
                    f"unknown judge {name!r} (known: {', '.join(ANSWER_JUDGES)})",
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
    hooks: RunHooks | None = None,
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
    is called as judgements complete (see :data:`Progress`); ``hooks`` adds the
    estimate before the first call and the endpoint check (see :class:`RunHooks`).

    >>> run = run_judges([{"id": "q1", "question": "?", "answer": "I don't know.", "abstained": True}],
    ...                  config={"base_url": "http://127.0.0.1:9/v1", "model": "m", "cache": False},
    ...                  judges=["abstention", "groundedness"])
    >>> run.values()
    {'q1': {'abstained': 1.0, 'groundedness': None}}
    >>> run.outcomes[1].unscored_code, run.usage.calls
    ('no_context', 0)
    """
    cfg = load_judge_config(config)
    names = check_judges(judges)
    checked = coerce(JudgeItem, items, label="items")
    _check_unique([i.id for i in checked], "items")
    _check_item_judges(checked)
    return _run(
        cfg=cfg,
        judges=names,
        plan=lambda tag: plan_items(checked, names, cfg, tag),
        log_path=log_path,
        resume=resume,
        reliability=reliability,
        hooks=_with_progress(hooks, progress),
    )


def label_relevance(
    pairs: Sequence[PairLike],
    *,
    config: ConfigLike,
    log_path: str | Path | None = None,
    resume: bool = True,
    reliability: bool | None = None,
    progress: Progress | None = None,
    hooks: RunHooks | None = None,
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
        plan=lambda tag: plan_pairs(checked, tag),
        log_path=log_path,
        resume=resume,
        reliability=reliability,
        hooks=_with_progress(hooks, progress),
    )


def _with_progress(hooks: RunHooks | None, progress: Progress | None) -> RunHooks:
    hooks = hooks or RunHooks()
    return hooks if progress is None else dataclasses.replace(hooks, progress=progress)


@contextmanager
def _offline_engine(cfg: JudgeConfig) -> Iterator[Engine]:
    """The primary judge's engine without a connection or a cache: for estimates."""
    session = Session(cfg, create_cache=False)
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
    names = check_judges(judges)
    checked = coerce(JudgeItem, items, label="items")
    _check_item_judges(checked)
    with _offline_engine(cfg) as engine:
        return estimate_units(plan_items(checked, names, cfg, None), engine)


def estimate_relevance_cost(pairs: Sequence[PairLike], *, config: ConfigLike) -> CostEstimate:
    """What :func:`label_relevance` would cost, before it runs."""
    cfg = load_judge_config(config)
    checked = coerce(RelevancePair, pairs, label="pairs")
    with _offline_engine(cfg) as engine:
        return estimate_units(plan_pairs(checked, None), engine)
