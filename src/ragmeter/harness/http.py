"""The ``http`` system: one JSON request per question, the response mapped with JMESPath.

Retryable: connection errors, HTTP 5xx and 429 (with ``Retry-After``). Not
retryable: other 4xx, a body that is not JSON, a response the mapping cannot
turn into the output contract. Messages name the URL as written in the suite;
the values of its ``${ENV}`` references and of its secret headers are
registered with :mod:`ragmeter.redaction`, so no writer lets them out.

>>> mapping = ResponseMapping({"answer": "data.text", "retrieved": "data.hits[].{id: doc}"})
>>> mapping.apply({"data": {"text": "42", "hits": [{"doc": "a"}, {"doc": "b"}]}})
{'answer': '42', 'retrieved': [{'id': 'a'}, {'id': 'b'}]}
>>> parse_retry_after("3")
3.0
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx
import jmespath.exceptions

from ragmeter.errors import ConfigError
from ragmeter.harness.calls import CallFailed, one_line, parse_retry_after, question_of, sample_dict
from ragmeter.harness.suite import HttpSystem
from ragmeter.harness.templates import (
    TemplateError,
    compile_jmespath,
    compile_template,
    expand_env,
    render_template,
)
from ragmeter.io.jsonyaml import JsonError, parse_json
from ragmeter.redaction import is_secret_name, register_env, register_header, register_secret, register_url
from ragmeter.schema.samples import Sample

SNIPPET_CHARS = 120


class ResponseMapping:
    """Output field → JMESPath expression over the JSON response (``None`` results are left out)."""

    def __init__(self, fields: Mapping[str, str] | None) -> None:
        self._fields = {name: compile_jmespath(expr) for name, expr in (fields or {}).items()}

    def apply(self, body: Any) -> Any:
        """The output for one response body (the body itself when no mapping was given)."""
        if not self._fields:
            return body
        output: dict[str, Any] = {}
        for name, expression in self._fields.items():
            try:
                value = expression.search(body)
            except jmespath.exceptions.JMESPathError as exc:
                raise CallFailed(
                    f"response mapping for {name!r} failed: {str(exc).splitlines()[0]}"
                ) from None
            if value is not None:
                output[name] = value
        return output


def _refused(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or "refused" in str(current).lower():
            return True
        current = current.__cause__ or current.__context__
    return False


def _register_named(template: Any, env: Mapping[str, str]) -> None:
    """Register the literal values of credential-named fields (``api_key: ...``) of a request template."""
    if isinstance(template, list):
        for item in template:
            _register_named(item, env)
    elif isinstance(template, dict):
        for name, value in template.items():
            if isinstance(value, str) and is_secret_name(str(name)) and "{{" not in value:
                register_secret(expand_env(value, env))
            else:
                _register_named(value, env)


def _snippet(content: bytes) -> str:
    text = content.decode("utf-8", errors="replace")
    return repr(one_line(text, SNIPPET_CHARS)) if text.strip() else "empty body"


class HttpAdapter:
    """Calls an HTTP JSON endpoint with :class:`httpx.AsyncClient`."""

    def __init__(
        self,
        system: HttpSystem,
        *,
        concurrency: int,
        timeout_seconds: float,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        env = os.environ if environ is None else environ
        self.system = system
        self.description = system.url
        for _, name in system.env_references():
            register_env(name, env)
        try:
            self._url = expand_env(system.url, env)
            self._headers = {name: expand_env(value, env) for name, value in system.headers.items()}
            secret = {name.lower() for name in system.secret_headers}
            for name, value in self._headers.items():
                register_header(name, value, secret=name.lower() in secret)
            register_url(self._url)
            _register_named(system.params, env)
            _register_named(system.body, env)
            self._params = compile_template(system.params, env) if system.params else None
            self._body = compile_template(system.body, env) if system.body is not None else None
        except TemplateError as exc:  # load_suite checks the environment first; this is a backstop
            raise ConfigError(f"system: {exc}") from None
        self._mapping = ResponseMapping(system.response)
        self._concurrency = concurrency
        self._timeout = timeout_seconds
        self._client: httpx.AsyncClient | None = None

    async def start(self) -> None:
        """Open the connection pool (one connection per concurrent call)."""
        limits = httpx.Limits(max_connections=self._concurrency, max_keepalive_connections=self._concurrency)
        # httpx's own timeout is a backstop; the runner enforces the per-call wall-clock limit.
        self._client = httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(self._timeout + 5.0))

    async def aclose(self) -> None:
        """Close the connection pool."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def request_parts(self, sample: Sample, *, k: int) -> tuple[dict[str, Any] | None, Any]:
        """The rendered query parameters and JSON body for one sample."""
        context = {"question": question_of(sample), "id": sample.id, "k": k, "sample": sample_dict(sample)}
        try:
            params = render_template(self._params, context) if self._params is not None else None
            body = render_template(self._body, context) if self._body is not None else None
        except TemplateError as exc:
            raise CallFailed(f"request template: {exc}") from None
        return params, body

    async def call(self, sample: Sample, *, k: int) -> Any:
        """Send one request and map its JSON response to the output contract."""
        if self._client is None:
            raise RuntimeError("HttpAdapter.start() was not called")
        params, body = self.request_parts(sample, k=k)
        try:
            response = await self._client.request(
                self.system.method,
                self._url,
                headers=self._headers,
                params=params,
                json=body,
            )
        except httpx.TimeoutException:
            raise TimeoutError from None
        except httpx.TransportError as exc:
            if _refused(exc):
                raise CallFailed(
                    f"connection refused: {self.description}", retryable=True, refused=True
                ) from None
            detail = str(exc) or type(exc).__name__
            raise CallFailed(f"connection error: {detail} ({self.description})", retryable=True) from None
        status = response.status_code
        if status == 429 or status >= 500:
            raise CallFailed(
                f"HTTP {status} {response.reason_phrase}: {_snippet(response.content)}",
                retryable=True,
                retry_after=parse_retry_after(response.headers.get("Retry-After")),
            )
        if status >= 400:
            raise CallFailed(f"HTTP {status} {response.reason_phrase}: {_snippet(response.content)}")
        try:
            data = parse_json(response.content.decode("utf-8-sig"))
        except (JsonError, UnicodeDecodeError) as exc:
            reason = exc.reason if isinstance(exc, JsonError) else "not UTF-8"
            raise CallFailed(
                f"malformed JSON in the response ({reason}): {_snippet(response.content)}"
            ) from None
        return self._mapping.apply(data)
