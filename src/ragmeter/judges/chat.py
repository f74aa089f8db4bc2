"""One chat call's data: the endpoint it goes to, the reply it brings back, the error when it brings none.

Shared by the client (:mod:`ragmeter.judges.client`), the judges' remote calls
(:mod:`ragmeter.judges.remote_chat`), the judge engine and the LLM solver of mining. The
protocols say what the engine (:class:`ChatClient`) and the remote calls
(:class:`ModalChatClient`) need of a client; :class:`~ragmeter.judges.client.JudgeClient` is both.

>>> Endpoint("http://127.0.0.1:9/v1", "m", "no-key", 0.0, 0, 16, 5.0, 0, 0.1, 1.0, "auto").concurrency is None
True
>>> JudgeCallError("call_failed", "timed out", retryable=True, attempts=3).reason
'timed out'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ragmeter.redaction import register_secret, register_url

FormatMode = Literal["json_schema", "json_object", "none"]


@dataclass(frozen=True)
class Endpoint:
    """Everything needed to call one endpoint; built from a :class:`~ragmeter.judges.config.JudgeConfig`."""

    base_url: str
    model: str
    api_key: str
    temperature: float
    seed: int | None
    max_tokens: int
    timeout_s: float
    max_retries: int
    retry_base_delay_s: float
    retry_max_delay_s: float
    response_format: Literal["auto", "json_schema", "json_object", "none"]
    concurrency: int | None = None
    """Calls in flight allowed at this endpoint; with an executor, a limit for the whole cluster."""

    def __post_init__(self) -> None:
        # what is sent is a secret from now on: it never reaches a file, a log or a message
        register_secret(self.api_key)
        register_url(self.base_url)


@dataclass(frozen=True)
class ChatReply:
    """One completed chat call."""

    text: str
    model_reported: str | None
    system_fingerprint: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    finish_reason: str | None
    attempts: int
    latency_s: float
    request: dict[str, Any]


class JudgeCallError(Exception):
    """A call that produced no reply: ``code`` and a one-line ``reason``; ``retryable`` on a later run."""

    def __init__(
        self, code: str, reason: str, *, retryable: bool, attempts: int, request: dict[str, Any] | None = None
    ) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.retryable = retryable
        self.attempts = attempts
        self.request = request


class ChatClient(Protocol):
    """What the judge engine needs of a client: one chat completion."""

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        schema: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> ChatReply:
        """Send one chat completion (raising :class:`JudgeCallError` when it fails)."""
        ...


class ModalChatClient(ChatClient, Protocol):
    """A client with a structured-output mode that copies of it (on workers) can step down."""

    @property
    def format_mode(self) -> FormatMode:
        """The structured-output mode currently in use."""
        ...

    def adopt_mode(self, mode: FormatMode) -> None:
        """Step down to ``mode`` (a copy of the client found the server needs it)."""
        ...
