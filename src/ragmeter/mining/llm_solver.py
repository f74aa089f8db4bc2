"""The LLM solver: one chat completion per trial on an OpenAI-compatible endpoint.

It reuses the judges' client (:class:`ragmeter.judges.client.JudgeClient`: retries, 429
handling, fatal 401/403/404) and cost table (:mod:`ragmeter.judges.costs`), but not the judge
cache: every trial is a fresh call at temperature > 0, tagged with an ``X-Ragmeter-Trial``
header so a caching proxy keys it by trial. Swapping the client means editing this module only.

>>> from ragmeter.mining.registry import LLMSolverSpec
>>> spec = LLMSolverSpec(kind="llm", base_url="http://127.0.0.1:9/v1", model="m", temperature=0.7)
>>> LLMSolver(spec).identity()["temperature"]
0.7
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.executors.local import LocalExecutor
from ragmeter.judges.chat import Endpoint, JudgeCallError
from ragmeter.judges.client import JudgeClient
from ragmeter.judges.config import resolve_api_key
from ragmeter.judges.costs import BudgetExhaustedError, CostMeter, estimate_prompt_tokens, price_for
from ragmeter.mining.registry import LLMSolverSpec
from ragmeter.mining.solvers import (
    PROMPT_VERSION,
    BudgetExhausted,
    SolverAnswer,
    SolveRequest,
    SolverError,
    build_messages,
    prompt_sha256,
)
from ragmeter.redaction import register_env, register_secret, register_url


class LLMSolver:
    """A chat model answering each trial; thread-safe (one client for all worker threads)."""

    def __init__(self, spec: LLMSolverSpec, *, where: str = "solver", api_key: str | None = None) -> None:
        self.spec = spec
        self.where = where
        self._api_key = api_key
        # secrets from the start, so that nothing this run writes (trial logs first) shows them
        if api_key is not None:
            register_secret(api_key)
        else:
            register_env(spec.api_key_env)
        register_url(spec.base_url)
        self.concurrency = spec.concurrency
        self.price = price_for(spec.model, spec.prices)
        if spec.max_cost_usd is not None and self.price is None:
            raise ConfigError(
                f"max_cost_usd needs a price for model {spec.model!r}: add it under solver.prices",
                where=f"{where}.max_cost_usd",
            )
        self.meter = CostMeter(max_cost_usd=spec.max_cost_usd)
        self._client: JudgeClient | None = None
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[Any, ...]:
        # Sent to a worker: the spec and the key (read here, from the driver's environment).
        return (_rebuild, (self.spec, self.where, self._key()))

    def _key(self) -> str:
        """The API key given, else the one the spec's environment variable holds."""
        return self._api_key if self._api_key is not None else resolve_api_key(self.spec.api_key_env)

    def identity(self) -> dict[str, Any]:
        """Endpoint, model, temperature, max tokens and the prompt hash (never the key)."""
        return {
            "kind": "llm",
            "base_url": self.spec.base_url,
            "model": self.spec.model,
            "model_revision": self.spec.model_revision,
            "temperature": self.spec.temperature,
            "max_tokens": self.spec.max_tokens,
            "prompt_version": PROMPT_VERSION,
            "prompt_sha256": prompt_sha256(self.spec.system_prompt),
        }

    def _get_client(self) -> JudgeClient:
        with self._lock:
            if self._client is None:
                endpoint = Endpoint(
                    base_url=self.spec.base_url,
                    model=self.spec.model,
                    api_key=self._key(),
                    temperature=self.spec.temperature,
                    seed=None,
                    max_tokens=self.spec.max_tokens,
                    timeout_s=self.spec.timeout_s,
                    max_retries=self.spec.max_retries,
                    retry_base_delay_s=self.spec.retry_base_delay_s,
                    retry_max_delay_s=self.spec.retry_max_delay_s,
                    response_format="none",
                )
                # the call runs where the solver runs (a worker, with an executor), never through one
                self._client = JudgeClient(endpoint, executor=LocalExecutor())
            return self._client

    def solve(self, request: SolveRequest) -> SolverAnswer:
        """One chat completion; failures after retries raise :class:`SolverError`."""
        reservation = self.reserve(request)
        try:
            answer = self.call(request)
        except BaseException:
            self.release(reservation)
            raise
        return self.settle(reservation, answer)

    def reserve(self, request: SolveRequest) -> Any:
        """Set the worst-case cost of the call aside (:class:`BudgetExhausted` when over budget)."""
        messages = build_messages(request, self.spec.system_prompt)
        try:
            return self.meter.reserve(
                self.price,
                prompt_tokens=estimate_prompt_tokens(messages),
                completion_tokens=self.spec.max_tokens,
            )
        except BudgetExhaustedError as exc:
            raise BudgetExhausted(str(exc)) from None

    def call(self, request: SolveRequest) -> SolverAnswer:
        """The chat completion alone; its cost is booked by :meth:`settle`."""
        messages = build_messages(request, self.spec.system_prompt)
        headers = {"X-Ragmeter-Trial": f"{request.pair_id}/{request.trial_kind}/{request.trial_index}"}
        try:
            reply = self._get_client().complete(messages, headers=headers)
        except JudgeCallError as exc:
            raise SolverError(f"{exc.code}: {exc.reason}") from None
        except ConfigError as exc:
            raise ConfigError(exc.message, where=self.where) from None
        return SolverAnswer(
            text=reply.text,
            call_id=None,
            model=reply.model_reported,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cost_usd=None,
            latency_s=reply.latency_s,
        )

    def settle(self, reservation: Any, answer: SolverAnswer) -> SolverAnswer:
        """Book the real cost of a call; the answer with its ``cost_usd``."""
        cost = self.meter.settle(
            reservation,
            self.price,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
        )
        return replace(answer, cost_usd=cost)

    def release(self, reservation: Any) -> None:
        """Give back the reservation of a call that produced no answer."""
        self.meter.release(reservation)

    def close(self) -> None:
        """Close the HTTP connections."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None


def _rebuild(spec: LLMSolverSpec, where: str, api_key: str) -> LLMSolver:
    return LLMSolver(spec, where=where, api_key=api_key)
