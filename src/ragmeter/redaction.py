"""Secrets out of everything ragmeter writes: one registry of the secrets it sends, one redaction step.

A secret is registered when ragmeter is about to send it:

- the value of every API-key variable it reads (a judge's or the LLM solver's ``api_key_env``,
  each ``${NAME}`` of an http system), and the password or credential-named query values of an
  endpoint URL;
- the value of a request header that is marked secret (an http system's ``secret_headers``) or
  whose name looks like a credential (:func:`is_secret_name`: Authorization,
  Proxy-Authorization, Cookie, X-Api-Key, Api-Key, anything with ``auth``, ``token``,
  ``secret``, ``key``, ``password``, ``session``, ``cookie``, ``credential`` or ``signature``).

Values shorter than :data:`MIN_SECRET_LENGTH` (8) characters are not registered: they are not
credentials worth the name (``EMPTY``, ``ollama``) and replacing them would garble ordinary text.

Every writer (:mod:`ragmeter.io.atomic`, the append-only logs, the SQLite cache and history, the
CLI's stdout and stderr) passes what it writes through :func:`redact`: each occurrence of a
registered value — as sent, JSON-escaped, HTML-escaped or URL-encoded — becomes
:data:`MARKER`. The registry lives as long as the process (the CLI starts each command afresh).

>>> forget_secrets()
>>> register_secret("sk-live-0123456789")
True
>>> redact('{"echo": "Bearer sk-live-0123456789"}')
'{"echo": "Bearer [REDACTED]"}'
>>> register_secret("short")
False
>>> redact_data({"k": ["sk-live-0123456789", 3]})
{'k': ['[REDACTED]', 3]}
>>> forget_secrets()
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import IO, Any
from urllib.parse import parse_qsl, quote, quote_plus, urlsplit, urlunsplit

MARKER = "[REDACTED]"
"""What a secret is replaced by, wherever ragmeter writes it."""
MIN_SECRET_LENGTH = 8
"""Values shorter than this are not treated as secrets (see the module docstring)."""

SECRET_NAME = re.compile(
    r"auth|token|secret|key|passw|pwd|session|cookie|credential|signature|^sig$", re.IGNORECASE
)
"""Header and query-parameter names whose values are secrets."""
_SCHEME = re.compile(r"^\s*(?:Bearer|Basic|Token|Bot|Digest|ApiKey|Key)\s+", re.IGNORECASE)

_lock = threading.Lock()
_secrets: set[str] = set()
_forms: tuple[str, ...] = ()
_pattern: re.Pattern[str] | None = None


def is_secret_name(name: str) -> bool:
    """Whether a header or query parameter called ``name`` carries a secret.

    >>> [is_secret_name(n) for n in ("Authorization", "X-Api-Key", "Cookie", "Accept", "api-version")]
    [True, True, True, False, False]
    """
    return bool(SECRET_NAME.search(name))


def _forms_of(value: str) -> set[str]:
    """``value`` as it may appear in what ragmeter writes: raw, JSON-, HTML- and URL-escaped."""
    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        html.escape(value),
        html.escape(value, quote=False),
        quote(value),
        quote(value, safe=""),
        quote_plus(value, safe=""),
    }
    return {form for form in forms if len(form) >= MIN_SECRET_LENGTH}


def register_secret(value: str | None) -> bool:
    """Treat ``value`` as a secret from now on; ``False`` (and nothing registered) when it is too short.

    Surrounding whitespace is not part of the secret.
    """
    global _forms, _pattern
    value = (value or "").strip()
    if len(value) < MIN_SECRET_LENGTH:
        return False
    with _lock:
        if value in _secrets:
            return True
        _secrets.add(value)
        forms = set(_forms) | _forms_of(value)
        _forms = tuple(sorted(forms, key=lambda form: (-len(form), form)))
        # An odd run of backslashes just before a match is swallowed with it, so that JSON or YAML
        # text never ends up with an escape sequence cut in two ("\[REDACTED]"). The run is lazy:
        # where a form starts at the run's first backslash (the JSON form of a secret that starts
        # with one), that whole form matches, not the raw form one backslash later.
        _pattern = re.compile(r"(\\*?)(?:" + "|".join(re.escape(form) for form in _forms) + ")")
    return True


def register_env(name: str | None, environ: Mapping[str, str] | None = None) -> bool:
    """Register the value of the environment variable ``name`` (when it is set and long enough)."""
    if not name:
        return False
    env = os.environ if environ is None else environ
    return register_secret(env.get(name))


def register_header(name: str, value: str, *, secret: bool = False) -> None:
    """Register a request header's value when it is ``secret`` or its name says so (:func:`is_secret_name`).

    The credential after an auth scheme (``Bearer``, ``Basic``, …) and each cookie value count too.

    >>> forget_secrets()
    >>> register_header("Authorization", "Bearer tok-abcdef123")
    >>> redact("you sent Bearer tok-abcdef123")
    'you sent Bearer [REDACTED]'
    >>> forget_secrets()
    """
    if not (secret or is_secret_name(name)):
        return
    register_secret(_SCHEME.sub("", value))  # the credential; "Bearer" itself is no secret
    if "cookie" in name.lower():
        for part in value.split(";"):
            register_secret(part.partition("=")[2])


def register_url(url: str) -> None:
    """Register the password and the credential-named query values (``?api_key=…``) of ``url``."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return
    register_secret(password)
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if is_secret_name(name):
            register_secret(value)


def forget_secrets() -> None:
    """Empty the registry (a new run; tests)."""
    global _forms, _pattern
    with _lock:
        _secrets.clear()
        _forms = ()
        _pattern = None


def _swallow(match: re.Match[str]) -> str:
    run = match.group(1)
    return run[: len(run) - len(run) % 2] + MARKER


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by :data:`MARKER`."""
    pattern, forms = _pattern, _forms
    if pattern is None or not any(form in text for form in forms):
        return text
    return pattern.sub(_swallow, text)


def redact_data(value: Any) -> Any:
    """A copy of JSON-like ``value`` with every string (keys too) passed through :func:`redact`."""
    if _pattern is None:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact_data(key): redact_data(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_data(item) for item in value]
    return value


def redact_url(url: str) -> str:
    """``url`` fit to show: user info and query values become ``***``.

    >>> redact_url("https://user:pw@llm.example/v1?key=abc")
    'https://***@llm.example/v1?key=***'
    >>> redact_url("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return redact(url)
    if not parts.username and not parts.password and not parts.query:
        return redact(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = ("***@" if parts.username or parts.password else "") + host
    if port is not None:
        netloc += f":{port}"
    query = "&".join(f"{key}=***" for key, _ in parse_qsl(parts.query, keep_blank_values=True))
    return redact(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))


class RedactingStream:
    """A text stream that redacts what is written to it; everything else goes to the wrapped stream."""

    def __init__(self, stream: IO[str]) -> None:
        self.wrapped = stream

    def write(self, text: str) -> int:
        """Write ``text`` without its secrets."""
        self.wrapped.write(redact(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        """Write each line without its secrets (not through the wrapped stream's own writelines)."""
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


@contextmanager
def redacted_console() -> Iterator[None]:
    """Within the block, ``sys.stdout`` and ``sys.stderr`` redact what is printed (the CLI's last net)."""
    saved = sys.stdout, sys.stderr
    if saved[0] is not None:  # None without a console (pythonw)
        sys.stdout = RedactingStream(saved[0])
    if saved[1] is not None:
        sys.stderr = RedactingStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
