"""One judge call end to end: prompt, cache, budget, call, strict parse, one repair, cache.

A judge module describes itself with a :class:`JudgeSpec` (prompt id, reply
model, JSON schema, how to turn a reply into a value) and calls
:meth:`Engine.judge`; the factual-match judge, which chains calls, uses
:meth:`Engine.ask` directly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from ragmeter.judges.cache import JudgeCache, cache_key
from ragmeter.judges.chat import ChatClient, ChatReply, Endpoint, JudgeCallError
from ragmeter.judges.config import Price
from ragmeter.judges.costs import BudgetExhaustedError, CostMeter, estimate_prompt_tokens
from ragmeter.judges.parsing import parse_reply
from ragmeter.judges.prompt_files import DEFAULT_VERSIONS, PromptTemplate, load_prompt
from ragmeter.judges.results import JudgeCall, JudgeOutcome

R = TypeVar("R", bound=BaseModel)

REPAIR_MESSAGE = (
    "Your reply could not be used: {reason}. Reply again with only the JSON object in the format "
    "requested above: no prose, no code fence."
)


@dataclass(frozen=True)
class Interpretation:
    """What a judge reply means: a value and details, or an unscored code and reason."""

    value: float | None
    details: dict[str, Any] = field(default_factory=dict)
    unscored: tuple[str, str] | None = None


@dataclass(frozen=True)
class JudgeSpec(Generic[R]):
    """A single-call judge: prompt, reply model, JSON schema and interpretation."""

    name: str
    metric: str
    reply_model: type[R]
    json_schema: dict[str, Any]
    interpret: Callable[[R], Interpretation]


@dataclass(frozen=True)
class Asked(Generic[R]):
    """The result of :meth:`Engine.ask`: parsed reply or failure, and the call record."""

    parsed: R | None
    call: JudgeCall
    failure: tuple[str, str] | None = None


class Engine:
    """Judge calls against one endpoint with one set of prompt versions (one judge *role*)."""

    def __init__(
        self,
        *,
        endpoint: Endpoint,
        client: ChatClient | None,
        cache: JudgeCache | None,
        meter: CostMeter,
        price: Price | None,
        prompt_versions: Mapping[str, str],
        prompts_dir: str | Path | None = None,
        role: Literal["primary", "reliability"] = "primary",
    ) -> None:
        self.client = client
        self.endpoint = endpoint
        self.cache = cache
        self.meter = meter
        self.price = price
        self.role: Literal["primary", "reliability"] = role
        self.versions = {**DEFAULT_VERSIONS, **prompt_versions}
        self.prompts_dir = prompts_dir
        self._prompts: dict[str, PromptTemplate] = {}
        self._lock = threading.Lock()

    @property
    def decoding(self) -> dict[str, Any]:
        """Decoding parameters that enter the cache key."""
        return {
            "temperature": self.endpoint.temperature,
            "seed": self.endpoint.seed,
            "max_tokens": self.endpoint.max_tokens,
        }

    def prompt(self, prompt_id: str) -> PromptTemplate:
        """The prompt template in use for ``prompt_id`` (loaded once)."""
        with self._lock:
            if prompt_id not in self._prompts:
                version = self.versions.get(prompt_id)
                if version is None:
                    raise KeyError(prompt_id)
                self._prompts[prompt_id] = load_prompt(prompt_id, version, prompts_dir=self.prompts_dir)
            return self._prompts[prompt_id]

    def messages(self, prompt_id: str, variables: Mapping[str, str]) -> list[dict[str, str]]:
        """The rendered chat messages."""
        return self.prompt(prompt_id).render(variables)

    def key_for(self, prompt_id: str, messages: list[dict[str, str]]) -> str:
        """The cache key of a call."""
        return cache_key(
            endpoint=self.endpoint.base_url,
            model=self.endpoint.model,
            decoding=self.decoding,
            prompt=self.prompt(prompt_id).provenance(),
            messages=messages,
        )

    def ask(
        self,
        prompt_id: str,
        variables: Mapping[str, str],
        reply_model: type[R],
        json_schema: Mapping[str, Any],
        *,
        judge: str,
        purpose: str = "judge",
    ) -> Asked[R]:
        """One judgement: cache, budget, call, strict parse, one repair, cache the usable result."""
        prompt = self.prompt(prompt_id)
        messages = prompt.render(variables)
        key = self.key_for(prompt_id, messages)
        base: dict[str, Any] = {
            "purpose": purpose,
            "prompt": prompt.provenance(),
            "endpoint": self.endpoint.base_url,
            "model_requested": self.endpoint.model,
            "cache_key": key,
        }
        if self.cache is not None:
            record = self.cache.get(key)
            if record is not None:
                try:
                    parsed = reply_model.model_validate(record.get("parsed"))
                except ValueError:
                    parsed = None
                if parsed is not None:
                    call = JudgeCall(
                        **base,
                        request=record.get("request", {}),
                        raw_replies=list(record.get("raw_replies", [])),
                        repair_reason=record.get("repair_reason"),
                        parsed=parsed.model_dump(mode="json"),
                        model_reported=record.get("model_reported"),
                        system_fingerprint=record.get("system_fingerprint"),
                        prompt_tokens=record.get("prompt_tokens"),
                        completion_tokens=record.get("completion_tokens"),
                        cost_usd=0.0,
                        cache_hit=True,
                    )
                    return Asked(parsed, call)
        schema = {"name": f"{prompt.id}_reply", "strict": True, "schema": json_schema}
        headers = {"X-Ragmeter-Prompt": prompt.ref, "X-Ragmeter-Prompt-Sha256": prompt.sha256}
        state = _CallState()
        first = self._send(messages, schema, headers, state)
        if isinstance(first, tuple):
            return Asked(None, state.call(base, messages), first)
        parsed, reason = parse_reply(first.text, reply_model)
        if parsed is None:
            if first.finish_reason == "length":
                reason = f"{reason} (the reply was cut off at max_tokens={self.endpoint.max_tokens})"
            state.repair_reason = reason
            repair_messages = [
                *messages,
                {"role": "assistant", "content": first.text},
                {"role": "user", "content": REPAIR_MESSAGE.format(reason=reason)},
            ]
            second = self._send(repair_messages, schema, headers, state)
            if isinstance(second, tuple):
                return Asked(None, state.call(base, messages), second)
            parsed, second_reason = parse_reply(second.text, reply_model)
            if parsed is None:
                failure = (
                    "unparseable_reply",
                    f"unparseable reply ({reason}); after repair: {second_reason}",
                )
                return Asked(None, state.call(base, messages), failure)
        call = state.call(base, messages, parsed=parsed.model_dump(mode="json"))
        if self.cache is not None:
            self.cache.put(
                key,
                {
                    "parsed": call.parsed,
                    "raw_replies": call.raw_replies,
                    "repair_reason": call.repair_reason,
                    "request": call.request,
                    "model_reported": call.model_reported,
                    "system_fingerprint": call.system_fingerprint,
                    "prompt_tokens": call.prompt_tokens,
                    "completion_tokens": call.completion_tokens,
                    "cost_usd": call.cost_usd,
                },
                judge=judge,
                prompt_id=prompt.id,
                prompt_version=prompt.version,
                model=self.endpoint.model,
                endpoint=self.endpoint.base_url,
            )
        return Asked(parsed, call)

    def _send(
        self,
        messages: list[dict[str, str]],
        schema: Mapping[str, Any],
        headers: Mapping[str, str],
        state: _CallState,
    ) -> ChatReply | tuple[str, str]:
        try:
            reservation = self.meter.reserve(
                self.price,
                prompt_tokens=estimate_prompt_tokens(messages),
                completion_tokens=self.endpoint.max_tokens,
            )
        except BudgetExhaustedError as exc:
            return ("budget_exhausted", f"not judged: {exc}")
        if self.client is None:
            self.meter.release(reservation)
            raise RuntimeError("this engine has no client (it only estimates)")
        try:
            reply = self.client.complete(messages, schema=schema, headers=headers)
        except JudgeCallError as exc:
            self.meter.release(reservation)
            state.attempts += exc.attempts
            state.error = exc.reason
            state.failed_request = exc.request
            return (exc.code, exc.reason)
        except BaseException:
            self.meter.release(reservation)
            raise
        cost = self.meter.settle(
            reservation,
            self.price,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
        )
        state.record(reply, cost)
        return reply

    def judge(
        self,
        spec: JudgeSpec[R],
        *,
        key: str,
        item_id: str,
        variables: Mapping[str, str],
        inputs: Mapping[str, Any],
        result_id: str | None = None,
    ) -> JudgeOutcome:
        """Run a single-call judge and turn its reply into an outcome."""
        asked = self.ask(spec.name, variables, spec.reply_model, spec.json_schema, judge=spec.name)
        common: dict[str, Any] = {
            "key": key,
            "item_id": item_id,
            "result_id": result_id,
            "judge": spec.name,
            "metric": spec.metric,
            "role": self.role,
            "inputs": dict(inputs),
            "calls": [asked.call],
        }
        if asked.parsed is None:
            code, reason = asked.failure or ("unparseable_reply", "no reply")
            return JudgeOutcome(**common, value=None, unscored_code=code, unscored_reason=reason)
        meaning = spec.interpret(asked.parsed)
        if meaning.unscored is not None:
            code, reason = meaning.unscored
            return JudgeOutcome(
                **common, value=None, unscored_code=code, unscored_reason=reason, details=meaning.details
            )
        return JudgeOutcome(**common, value=meaning.value, details=meaning.details)


class _CallState:
    """Accumulates the HTTP side of one :meth:`Engine.ask` (first call and repair)."""

    def __init__(self) -> None:
        self.replies: list[ChatReply] = []
        self.cost: float | None = 0.0
        self.attempts = 0
        self.error: str | None = None
        self.repair_reason: str | None = None
        self.failed_request: dict[str, Any] | None = None

    def record(self, reply: ChatReply, cost: float | None) -> None:
        self.replies.append(reply)
        self.attempts += reply.attempts
        self.cost = None if cost is None or self.cost is None else round(self.cost + cost, 12)

    def call(
        self, base: Mapping[str, Any], messages: list[dict[str, str]], *, parsed: dict[str, Any] | None = None
    ) -> JudgeCall:
        first = self.replies[0] if self.replies else None
        tokens_known = bool(self.replies) and all(
            r.prompt_tokens is not None and r.completion_tokens is not None for r in self.replies
        )
        return JudgeCall(
            **base,
            request=first.request if first is not None else (self.failed_request or {"messages": messages}),
            raw_replies=[r.text for r in self.replies],
            repair_reason=self.repair_reason,
            parsed=parsed,
            model_reported=first.model_reported if first is not None else None,
            system_fingerprint=first.system_fingerprint if first is not None else None,
            prompt_tokens=sum(r.prompt_tokens or 0 for r in self.replies) if tokens_known else None,
            completion_tokens=sum(r.completion_tokens or 0 for r in self.replies) if tokens_known else None,
            cost_usd=self.cost if self.replies else 0.0,
            http_attempts=self.attempts,
            latency_s=sum(r.latency_s for r in self.replies),
            error=self.error,
        )
