"""A thin, retrying client for one OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp).

It uses the ``openai`` SDK with the SDK's own retries switched off, so that
ragmeter decides what is retried and can count every attempt:

- HTTP 429: wait for ``Retry-After`` (or ``retry-after-ms``; capped at
  ``retry_max_delay_s``), else back off exponentially, then retry;
- HTTP 408/409/5xx, timeouts and connection errors: exponential backoff with jitter
  starting at ``retry_base_delay_s``, then retry;
- HTTP 401/403/404: fatal for the whole run (:class:`~ragmeter.errors.ConfigError`):
  the key, the URL or the model name is wrong and no item could be judged;
- any other 4xx: the item is not retried (:class:`JudgeCallError`, not retryable);
- a 400/422 that names ``response_format`` steps the structured-output mode down
  (``json_schema`` → ``json_object`` → none) for the rest of the run.

The ``openai`` package is imported when the first client is made, never at import.

With a remote executor (given, or current when the client is made: see
:func:`ragmeter.executors.use_executor`) each call is sent from a worker of the
executor (:mod:`ragmeter.judges.remote_chat`) and its reply comes back here; the
structured-output step-downs a worker makes are adopted by this client.

>>> backoff_delay(0, base=1.0, cap=60.0, jitter=0.0)
0.5
>>> backoff_delay(3, base=1.0, cap=60.0, jitter=1.0)
8.0
>>> retry_after_seconds({"retry-after": "2"}, cap=30.0)
2.0
>>> retry_after_seconds({"retry-after-ms": "250"}, cap=30.0)
0.25
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, cast

from ragmeter.errors import ConfigError
from ragmeter.executors.base import Executor, current_executor
from ragmeter.executors.local import LocalExecutor
from ragmeter.judges.chat import ChatReply, Endpoint, FormatMode, JudgeCallError
from ragmeter.judges.remote_chat import RemoteChat

if TYPE_CHECKING:
    from openai import OpenAI

_LADDER: tuple[FormatMode, ...] = ("json_schema", "json_object", "none")
_RETRY_STATUS = {408, 409}
_FATAL_STATUS = {401: "the API key was rejected", 403: "access was denied", 404: "not found"}


def backoff_delay(attempt: int, *, base: float, cap: float, jitter: float) -> float:
    """Exponential backoff: ``min(cap, base * 2**attempt)`` times a factor in ``[0.5, 1]``.

    ``jitter`` in ``[0, 1]`` picks the factor (0 gives half the full delay, 1 the full delay).
    """
    full = min(cap, base * (2**attempt))
    return float(full * (0.5 + jitter / 2))


def retry_after_seconds(headers: Mapping[str, str], *, cap: float) -> float | None:
    """Seconds to wait from ``Retry-After`` / ``retry-after-ms`` headers (capped), or ``None``."""
    lowered = {k.lower(): v for k, v in headers.items()}
    value = lowered.get("retry-after-ms")
    if value is not None:
        try:
            return min(cap, max(0.0, float(value) / 1000))
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return min(cap, max(0.0, float(value)))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(cap, max(0.0, when.timestamp() - time.time()))


@dataclass(frozen=True)
class ModelsReply:
    """What one ``GET /models`` found: whether the server answered, and the models it listed.

    >>> reply = ModelsReply(True, ({"id": "m", "created": 1, "owned_by": "x"},))
    >>> reply.info_for("m"), reply.info_for("other")
    ({'id': 'm', 'created': 1, 'owned_by': 'x'}, {'id': None, 'listed': ['m']})
    """

    reachable: bool
    models: tuple[dict[str, Any], ...] | None
    """Each listed model's ``id``, ``created`` and ``owned_by``; ``None`` when the server did not say."""
    reason: str = ""
    """Why the server could not be reached."""

    def info_for(self, model: str) -> dict[str, Any] | None:
        """The entry of ``model``, else the first 20 ids listed; ``None`` when there was no listing."""
        if self.models is None:
            return None
        for entry in self.models:
            if entry["id"] == model:
                return dict(entry)
        return {"id": None, "listed": sorted(str(e["id"]) for e in self.models)[:20]}


class JudgeClient:
    """Chat completions against one endpoint, with ragmeter's retry policy.

    Thread-safe: one client serves all worker threads of a run.
    """

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        sleep: Callable[[float], None] = time.sleep,
        executor: Executor | None = None,
    ) -> None:
        self.endpoint = endpoint
        self._executor = executor if executor is not None else current_executor()
        self._remote: RemoteChat | None = None
        self._sleep = sleep
        self._random = random.Random()
        self._lock = threading.Lock()
        self._client_lock = threading.Lock()
        self._mode: FormatMode = (
            "json_schema" if endpoint.response_format == "auto" else endpoint.response_format
        )
        self.format_notes: list[str] = []
        self._openai: OpenAI | None = None

    @property
    def _client(self) -> OpenAI:
        # Made on first use, so a run answered entirely from the cache opens no connection.
        with self._client_lock:
            if self._openai is None:
                from openai import OpenAI

                self._openai = OpenAI(
                    base_url=self.endpoint.base_url,
                    api_key=self.endpoint.api_key,
                    max_retries=0,
                    timeout=self.endpoint.timeout_s,
                )
            return self._openai

    @property
    def format_mode(self) -> FormatMode:
        """The structured-output mode currently in use."""
        with self._lock:
            return self._mode

    def close(self) -> None:
        """Close the HTTP connections (and the executor's workers of this client)."""
        with self._client_lock:
            if self._openai is not None:
                self._openai.close()
                self._openai = None
            remote, self._remote = self._remote, None
        if remote is not None:
            remote.close()

    def list_models(self) -> ModelsReply:
        """One ``GET /models``: whether anything answered, and what it says about the configured model.

        Any HTTP reply (even 401 or 404) means the server is there; only a connection that
        fails or times out makes it unreachable.
        """
        import openai

        try:
            listing = self._client.models.list(timeout=min(self.endpoint.timeout_s, 10.0))
        except openai.APIConnectionError as exc:
            reason = " ".join(str(exc.__cause__ or exc).split()) or type(exc).__name__
            return ModelsReply(reachable=False, models=None, reason=reason)
        except openai.OpenAIError:
            return ModelsReply(reachable=True, models=None)
        entries = tuple({"id": e.id, "created": e.created, "owned_by": e.owned_by} for e in listing.data)
        return ModelsReply(reachable=True, models=entries)

    def _body(
        self, messages: Sequence[Mapping[str, str]], schema: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.endpoint.model,
            "messages": [dict(m) for m in messages],
            "temperature": self.endpoint.temperature,
            "max_tokens": self.endpoint.max_tokens,
        }
        if self.endpoint.seed is not None:
            body["seed"] = self.endpoint.seed
        mode = self.format_mode
        if mode == "json_schema" and schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": dict(schema)}
        elif mode in ("json_schema", "json_object"):
            body["response_format"] = {"type": "json_object"}
        return body

    def _step_down(self, used: Any) -> bool:
        """Move to the next structured-output mode after a rejection; ``False`` when none is left."""
        with self._lock:
            if used is None or self._mode == "none":
                return False
            self._next_mode_locked()
            return True

    def adopt_mode(self, mode: FormatMode) -> None:
        """Step down to ``mode`` when a copy of this client (on a worker) found the server needs it."""
        with self._lock:
            while _LADDER.index(self._mode) < _LADDER.index(mode):
                self._next_mode_locked()

    def _next_mode_locked(self) -> None:
        """Move one step down the ladder and note it (the caller holds ``self._lock``)."""
        current = self._mode
        self._mode = _LADDER[_LADDER.index(current) + 1]
        self.format_notes.append(f"server rejected response_format {current}; using {self._mode}")

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        schema: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> ChatReply:
        """Send one chat completion; retry per the policy; raise :class:`JudgeCallError` when it fails."""
        if self._executor is not None and self._executor.remote:
            return self._complete_remote(self._executor, messages, schema=schema, headers=headers)
        import openai

        attempts = 0
        failures = 0
        started = time.monotonic()
        while True:
            body = self._body(messages, schema)
            attempts += 1
            delay: float | None = None
            try:
                response = self._client.chat.completions.create(
                    **cast(Any, body), extra_headers=dict(headers or {})
                )
            except openai.APIStatusError as exc:
                status = exc.status_code
                message = _error_message(exc)
                if status in _FATAL_STATUS:
                    raise ConfigError(
                        f"{_FATAL_STATUS[status]} (HTTP {status} from {self.endpoint.base_url}, "
                        f"model {self.endpoint.model!r}): {message}",
                        where="judge",
                    ) from None
                rejected_format = "response_format" in message.lower() + str(exc.body).lower()
                if status in (400, 422) and rejected_format and self._step_down(body.get("response_format")):
                    attempts -= 1
                    continue
                if status == 429:
                    delay = retry_after_seconds(exc.response.headers, cap=self.endpoint.retry_max_delay_s)
                    last = f"HTTP 429 ({message})"
                elif status >= 500 or status in _RETRY_STATUS:
                    last = f"HTTP {status} ({message})"
                else:
                    raise JudgeCallError(
                        "request_rejected",
                        f"HTTP {status}: {message}",
                        retryable=False,
                        attempts=attempts,
                        request=body,
                    ) from None
            except openai.APITimeoutError:
                last = f"timed out after {self.endpoint.timeout_s:g} s"
            except openai.APIConnectionError as exc:
                last = f"connection error ({exc.message})"
            else:
                choice = response.choices[0] if response.choices else None
                usage = response.usage
                return ChatReply(
                    text=(choice.message.content if choice is not None else None) or "",
                    model_reported=response.model,
                    system_fingerprint=response.system_fingerprint,
                    prompt_tokens=usage.prompt_tokens if usage is not None else None,
                    completion_tokens=usage.completion_tokens if usage is not None else None,
                    finish_reason=choice.finish_reason if choice is not None else None,
                    attempts=attempts,
                    latency_s=time.monotonic() - started,
                    request=body,
                )
            if failures >= self.endpoint.max_retries:
                raise JudgeCallError(
                    "call_failed",
                    f"{last}; gave up after {attempts} attempt{'s' if attempts != 1 else ''}",
                    retryable=True,
                    attempts=attempts,
                    request=body,
                )
            if delay is None:
                delay = backoff_delay(
                    failures,
                    base=self.endpoint.retry_base_delay_s,
                    cap=self.endpoint.retry_max_delay_s,
                    jitter=self._random.random(),
                )
            failures += 1
            self._sleep(delay)

    def _complete_remote(
        self,
        executor: Executor,
        messages: Sequence[Mapping[str, str]],
        *,
        schema: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
    ) -> ChatReply:
        with self._client_lock:
            if self._remote is None:
                self._remote = RemoteChat(executor, self.endpoint, local_client)
            remote = self._remote
        return remote.complete(self, messages, schema=schema, headers=headers)


def _error_message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return str(getattr(exc, "message", exc))


def local_client(endpoint: Endpoint) -> JudgeClient:
    """A client that calls ``endpoint`` from this process: what a worker of :class:`RemoteChat` runs."""
    return JudgeClient(endpoint, executor=LocalExecutor())
