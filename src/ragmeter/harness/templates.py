"""Request templates of the http system: ``${ENV}`` secrets, ``{{ expression }}`` sample fields.

Two kinds of placeholder, kept apart on purpose:

* ``${NAME}`` is replaced by the environment variable ``NAME`` when the
  request is built. The suite, ``config.json`` and error messages only ever
  show ``${NAME}``; the value is a secret (see :mod:`ragmeter.redaction`).
* ``{{ expression }}`` is a JMESPath expression over the *call context*
  ``{"question": ..., "id": ..., "k": ..., "sample": {...}}``. A string that is
  exactly one placeholder keeps the value's JSON type (``"{{ k }}"`` → ``5``);
  inside a longer string the value is written as text.

>>> t = compile_template({"q": "{{ question }}", "k": "{{ k }}", "note": "id={{ id }}"})
>>> render_template(t, {"question": "Why?", "id": "q-1", "k": 5, "sample": {}})
{'q': 'Why?', 'k': 5, 'note': 'id=q-1'}
>>> expand_env("Bearer ${TOKEN}", {"TOKEN": "s3cret"})
'Bearer s3cret'
>>> env_names("${A}/x/${B}")
['A', 'B']
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter.extras import import_optional

ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}")


class TemplateError(ValueError):
    """A template or a JMESPath expression is malformed, or renders to nothing."""


def env_names(text: str) -> list[str]:
    """The environment variables a string refers to, in order of appearance."""
    return ENV_REFERENCE.findall(text)


def expand_env(text: str, environ: Mapping[str, str]) -> str:
    """Replace each ``${NAME}`` by its value; a missing variable raises :class:`TemplateError`."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise TemplateError(f"environment variable {name} is not set")
        return environ[name]

    return ENV_REFERENCE.sub(value, text)


def _jmespath() -> Any:
    """The ``jmespath`` package (of the ``http`` extra), imported when an expression is first compiled."""
    return import_optional(
        "jmespath", needed_for="JMESPath expressions (http system templates, response fields)"
    )


def compile_jmespath(expression: str) -> Any:
    """Compile a JMESPath expression; a syntax error becomes a one-line :class:`TemplateError`.

    >>> compile_jmespath("a.b").search({"a": {"b": 1}})
    1
    >>> compile_jmespath("a..b")
    Traceback (most recent call last):
    ...
    ragmeter.harness.templates.TemplateError: 'a..b' is not a valid JMESPath expression (column 3: unexpected '.')
    """
    if not expression.strip():
        raise TemplateError("empty JMESPath expression")
    jmespath = _jmespath()
    try:
        return jmespath.compile(expression)
    except jmespath.exceptions.JMESPathError as exc:
        position = getattr(exc, "lex_position", None)
        token = getattr(exc, "token_value", None)
        if isinstance(position, int) and token is not None:
            detail = f"column {position + 1}: unexpected {token!r}"
        else:
            detail = str(exc).splitlines()[0].strip()
        raise TemplateError(f"{expression!r} is not a valid JMESPath expression ({detail})") from None


@dataclass(frozen=True)
class _Text:
    """A string with placeholders: literal pieces and compiled expressions, interleaved."""

    pieces: tuple[str, ...]
    expressions: tuple[Any, ...]
    sources: tuple[str, ...]


@dataclass(frozen=True)
class _Whole:
    """A string that is exactly one placeholder: renders to the value itself."""

    expression: Any
    source: str


def compile_template(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """Compile every placeholder in a JSON-like value (dicts, lists, strings, scalars).

    With ``environ``, the ``${NAME}`` references in the literal text are expanded
    now (never those in the values a placeholder produces later).
    """
    if isinstance(value, dict):
        return {str(key): compile_template(item, environ) for key, item in value.items()}
    if isinstance(value, list):
        return [compile_template(item, environ) for item in value]
    if not isinstance(value, str):
        return value
    env = (lambda text: expand_env(text, environ)) if environ is not None else (lambda text: text)
    if "{{" not in value:
        return env(value)
    whole = PLACEHOLDER.fullmatch(value.strip())
    if whole is not None and "{{" not in whole.group(1):
        return _Whole(compile_jmespath(whole.group(1)), whole.group(1))
    pieces: list[str] = []
    expressions: list[Any] = []
    sources: list[str] = []
    last = 0
    for match in PLACEHOLDER.finditer(value):
        pieces.append(env(value[last : match.start()]))
        expressions.append(compile_jmespath(match.group(1)))
        sources.append(match.group(1))
        last = match.end()
    pieces.append(env(value[last:]))
    return _Text(tuple(pieces), tuple(expressions), tuple(sources))


def _as_text(value: Any, source: str) -> str:
    if value is None:
        raise TemplateError(f"placeholder {{{{ {source} }}}} has no value for this sample")
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def render_template(template: Any, context: Mapping[str, Any]) -> Any:
    """Fill a compiled template from ``context`` (the call context) and return plain JSON data."""
    if isinstance(template, dict):
        return {key: render_template(item, context) for key, item in template.items()}
    if isinstance(template, list):
        return [render_template(item, context) for item in template]
    try:
        if isinstance(template, _Whole):
            return template.expression.search(context)
        if isinstance(template, _Text):
            out = [template.pieces[0]]
            for expression, source, piece in zip(
                template.expressions, template.sources, template.pieces[1:], strict=True
            ):
                out.append(_as_text(expression.search(context), source))
                out.append(piece)
            return "".join(out)
    except _jmespath().exceptions.JMESPathError as exc:
        raise TemplateError(f"template expression failed: {str(exc).splitlines()[0]}") from None
    return template
