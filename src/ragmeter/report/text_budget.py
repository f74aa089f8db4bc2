"""Fitting the report's long texts into a size budget.

The drill-down data is built once, every long text (chunk texts, answers,
judge rationales and raw replies) made with :meth:`LongTexts.add`. After
:meth:`LongTexts.fit` has picked the most generous :class:`Limits` whose
estimated size fits the budget, :func:`dumps` writes each text cut to its
kind's limit, ending in ``…`` (a limit of 0 writes ``null``). Nothing walks the
data twice: the texts are cut as the JSON is written.

>>> texts = LongTexts()
>>> data = {"a": texts.add("answer", "x" * 50), "n": [1, 2]}
>>> texts.fit(dumps(data), budget=10_000)
{}
>>> texts.fit(dumps(data), budget=30, levels=(Limits(100, 100, 100, 100), Limits(0, 10, 0, 0)))
{'answer': 10}
>>> dumps(data)
'{"a":"xxxxxxxxx…","n":[1,2]}'
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Limits:
    """How many characters of each kind of long text the page keeps."""

    chunk_text: int
    answer: int
    raw_reply: int
    rationale: int


LEVELS = (
    Limits(1200, 4000, 4000, 2000),
    Limits(400, 1500, 1000, 800),
    Limits(200, 800, 300, 400),
    Limits(120, 400, 120, 240),
    Limits(120, 300, 0, 200),
    Limits(60, 240, 0, 160),
    Limits(0, 160, 0, 120),
    Limits(0, 120, 0, 80),
)
"""From generous to lean; :meth:`LongTexts.fit` uses the first that fits the budget. Raw judge
replies go before chunk texts: the verdict and rationale they hold stay on the page."""


class LongText:
    """A text that may be cut to fit the budget; :func:`dumps` writes :attr:`shown`."""

    __slots__ = ("kind", "shown", "text")

    def __init__(self, kind: str, text: str) -> None:
        self.kind = kind
        self.text = text
        self.shown: str | None = text

    def cut(self, limit: int) -> bool:
        """Show at most ``limit`` characters; ``True`` when the text had to be cut."""
        if len(self.text) <= limit:
            self.shown = self.text
            return False
        self.shown = self.text[: limit - 1] + "…" if limit > 1 else None
        return True


class LongTexts:
    """Every long text of one page, so they can be cut together."""

    def __init__(self) -> None:
        self.items: list[LongText] = []

    def add(self, kind: str, text: Any) -> LongText | None:
        """A long text of ``kind`` (a :class:`Limits` field); non-text values as JSON; ``None`` stays ``None``."""
        if text is None:
            return None
        item = LongText(kind, text if isinstance(text, str) else json.dumps(text, ensure_ascii=False))
        self.items.append(item)
        return item

    def fit(self, full_json: str, *, budget: int, levels: Sequence[Limits] = LEVELS) -> dict[str, int]:
        """Cut every text to the first level under ``budget`` bytes (else the last); return what was cut.

        ``full_json`` is the data written with every text whole; each level's size is estimated
        from it by the bytes its cuts save.
        """
        full = len(full_json.encode("utf-8"))
        sizes = [(item.kind, len(item.text.encode("utf-8"))) for item in self.items]

        def estimate(limits: Limits) -> int:
            saved = 0
            for kind, size in sizes:
                limit: int = getattr(limits, kind)
                saved += max(0, size - limit)
            return full - saved

        chosen = next((lv for lv in levels if estimate(lv) <= budget), levels[-1])
        cut: dict[str, int] = {}
        for item in self.items:
            limit: int = getattr(chosen, item.kind)
            if item.cut(limit):
                cut[item.kind] = limit
        return {kind: cut[kind] for kind in sorted(cut)}


def _shown(value: Any) -> Any:
    if isinstance(value, LongText):
        return value.shown
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def dumps(data: Any) -> str:
    """Compact JSON of ``data``, each :class:`LongText` written as its shown text."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_shown)
