"""The reliability spot-check: a seeded subset of the judged units judged again by a second judge, and compared.

The second judge is another model (option A), another prompt variant (option B), or
both; one identical to the first is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.judges.config import JudgeConfig
from ragmeter.judges.engine import Engine
from ragmeter.judges.reliability import reliability_stats, select_subset
from ragmeter.judges.results import JudgeOutcome, ReliabilityStats
from ragmeter.judges.runlog import RunLog
from ragmeter.judges.session import Progress, Session, execute_units, prompt_refs, run_fingerprint
from ragmeter.judges.units import Unit


@dataclass
class SpotCheck:
    """What the reliability re-run produced."""

    outcomes: list[JudgeOutcome]
    info: dict[str, Any]
    stats: dict[str, ReliabilityStats]
    resumed: set[str]


def second_engine(session: Session, first: Engine, refs: Mapping[str, Any], judges: Sequence[str]) -> Engine:
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
    if same_endpoint and prompt_refs(second, judges) == refs:
        raise ConfigError(
            "the second judge is identical to the first: set judge.reliability.model or"
            " judge.reliability.prompt_versions",
            where="judge.reliability",
        )
    return second


def spot_check(
    second: Engine,
    first: Engine,
    *,
    cfg: JudgeConfig,
    judges: Sequence[str],
    units: Sequence[Unit],
    primary: Sequence[JudgeOutcome],
    plan: Callable[[str | None], list[Unit]],
    log: RunLog | None,
    progress: Progress | None = None,
) -> SpotCheck:
    """Re-judge a seeded subset of the judged units with ``second`` and compare."""
    rel = cfg.reliability
    if rel is None:  # pragma: no cover - second_engine refused this already
        raise ConfigError("the reliability spot-check needs a judge.reliability block", where="judge")
    refs, second_refs = prompt_refs(first, judges), prompt_refs(second, judges)
    tag = "reliability-" + run_fingerprint(second, second_refs)[:8]
    judged = sorted({u.unit_id for u in units if u.run is not None})
    chosen = set(select_subset(judged, fraction=rel.fraction, min_n=rel.min_n, n=rel.n, seed=rel.seed))
    rel_units = [u for u in plan(tag) if u.unit_id in chosen and u.run is not None]
    results, resumed = execute_units(
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
    return SpotCheck(outcomes=outcomes, info=info, stats=stats, resumed=resumed)
