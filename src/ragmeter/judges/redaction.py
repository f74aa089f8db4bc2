"""Keeping a judge's secrets out of what ragmeter writes: URL credentials, query values, API keys.

>>> redact_url("https://user:pw@llm.example/v1?key=abc")
'https://***@llm.example/v1?key=***'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ragmeter.judges.config import JudgeConfig


def redact_url(url: str) -> str:
    """``url`` without secrets: user info and query values become ``***``.

    >>> redact_url("http://127.0.0.1:8000/v1")
    'http://127.0.0.1:8000/v1'
    """
    parts = urlsplit(url)
    if not parts.username and not parts.password and not parts.query:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = ("***@" if parts.username or parts.password else "") + host
    if parts.port is not None:
        netloc += f":{parts.port}"
    query = "&".join(f"{key}=***" for key, _ in parse_qsl(parts.query, keep_blank_values=True))
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def judge_secrets(cfg: JudgeConfig) -> dict[str, str]:
    """Text of ``cfg`` that must not reach a result file → what to write instead.

    The values of its API key variables (4 characters or more) and its URLs' credentials.
    """
    out: dict[str, str] = {}
    urls = [cfg.base_url]
    envs = [cfg.api_key_env]
    if cfg.reliability is not None:
        urls.append(cfg.reliability.base_url or cfg.base_url)
        envs.append(cfg.reliability.api_key_env)
    for name in envs:
        value = os.environ.get(name) if name else None
        if value and len(value) >= 4:
            out[value] = "***"
    for url in urls:
        redacted = redact_url(url)
        if redacted != url:
            out[url] = redacted
    return out


def scrub(value: Any, secrets: Mapping[str, str]) -> Any:
    """A copy of ``value`` (JSON-like) with every secret string replaced.

    >>> scrub({"a": ["key sk-123 here"]}, {"sk-123": "***"})
    {'a': ['key *** here']}
    """
    if not secrets:
        return value
    if isinstance(value, str):
        for secret, replacement in secrets.items():
            value = value.replace(secret, replacement)
        return value
    if isinstance(value, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v, secrets) for v in value]
    return value
