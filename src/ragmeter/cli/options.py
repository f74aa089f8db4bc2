"""Checks shared by command-line options.

>>> finite(0.5), finite(None)
(0.5, None)
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

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


_INPUT_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml", ".csv", ".tsv", ".parquet")


def looks_like_input(path: Path) -> bool:
    """A name that looks like a data file (``outputs.jsonl``, ``run.csv.gz``), not a folder to write.

    >>> looks_like_input(Path("outputs.jsonl.gz")), looks_like_input(Path("results"))
    (True, False)
    """
    from ragmeter.io.text_files import data_suffix

    return data_suffix(path) in _INPUT_SUFFIXES


def results_folder(value: Path | None) -> Path | None:
    """A typer callback for ``-o/--out`` of ``eval``: the folder to write, never an input file.

    ``-o`` used to name the recorded outputs in ``eval``; it now means the output everywhere. A
    name that looks like a data file (``outputs.jsonl``) is that old use: the error says so.

    >>> results_folder(Path("results"))
    PosixPath('results')
    >>> try:
    ...     results_folder(Path("outputs.jsonl"))
    ... except typer.BadParameter as exc:
    ...     print(exc.message)
    outputs.jsonl looks like an input file: -o/--out names the folder to write (as in every command); give recorded outputs with --outputs outputs.jsonl
    """
    if value is not None and looks_like_input(value):
        raise typer.BadParameter(
            f"{value} looks like an input file: -o/--out names the folder to write (as in every command); "
            f"give recorded outputs with --outputs {value}"
        )
    return output_folder(value)


def parse_columns(text: str | None) -> dict[str, str] | None:
    """``--columns q_id=query,score=sim`` as a mapping (field → column); a malformed pair is an error.

    >>> parse_columns("q_id=query, score=sim")
    {'q_id': 'query', 'score': 'sim'}
    """
    if text is None:
        return None
    mapping: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in text.split(","))):
        field, sep, column = pair.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise typer.BadParameter(
                f"expected FIELD=COLUMN pairs separated by commas, got {pair!r}", param_hint="--columns"
            )
        if field.strip() in mapping:
            raise typer.BadParameter(f"field {field.strip()!r} is mapped twice", param_hint="--columns")
        mapping[field.strip()] = column.strip()
    if not mapping:
        raise typer.BadParameter("give at least one FIELD=COLUMN pair", param_hint="--columns")
    return mapping


def _no_input_o(value: str | None) -> None:
    if value is not None:
        raise typer.BadParameter(
            "-o names what a command writes, in every command; give the recorded outputs with --outputs"
        )


NoInputO = Annotated[
    str | None, typer.Option("-o", hidden=True, metavar="OUT", callback=_no_input_o, show_default=False)
]
"""A hidden ``-o`` for a command that writes nothing: it used to name the outputs read; it says so."""


def examples(*lines: str) -> str:
    r"""A command's ``--help`` epilog: its examples, one per line, kept as written.

    >>> examples("ragmeter metrics").splitlines()
    ['Examples:', '', '\x08', '  ragmeter metrics']
    """
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


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
