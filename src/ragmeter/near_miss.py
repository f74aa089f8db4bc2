"""Unknown keys that look like a misspelt field: the one check every reader of records shares.

>>> near_miss_key({"titel": "x"}, ["title", "snippet"])
('titel', 'title')
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

NEAR_MISS_CUTOFF = 0.85
"""How close (difflib ratio, case-insensitive) an unknown key must be to a field to count as its typo."""


def near_miss_key(value: Any, fields: Iterable[str]) -> tuple[str, str] | None:
    """An unknown key of ``value`` that looks like a misspelt field the mapping does not set.

    Records may carry fields of their own (``question``, ``candidates``, a system's ``debug``), so
    unknown keys are allowed — except a near miss of a known field that is absent, which would
    otherwise be silently ignored (``retreived`` scoring an empty ranking as 0).

    >>> near_miss_key({"retreived": ["a"]}, ["retrieved", "answer"])
    ('retreived', 'retrieved')
    >>> near_miss_key({"retrieved": [], "retreived": []}, ["retrieved"]) is None
    True
    """
    if not isinstance(value, dict):
        return None
    names = fields if isinstance(fields, dict) else dict.fromkeys(fields)  # a model's fields: a dict
    if value.keys() <= names.keys():  # the common case: no unknown key
        return None
    lowered = {f.lower(): f for f in names if f not in value}
    choices = list(lowered)
    for key in value:
        if not isinstance(key, str) or key in names:
            continue
        close = difflib.get_close_matches(key.lower(), choices, n=1, cutoff=NEAR_MISS_CUTOFF)
        swapped = [c for c in choices if _one_swap(key.lower(), c)]
        if close or swapped:
            return key, lowered[(close or swapped)[0]]
    return None


def _one_swap(a: str, b: str) -> bool:
    """Whether ``a`` is ``b`` with two neighbouring letters swapped (``gian`` / ``gain``).

    >>> _one_swap("gian", "gain"), _one_swap("gains", "gain")
    (True, False)
    """
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    return (
        len(a) == len(b)
        and len(diff) == 2
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and a[diff[1]] == b[diff[0]]
    )
