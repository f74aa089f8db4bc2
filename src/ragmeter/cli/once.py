"""An option given twice is an error, never a silent choice of the last one.

Click keeps the last value of a repeated option (``eval -o outputs.jsonl --out results``
would drop ``outputs.jsonl`` without a word). :class:`OnceGroup`, the class of ragmeter's
command groups, checks a command's arguments before the command runs and answers an option
that takes one value given two different ones, or a flag given both ways
(``--trec-compat --no-trec-compat``), with one ``Error:`` line naming it and its values.
Options that collect values (``-m ndcg@10 -m map``) and counters repeat freely; so does the
same value given twice.

>>> given_values(["--out", "a", "-k", "5", "-oB", "--out=c", "--", "-o", "d"], ["-o", "--out"])
['a', 'B', 'c']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import typer.core

try:  # typer >= 0.29 vendors click; older releases use the click package
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import exceptions as click_exceptions  # type: ignore[no-redef]


def given_values(args: Sequence[str], opts: Sequence[str]) -> list[str]:
    """The values given to an option spelled any of ``opts`` (``-o X``, ``-oX``, ``--out X``, ``--out=X``)."""
    values: list[str] = []
    words = iter(args)
    for word in words:
        if word == "--":
            break
        for opt in opts:
            if word == opt:
                values.append(next(words, ""))
            elif opt.startswith("--") and word.startswith(f"{opt}="):
                values.append(word[len(opt) + 1 :])
            elif not opt.startswith("--") and word.startswith(opt) and len(word) > len(opt):
                values.append(word[len(opt) :])
    return values


def refuse_repeated_options(command: Any, ctx: Any, name: str | None, args: Sequence[str]) -> None:
    """Raise a usage error if ``args`` give one of ``command``'s single-valued options twice."""
    sub = command.context_class(command, info_name=name, parent=ctx, **command.context_settings)
    try:
        _, _, order = command.make_parser(sub).parse_args(args=list(args))
    except click_exceptions.UsageError:
        return  # the command's own parse says what is wrong
    seen: set[str | None] = set()
    for param in order:
        if param.param_type_name != "option" or param.multiple or getattr(param, "count", False):
            continue
        if param.name not in seen:
            seen.add(param.name)
            continue
        spelled = "/".join([*param.opts, *param.secondary_opts])
        if param.is_flag:
            if given_flags(args, param.opts) and given_flags(args, param.secondary_opts):
                raise click_exceptions.UsageError(f"{spelled}: give one of them, once", sub)
            continue
        values = given_values(args, param.opts)
        if len(values) > 1 and len(set(values)) == 1:
            continue  # the same value twice: nothing is dropped
        shown = f" ({', then '.join(map(repr, values))})" if len(values) > 1 else ""
        hint = _old_o_hint(values) if name == "eval" and "-o" in param.opts else ""
        raise click_exceptions.UsageError(
            f"{spelled} is given more than once{shown}: give it once{hint}", sub
        )


def given_flags(args: Sequence[str], opts: Sequence[str]) -> bool:
    """Whether a flag spelled any of ``opts`` is among ``args`` (before ``--``)."""
    words = list(args)
    words = words[: words.index("--")] if "--" in words else words
    return any(opt in words for opt in opts)


def _old_o_hint(values: Sequence[str]) -> str:
    """For eval's ``-o/--out`` given an input file too (its old meaning): where that file goes now."""
    from pathlib import Path

    from ragmeter.cli.options import looks_like_input

    inputs = [v for v in values if looks_like_input(Path(v))]
    return (
        f" (-o names the folder to write; give recorded outputs with --outputs {inputs[0]})" if inputs else ""
    )


class OnceGroup(typer.core.TyperGroup):
    """A typer group whose commands refuse an option given twice (see the module docstring)."""

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        """The command named first in ``args``, checked for a repeated option before it runs."""
        name, command, rest = super().resolve_command(ctx, args)
        if command is not None and not isinstance(command, typer.core.TyperGroup):
            refuse_repeated_options(command, ctx, name, rest)
        return name, command, rest
