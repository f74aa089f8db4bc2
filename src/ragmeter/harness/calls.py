"""What every system adapter shares: the call protocol, call failures, and output checking.

An adapter turns one sample into one raw output. It raises :class:`CallFailed`
for anything that went wrong; the runner decides about retries (``retryable``),
waits (``retry_after``) and early stops (``refused``).

>>> finish_output(["doc-1", "doc-2"])
{'retrieved': [{'id': 'doc-1'}, {'id': 'doc-2'}]}
>>> finish_output(42)
Traceback (most recent call last):
...
ragmeter.harness.calls.CallFailed: the system returned int, expected an object with 'retrieved' (the output contract)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol, TypeVar

from ragmeter.errors import InputError
from ragmeter.io.outputs import parse_output
from ragmeter.redaction import redact
from ragmeter.schema.samples import Sample

T = TypeVar("T")

MAX_ERROR_CHARS = 300


class CallFailed(Exception):
    """One call to the system under test failed.

    ``retryable``: worth another attempt (connection errors, HTTP 5xx and 429);
    ``retry_after``: seconds the server asked us to wait; ``refused``: the
    connection was refused (the system is not there at all).
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        refused: bool = False,
    ) -> None:
        self.message = one_line(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.refused = refused
        super().__init__(self.message)


class Adapter(Protocol):
    """A system under test, as the runner sees it."""

    description: str
    """Short label for messages (the URL as written, the function name, …)."""

    async def start(self) -> None:
        """Open clients, build indexes; called once before the first call."""

    async def call(self, sample: Sample, *, k: int) -> Any:
        """Ask one question; return the raw output or raise :class:`CallFailed`."""

    async def aclose(self) -> None:
        """Release what :meth:`start` opened."""


def one_line(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """Collapse whitespace and cut long messages so an error stays on one line.

    Secrets are redacted before the cut, so that no part of one survives it.

    >>> one_line("a\\n   b")
    'a b'
    """
    flat = " ".join(redact(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe_exception(exc: BaseException) -> str:
    """``ValueError: message`` on one line (the type alone when the message is empty)."""
    text = str(exc)
    return one_line(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


_TIMEOUTS = frozenset({"TimeoutException", "APITimeoutError"})
"""Timeouts of httpx and of the OpenAI client (by class name: neither is imported here)."""
_CONNECTION_ERRORS = frozenset({"TransportError", "APIConnectionError"})


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date); ``None`` if absent/bad.

    >>> parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=datetime(2015, 10, 21, 7, 27, 58, tzinfo=UTC))
    2.0
    >>> parse_retry_after("soon") is None
    True
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    value = headers.get("Retry-After") if headers is not None and hasattr(headers, "get") else None
    if not isinstance(value, str):
        return None
    return parse_retry_after(value)


def _cause_chain(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def call_failure(exc: BaseException) -> BaseException:
    """The exception the runner should see for a framework's failure, as the http adapter reports it.

    A timeout anywhere in the cause chain (``TimeoutError``, httpx's and the OpenAI
    client's timeouts) is a timeout; an HTTP 429 / 5xx (with its ``Retry-After``) or a
    connection error is a retryable :class:`CallFailed`; anything else is a
    :class:`CallFailed` naming the exception, not retried.

    >>> call_failure(ValueError("bad")).message, call_failure(ConnectionResetError()).retryable
    ('ValueError: bad', True)
    >>> type(call_failure(RuntimeError("wrapped"))).__name__
    'CallFailed'
    """
    chain = _cause_chain(exc)
    names = {base.__name__ for error in chain for base in type(error).__mro__}
    if any(isinstance(error, TimeoutError) for error in chain) or names & _TIMEOUTS:
        return TimeoutError(describe_exception(exc))
    message = describe_exception(exc)
    for error in chain:
        status = _status(error)
        if status is not None and (status == 429 or status >= 500):
            return CallFailed(message, retryable=True, retry_after=_retry_after(error))
    if any(isinstance(error, ConnectionError) for error in chain) or names & _CONNECTION_ERRORS:
        return CallFailed(message, retryable=True)
    return CallFailed(message)


def question_of(sample: Sample) -> str | None:
    """The question text of a sample: ``input.question`` / ``input.query`` / a string input / ``question``.

    >>> question_of(Sample.model_validate({"id": "q", "question": "Why?"}))
    'Why?'
    """
    found = sample.question()
    if found is not None:
        return found
    extra = sample.model_extra or {}
    for key in ("question", "query"):
        value = extra.get(key)
        if isinstance(value, str):
            return value
    return None


def sample_dict(sample: Sample) -> dict[str, Any]:
    """The sample as plain JSON data, as passed to python systems and request templates."""
    return sample.model_dump(mode="json", exclude={"actual_output"}, exclude_none=True)


def finish_output(raw: Any) -> dict[str, Any]:
    """Check a raw output against the output contract and return it as a JSON-ready dict.

    A bare id list becomes ``{"retrieved": [{"id": ...}, ...]}``. Anything that
    cannot be written as JSON or does not fit the contract raises :class:`CallFailed`.
    """
    if isinstance(raw, list):
        raw = {"retrieved": [{"id": item} if isinstance(item, (str, int)) else item for item in raw]}
    if not isinstance(raw, dict):
        raise CallFailed(
            f"the system returned {type(raw).__name__}, expected an object with 'retrieved' (the output contract)"
        )
    try:
        text = json.dumps(raw, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise CallFailed(f"the output cannot be written as JSON ({exc})") from None
    output: dict[str, Any] = json.loads(text)
    try:
        parse_output(output, where="output")
    except InputError as exc:
        raise CallFailed(f"the output does not fit the contract: {exc.message}") from None
    return output


async def call_in_thread(function: Callable[[], T]) -> T:
    """Run a blocking call on its own daemon thread and await it.

    A daemon thread rather than a pool worker: when a call times out its thread
    cannot be stopped, but it must never keep the program from exiting.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if future.done():
            return
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def target() -> None:
        try:
            result: Any = function()
            ok = True
        except BaseException as exc:  # the call's own failure, reported to the awaiting task
            result, ok = exc, False
        # RuntimeError: the loop is gone (run finished or interrupted), so nobody is waiting
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, ok, result)

    threading.Thread(target=target, name="ragmeter-call", daemon=True).start()
    return await future
