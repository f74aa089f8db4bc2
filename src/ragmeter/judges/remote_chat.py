"""Judge calls on an executor: the chat request is sent from a worker, the reply comes back.

The judges stay on the driver — prompts, the SQLite cache, the cost meter, the judge log,
the repair request — and only :meth:`JudgeClient.complete
<ragmeter.judges.client.JudgeClient.complete>` runs on a worker, with the same retry
policy. The executor only runs what it is handed: a :class:`ChatWorker` state (the endpoint,
the limiter and the function that makes the worker's client, given by the client module)
and :func:`complete_on_worker`. Each worker keeps one client per structured-output mode; when a worker steps the
mode down, the driver's client adopts the step for the rest of the run, as a local client
would. With ``Endpoint.concurrency`` set, calls hold a slot of the endpoint's cluster-wide
limiter, so every ragmeter process on the cluster shares the endpoint's limit.

>>> from ragmeter.judges.chat import Endpoint
>>> endpoint = Endpoint("http://127.0.0.1:9/v1", "m", "no-key", 0.0, 0, 16, 5.0, 0, 0.1, 1.0, "auto")
>>> limiter_key(endpoint)
'chat:http://127.0.0.1:9/v1|m'
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.executors.base import Executor, Limiter, WorkerPool
from ragmeter.judges.cache import normalise_endpoint
from ragmeter.judges.chat import ChatReply, Endpoint, FormatMode, JudgeCallError, ModalChatClient

DEFAULT_PER_WORKER = 16
"""Calls one worker runs at once when the endpoint sets no concurrency (the judges' threads bound it)."""


def limiter_key(endpoint: Endpoint) -> str:
    """The limiter key of an endpoint: its normalised URL and the model."""
    return f"chat:{normalise_endpoint(endpoint.base_url)}|{endpoint.model}"


@dataclass
class ChatWorker:
    """A worker's state: the endpoint, the limiter, the client maker, and one client per starting mode.

    ``make_client`` is picklable (a module-level function) and makes a client that calls the
    endpoint from the worker's own process.
    """

    endpoint: Endpoint
    limiter: Limiter | None
    make_client: Callable[[Endpoint], ModalChatClient]
    clients: dict[str, ModalChatClient] | None = field(default=None, repr=False)
    lock: Any = field(default=None, repr=False)


def start_chat_worker(state: ChatWorker) -> None:
    """Made once per worker process (locks and clients do not travel)."""
    state.clients = {}
    state.lock = threading.Lock()


def _client_for(state: ChatWorker, mode: FormatMode) -> ModalChatClient:
    """The worker's client that starts in ``mode`` (made on first use; the call runs here, locally)."""
    if state.clients is None or state.lock is None:  # pragma: no cover - the pool runs start first
        start_chat_worker(state)
    clients = state.clients
    if clients is None:  # pragma: no cover - start_chat_worker set it
        raise RuntimeError("the chat worker was not started")
    with state.lock:
        client = clients.get(mode)
        if client is None:
            endpoint = replace(state.endpoint, response_format=mode)
            client = clients[mode] = state.make_client(endpoint)
    return client


def complete_on_worker(
    state: ChatWorker,
    messages: Sequence[Mapping[str, str]],
    schema: Mapping[str, Any] | None,
    headers: Mapping[str, str] | None,
    mode: FormatMode,
) -> tuple[str, Any, FormatMode]:
    """One chat call on the worker: ``(status, value, mode the client ended in)``."""
    client = _client_for(state, mode)
    try:
        with state.limiter.hold() if state.limiter is not None else nullcontext():
            reply = client.complete(messages, schema=schema, headers=headers)
    except JudgeCallError as exc:
        return (
            "call_error",
            (exc.code, exc.reason, exc.retryable, exc.attempts, exc.request),
            client.format_mode,
        )
    except ConfigError as exc:
        return "config_error", (exc.message, exc.where), client.format_mode
    return "ok", reply, client.format_mode


class RemoteChat:
    """The driver's side: a pool of chat workers for one endpoint.

    ``make_client(endpoint)`` makes each worker's client (see :class:`ChatWorker`).
    """

    def __init__(
        self, executor: Executor, endpoint: Endpoint, make_client: Callable[[Endpoint], ModalChatClient]
    ) -> None:
        limit = endpoint.concurrency
        limiter = None
        if limit is not None:
            limiter = executor.limiter(limiter_key(endpoint), limit)
        self._pool: WorkerPool[ChatWorker] = executor.pool(
            ChatWorker(endpoint, limiter, make_client),
            name="judge",
            size=1,
            per_worker=limit or DEFAULT_PER_WORKER,
            cpus=0.0,
            start=start_chat_worker,
        )

    def complete(
        self,
        client: ModalChatClient,
        messages: Sequence[Mapping[str, str]],
        *,
        schema: Mapping[str, Any] | None,
        headers: Mapping[str, str] | None,
    ) -> ChatReply:
        """Send the call from a worker; raise what the local client would have raised."""
        future: Future[tuple[str, Any, FormatMode]] = self._pool.submit(
            complete_on_worker,
            [dict(m) for m in messages],
            dict(schema) if schema is not None else None,
            dict(headers or {}),
            client.format_mode,
        )
        try:
            status, value, mode = future.result()
        except Exception as exc:  # the worker died beyond its retries: a failed call, judged again later
            reason = f"the worker was lost ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
            raise JudgeCallError("call_failed", reason, retryable=True, attempts=0) from None
        client.adopt_mode(mode)
        if status == "config_error":
            message, where = value
            raise ConfigError(message, where=where)
        if status == "call_error":
            code, reason, retryable, attempts, request = value
            raise JudgeCallError(code, reason, retryable=retryable, attempts=attempts, request=request)
        reply: ChatReply = value
        return reply

    def close(self) -> None:
        """Stop the workers."""
        self._pool.close()
