"""Strict extraction of a judge's JSON object from its reply text.

A reply is accepted when it is one JSON object, or prose containing exactly one
*distinct* JSON object that validates against the judge's reply model (a
fenced ```` ```json ```` block counts). No object, no valid object, or two
different valid objects: the reply is rejected with a one-line reason, which
the engine uses for its single repair request.

>>> from pydantic import BaseModel
>>> class Reply(BaseModel):
...     score: int
>>> parse_reply('Sure! {"score": 4} Hope this helps.', Reply)
(Reply(score=4), None)
>>> parse_reply('{"score": 4', Reply)
(None, 'no JSON object found in the reply')
>>> parse_reply('{"score": 1} or maybe {"score": 2}', Reply)
(None, 'ambiguous reply: 2 different JSON objects fit the expected format')
"""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ragmeter.io.records import describe_validation_error

R = TypeVar("R", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n(.*?)```", re.DOTALL)


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, in order (nested objects are not listed twice).

    >>> json_objects('a {"x": {"y": 1}} b {"z": 2}')
    [{'x': {'y': 1}}, {'z': 2}]
    """
    stripped = text.strip()
    try:
        whole = json.loads(stripped)
    except (ValueError, RecursionError):  # not JSON, or too deep or long to read
        whole = None
    if isinstance(whole, dict):
        return [whole]
    found: list[dict[str, Any]] = []
    for block in _FENCE.findall(text):
        try:
            value = json.loads(block.strip())
        except (ValueError, RecursionError):  # not JSON, or too deep or long to read
            continue
        if isinstance(value, dict):
            found.append(value)
    if found:
        return found
    decoder = json.JSONDecoder()
    index = 0
    while True:
        start = text.find("{", index)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # not JSON, or too deep or long to read
            index = start + 1
            continue
        if isinstance(value, dict):
            found.append(value)
        index = end
    return found


def parse_reply(text: str, model: type[R]) -> tuple[R | None, str | None]:
    """Return ``(parsed, None)`` or ``(None, reason)``; never raises for a bad reply."""
    candidates = json_objects(text)
    if not candidates:
        return None, "no JSON object found in the reply" if text.strip() else "empty reply"
    valid: list[R] = []
    first_error: str | None = None
    for candidate in candidates:
        try:
            parsed = model.model_validate(candidate)
        except ValidationError as exc:
            first_error = first_error or describe_validation_error(exc)
            continue
        if all(parsed != seen for seen in valid):
            valid.append(parsed)
    if len(valid) == 1:
        return valid[0], None
    if len(valid) > 1:
        return None, f"ambiguous reply: {len(valid)} different JSON objects fit the expected format"
    return None, f"JSON object does not fit the expected format: {first_error}"
