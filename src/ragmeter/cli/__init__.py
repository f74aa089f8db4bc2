"""The ``ragmeter`` command line: a thin layer over the library.

Every command lives in its own module under ``ragmeter.cli`` and registers
itself on :data:`app`. One top-level handler, :func:`main`, turns every
:class:`~ragmeter.errors.RagmeterError` and usage error into one line,
``Error: <where>: <what>``, and a non-zero exit; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

import typer

try:  # typer >= 0.29 vendors click; older releases use the click package
    from typer._click import exceptions as click_exceptions
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import exceptions as click_exceptions  # type: ignore[no-redef]

from ragmeter.cli.once import OnceGroup
from ragmeter.errors import RagmeterError
from ragmeter.redaction import forget_secrets, redacted_console

app = typer.Typer(
    cls=OnceGroup,
    name="ragmeter",
    help="Measure retrieval, RAG and agentic search systems.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

EXIT_ERROR = 2
"""Exit code for bad input, bad options and failed runs (a failed gate exits 1)."""

_MODULE_OF = {
    "eval": "eval_cmd",
    "metrics": "metrics_cmd",
    "compare": "report_cmds",
    "gate": "report_cmds",
    "history": "report_cmds",
    "report": "report_cmds",
    "cache": "judge_cmds",
    "calibrate": "judge_cmds",
    "agentic": "agentic_cmd",
    "run": "run_cmd",
    "mine": "mine_cmd",
    "synth": "synth_cmd",
    "trec_eval": "trec_eval_cmd",
    "power": "power_cmd",
}
"""The module that defines each command: running one imports (and builds) only that one."""


def _version(value: bool) -> None:
    if value:
        from ragmeter import __version__

        typer.echo(f"ragmeter {__version__}")
        raise typer.Exit()


@app.callback(
    epilog="Examples:\n\n\b\n  ragmeter eval --qrels qrels.txt --run run.txt -m ndcg@10\n"
    "  ragmeter run examples/suite.yaml\n\nRun 'ragmeter COMMAND -h' for a command's options and examples."
)
def _group(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Measure retrieval, RAG and agentic search systems."""
    # A callback keeps ragmeter a group of commands even when only one command is registered.


def _register_commands() -> None:
    """Import every command module (each adds its command or group to ``app``), in help order."""
    for module in dict.fromkeys(_MODULE_OF.values()):
        importlib.import_module(f"ragmeter.cli.{module}")


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; print ``Error: ...`` instead of a traceback for user errors.

    One command is one run: its secrets are registered as it reads them, and nothing it prints
    on stdout or stderr shows them (:mod:`ragmeter.redaction`).
    """
    forget_secrets()
    with redacted_console():
        _main(argv)


def _main(argv: list[str] | None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("RAGMETER_DEBUG") == "1"
    args = [a for a in args if a != "--debug"]
    # One BLAS thread (unless the user says otherwise): OpenBLAS's threads spin for a while after
    # numpy loads, on the core that input hashing and parsing need; the CLI's matrices are small.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Collect the youngest generation every 50,000 allocations, not 700: importing numpy, pyarrow
    # and pydantic and building per-query results made 166 collections (65 ms) per evaluation.
    gc.set_threshold(50_000)
    command = next((a for a in args if not a.startswith("-")), None)
    if command in _MODULE_OF and "--help" not in args and "-h" not in args:
        importlib.import_module(f"ragmeter.cli.{_MODULE_OF[command]}")
    else:  # help, or an unknown command: every command, for the list and the did-you-mean
        _register_commands()
    try:
        code = app(args=args, prog_name="ragmeter", standalone_mode=False)
    except RagmeterError as exc:
        if debug:
            raise
        typer.echo(f"Error: {exc}", err=True)
        sys.exit(EXIT_ERROR)
    except click_exceptions.NoArgsIsHelpError as exc:
        typer.echo(exc.ctx.get_help() if exc.ctx else str(exc))
        sys.exit(0)
    except click_exceptions.UsageError as exc:
        if debug:
            raise
        typer.echo(f"Error: {exc.format_message()}", err=True)
        sys.exit(EXIT_ERROR)
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        sys.exit(130)
    except click_exceptions.ClickException as exc:
        if debug:
            raise
        typer.echo(f"Error: {exc.format_message()}", err=True)
        sys.exit(EXIT_ERROR)
    except KeyboardInterrupt:
        typer.echo("Interrupted.", err=True)
        sys.exit(130)
    except OSError as exc:  # a path the command could not read or write
        if debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        typer.echo(f"Error: {where}{exc.strerror or exc}", err=True)
        sys.exit(EXIT_ERROR)
    except ModuleNotFoundError as exc:  # an optional package this command needs is not installed
        if debug:
            raise
        from ragmeter.extras import missing_extra_message

        hint = missing_extra_message(exc.name or "")
        if hint is None:
            typer.echo(_internal_error(exc), err=True)
        else:
            typer.echo(f"Error: {hint}", err=True)
        sys.exit(EXIT_ERROR)
    except Exception as exc:  # a defect: still one line, the traceback on request
        if debug:
            raise
        typer.echo(_internal_error(exc), err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(code if isinstance(code, int) else 0)


def _internal_error(exc: BaseException) -> str:
    return (
        f"Error: internal error ({type(exc).__name__}: {exc}); rerun with --debug for the traceback "
        "and please report it"
    )
