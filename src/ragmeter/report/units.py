"""How the report shows a metric: its unit, its number format and which way is better.

Results store latencies in seconds, costs in USD and token counts as means per
question; the report shows latencies in milliseconds, costs with ``USD``,
tokens as whole numbers and every other value with four decimals. The page's
script formats per-query values from the same :class:`Unit` (``style``,
``scale``, ``suffix``), so the tables and the drill-down agree.

>>> format_value(0.000893, metric_unit("latency_p50.retrieval"))
'0.89 ms'
>>> format_value(123.6, metric_unit("tokens_prompt")), format_value(0.0042, metric_unit("cost"))
('124 tokens', '0.0042 USD')
>>> format_value(0.825460, metric_unit("ndcg@10")), format_value(None, metric_unit("mrr"))
('0.8255', '')
>>> metric_direction("error_rate"), metric_direction("hit@5"), metric_direction("SRR")
(False, True, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Style = Literal["fixed4", "ms", "usd", "int", "seconds", "percent"]


@dataclass(frozen=True)
class Unit:
    """A number format: ``style`` (see :func:`format_value`), a factor applied first, a suffix."""

    style: Style = "fixed4"
    scale: float = 1.0
    suffix: str = ""

    def as_json(self) -> dict[str, object]:
        """The unit as the page's script reads it."""
        return {"style": self.style, "scale": self.scale, "suffix": self.suffix}


PLAIN = Unit()
MILLISECONDS = Unit("ms", 1000.0, "ms")
USD = Unit("usd", 1.0, "USD")
TOKENS = Unit("int", 1.0, "tokens")
COUNT = Unit("int")
SECONDS = Unit("seconds", 1.0, "s")
PERCENT = Unit("percent", 100.0, "%")

OPERATIONAL_PREFIXES = ("latency", "cost", "tokens", "error_rate", "timeout_rate", "empty_response_rate")
"""Metric names shown under *Operations* rather than in the quality summary."""

_LOWER_IS_BETTER_AGENTIC = frozenset({"IterationsForAllGoodResults"})
"""Agentic values without a series spec that are better low (fewer iterations to find every good result)."""


def metric_unit(name: str) -> Unit:
    """The unit of a metric by its name (``latency_*`` → ms, ``cost*`` → USD, ``tokens_*`` → tokens)."""
    if name.startswith("latency"):
        return MILLISECONDS
    if name.startswith("cost"):
        return USD
    if name.startswith("tokens"):
        return TOKENS
    return PLAIN


def is_operational(name: str) -> bool:
    """True for latency, cost, token and failure-rate metrics."""
    return name.startswith(OPERATIONAL_PREFIXES)


def metric_direction(name: str) -> bool | None:
    """``True`` when higher is better, ``False`` when lower is, ``None`` when unknown (counts).

    Read from the metric registry; agentic series names (``CG``, ``SRR``, …) from their specs.
    """
    from ragmeter.agentic.metrics import SERIES
    from ragmeter.errors import MetricNameError
    from ragmeter.metrics.registry import resolve_metric

    if name in _LOWER_IS_BETTER_AGENTIC:
        return False
    for spec in SERIES:
        if spec.name == name:
            return spec.higher_is_better
    try:
        return resolve_metric(name).definition.higher_is_better
    except MetricNameError:
        return None


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_number(value: float, unit: Unit) -> str:
    """``value`` (already a number) in ``unit``'s style, without the suffix.

    >>> format_number(1234.4, COUNT), format_number(0.5, PERCENT), format_number(12.3456, SECONDS)
    ('1,234', '50.0', '12.3')
    """
    v = value * unit.scale
    if unit.style == "fixed4":
        return f"{v:.4f}"
    if unit.style == "int":
        return f"{math.floor(v + 0.5):,}"  # half up, as the page's script rounds
    if unit.style == "percent":
        return f"{v:.1f}"
    if unit.style == "usd":
        return f"{v:,.4f}" if abs(v) >= 0.01 else _trim(f"{v:.2g}") if v else "0"
    digits = 2 if abs(v) < 10 else 1 if abs(v) < 100 else 0  # ms and seconds
    return f"{v:,.{digits}f}"


def format_value(value: float | int | bool | None, unit: Unit = PLAIN) -> str:
    """A value with its unit; ``None`` (no value) is an empty string, never a zero.

    >>> format_value(0.5, PERCENT), format_value(2, SECONDS), format_value(True)
    ('50.0 %', '2.00 s', 'yes')
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = format_number(float(value), unit)
    return f"{text} {unit.suffix}" if unit.suffix else text
