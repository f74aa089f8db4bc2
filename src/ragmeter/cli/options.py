"""Checks shared by command-line options.

>>> finite(0.5), finite(None)
(0.5, None)
"""

from __future__ import annotations

import math
from pathlib import Path

import typer


def finite(value: float | None) -> float | None:
    """A typer callback: a number option given ``nan`` or ``inf`` is an error naming the option.

    Click's range checks let NaN through (every comparison with it is false).
    """
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite number, got {value}")
    return value


def output_file(value: Path | None) -> Path | None:
    """A typer callback for an option naming a file to write: a folder there is an error, before any work.

    >>> output_file(Path("report.html"))
    PosixPath('report.html')
    """
    if value is not None and value.is_dir():
        raise typer.BadParameter(f"{value} is a directory; expected a file name")
    return value


def output_folder(value: Path | None) -> Path | None:
    """A typer callback for an option naming a folder to write into: a file there is an error, before any work."""
    if value is not None:
        for path in (value, *value.parents):
            if path.exists():
                if not path.is_dir():
                    where = "" if path == value else f" (under {path}, which is a file)"
                    raise typer.BadParameter(f"{value} is not a folder{where}")
                break
    return value


def check_level(option: str, value: float) -> None:
    """A significance level or a power must lie strictly between 0 and 1 (one ``Error:`` line otherwise).

    >>> check_level("--alpha", 0.05)
    >>> check_level("--power", 1.0)
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: --power must be between 0 and 1 (exclusive), got 1
    """
    from ragmeter.errors import ConfigError

    if not 0 < value < 1:
        raise ConfigError(f"{option} must be between 0 and 1 (exclusive), got {value:g}")
