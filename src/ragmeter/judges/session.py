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
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import ConfigError
from ragmeter.judges.cache import JudgeCache
from ragmeter.judges.chat import Endpoint
from ragmeter.judges.client import JudgeClient, ModelsReply
from ragmeter.judges.config import JudgeConfig, resolve_api_key
from ragmeter.judges.costs import CostMeter, price_for
from ragmeter.judges.engine import Engine
from ragmeter.judges.results import JudgeOutcome
from ragmeter.judges.runlog import RunLog
from ragmeter.judges.units import PROMPTS_OF, Unit, reusable
from ragmeter.redaction import redact_url

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


class ServerModels:
    """``GET /models`` of each endpoint, asked at most once for everything that shares this object.

    One judge run shares one; a command that makes several runs (``agentic`` labels trace by
    trace) shares one across them. The reply tells whether the server is there (checked before
    the first call) and what it says about the model (provenance).
    """

    def __init__(self) -> None:
        self._replies: dict[str, ModelsReply] = {}
        self._lock = threading.Lock()

    def reply(self, client: JudgeClient) -> ModelsReply:
        """The endpoint's reply, asked now if nobody asked yet."""
        with self._lock:
            key = client.endpoint.base_url
            if key not in self._replies:
                self._replies[key] = client.list_models()
            return self._replies[key]

    def asked(self, client: JudgeClient) -> bool:
        """Whether the endpoint of ``client`` was asked already."""
        with self._lock:
            return client.endpoint.base_url in self._replies

    def check(self, client: JudgeClient, *, where: str) -> None:
        """A one-line :class:`~ragmeter.errors.ConfigError` when nothing answers at the client's endpoint."""
        reply = self.reply(client)
        if not reply.reachable:
            raise ConfigError(
                f"cannot reach the judge endpoint {redact_url(client.endpoint.base_url)} ({reply.reason}); "
                "is the server running?",
                where=where,
            )


class Session:
    """Owns the clients, the cache and the log of one run; closes them all."""

    def __init__(
        self, cfg: JudgeConfig, *, create_cache: bool = True, server_models: ServerModels | None = None
    ) -> None:
        self.cfg = cfg
        use_cache = cfg.cache and (create_cache or Path(cfg.cache_path).is_file())
        self.cache = JudgeCache(cfg.cache_path) if use_cache else None
        self.meter = CostMeter(max_cost_usd=cfg.max_cost_usd)
        self.clients: list[JudgeClient] = []
        self.server_models = server_models or ServerModels()
        self._client_roles: list[str] = []

    def check_endpoints(self) -> None:
        """Before the first call: every endpoint of the run must answer (one ``GET /models`` each)."""
        for client, role in zip(self.clients, self._client_roles, strict=True):
            self.server_models.check(
                client, where="judge.base_url" if role == "primary" else "judge.reliability.base_url"
            )

    def server_model(self, *, asked_anyway: bool) -> dict[str, Any] | str:
        """What the primary endpoint's ``GET /models`` said about the model, for provenance.

        Asked only when it was asked already (the check before the calls), or ``asked_anyway``
        (calls were made): a run answered from the cache and the log sends no request at all.
        """
        client = self.clients[0] if self.clients else None
        if client is None or not (asked_anyway or self.server_models.asked(client)):
            return "not queried (no call was made in this run)"
        info = self.server_models.reply(client).info_for(client.endpoint.model)
        return info if info is not None else "the server did not answer GET /models"

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
            self._client_roles.append(role)
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
