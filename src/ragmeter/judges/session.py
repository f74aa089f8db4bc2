"""One judge run's session: its clients, cache and cost meter, and the units run concurrently against the log.

:class:`Session` makes the engines of a run (the primary judge, and the second judge of
the spot-check) and closes everything they opened; :func:`execute_units` runs the units
not already in the log on a pool of threads, appending each outcome as it completes.

>>> from ragmeter.judges.config import JudgeConfig
>>> endpoint_for(JudgeConfig(base_url="http://127.0.0.1:9/v1/", model="m"), model="m",
...              base_url="http://127.0.0.1:9/v1/", api_key="").base_url
'http://127.0.0.1:9/v1'
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Literal

from ragmeter.errors import ConfigError
from ragmeter.judges.cache import JudgeCache
from ragmeter.judges.chat import Endpoint
from ragmeter.judges.client import JudgeClient
from ragmeter.judges.config import JudgeConfig, resolve_api_key
from ragmeter.judges.costs import CostMeter, price_for
from ragmeter.judges.engine import Engine
from ragmeter.judges.results import JudgeOutcome
from ragmeter.judges.runlog import RunLog
from ragmeter.judges.units import PROMPTS_OF, Unit, reusable

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``: ``phase`` is ``"judging"`` or ``"spot-check"``; called with
``done=0`` when a phase starts and after every judgement made (not for outcomes taken from the log)."""


def endpoint_for(cfg: JudgeConfig, *, model: str, base_url: str, api_key: str) -> Endpoint:
    """The endpoint of ``model`` at ``base_url`` with the decoding and retry settings of ``cfg``."""
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


def prompt_refs(engine: Engine, judges: Sequence[str]) -> dict[str, dict[str, str]]:
    """Prompt id → its provenance (version, hash), for every prompt ``judges`` use."""
    refs = {}
    for judge in judges:
        for prompt_id in PROMPTS_OF[judge]:
            refs[prompt_id] = engine.prompt(prompt_id).provenance()
    return refs


def run_fingerprint(engine: Engine, refs: Mapping[str, Mapping[str, str]]) -> str:
    """What a judge log is tied to: endpoint, model, decoding and prompts (16 hex digits)."""
    payload = {
        "endpoint": engine.endpoint.base_url,
        "model": engine.endpoint.model,
        "decoding": engine.decoding,
        "prompts": {k: dict(v) for k, v in sorted(refs.items())},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()[:16]


class Session:
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
        """An engine for ``model`` at ``base_url``; ``connect=False`` makes no client (estimates)."""
        price = price_for(model, self.cfg.prices)
        if self.cfg.max_cost_usd is not None and price is None:
            raise ConfigError(
                f"max_cost_usd is set but no price is known for model {model!r}; add it under judge.prices"
                " (input_per_mtok, output_per_mtok)",
                where="judge.prices",
            )
        endpoint = endpoint_for(
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
        """Close every client made and the cache."""
        for client in self.clients:
            client.close()
        if self.cache is not None:
            self.cache.close()


def execute_units(
    units: Sequence[Unit],
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
    pending: list[tuple[Unit, Callable[[Engine], JudgeOutcome]]] = []
    for unit in units:
        logged = log.done.get(unit.key) if log is not None else None
        if logged is not None and reusable(unit, logged):
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
        futures: dict[Future[JudgeOutcome], Unit] = {}
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
