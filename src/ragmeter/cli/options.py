"""Checks shared by command-line options.

>>> finite(0.5), finite(None)
(0.5, None)
"""

from __future__ import annotations

import math

import typer


def finite(value: float | None) -> float | None:
    """A typer callback: a number option given ``nan`` or ``inf`` is an error naming the option.

    Click's range checks let NaN through (every comparison with it is false).
    """
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite number, got {value}")
    return value
