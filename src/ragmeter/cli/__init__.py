"""The ``ragmeter`` command line: a thin layer over the library.

Every command lives in its own module under ``ragmeter.cli`` and registers
itself on :data:`app`. One top-level handler, :func:`main`, turns every
:class:`~ragmeter.errors.RagmeterError` and usage error into one line,
``Error: <where>: <what>``, and a non-zero exit; ``--debug`` shows the traceback.

``app`` (typer) is built on first use: a plain TREC evaluation with ``--json`` runs without it
(:mod:`ragmeter.cli.eval_fast`), since typer's option checks import pydantic.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from ragmeter.errors import RagmeterError
from ragmeter.redaction import forget_secrets, redacted_console

if TYPE_CHECKING:
    import typer

    app: typer.Typer


def _build_app() -> typer.Typer:
    import typer

    from ragmeter.cli.once import OnceGroup

    built = typer.Typer(
        cls=OnceGroup,
        name="ragmeter",
        help="Measure retrieval, RAG and agentic search systems.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    def _version(value: bool) -> None:
        if value:
            from ragmeter import __version__

            typer.echo(f"ragmeter {__version__}")
            raise typer.Exit()

    @built.callback(
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

    return built


def __getattr__(name: str) -> Any:
    if name == "app":  # built once, when a command module registers itself
        globals()["app"] = built = _build_app()
        return built
    raise AttributeError(f"module 'ragmeter.cli' has no attribute {name!r}")


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


def _tune_process() -> None:
    """Settings for a CLI process, made before numpy and pyarrow load (each unless the environment says otherwise)."""
    # One BLAS thread (unless the user says otherwise): OpenBLAS's threads spin for a while after
    # numpy loads, on the core that input hashing and parsing need; the CLI's matrices are small.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # No transparent huge pages for numpy's arrays and pyarrow's allocator (mimalloc): faulting
    # in a 2 MB page can stall on the kernel's compaction, and a huge page is zeroed whole when
    # one byte of it is touched. On the 2-vCPU VM a 10M-line evaluation took 0.3-0.4 s less
    # system CPU with small pages, and varied less (bench/README.md, issue 20).
    os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    os.environ.setdefault("MIMALLOC_ALLOW_THP", "0")
    # Collect the youngest generation every 50,000 allocations, not 700: importing numpy, pyarrow
    # and pydantic and building per-query results made 166 collections (65 ms) per evaluation.
    gc.set_threshold(50_000)


def _main(argv: list[str] | None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args or os.environ.get("RAGMETER_DEBUG") == "1"
    args = [a for a in args if a != "--debug"]
    _tune_process()
    command = next((a for a in args if not a.startswith("-")), None)
    try:
        if command == "eval" and not _wants_help(args):
            from ragmeter.cli.eval_fast import fast_eval

            if fast_eval(args):
                if argv is None:  # the command line itself, not a caller in this process
                    _exit_at_once()
                sys.exit(0)
        code = _run_app(args, command)
    except (Exception, KeyboardInterrupt) as exc:
        _fail(exc, debug=debug)
    sys.exit(code if isinstance(code, int) else 0)


def _exit_at_once() -> NoReturn:
    """Exit 0 once the output is flushed, without the interpreter's teardown.

    Freeing a 10M-line evaluation's objects and numpy's and pyarrow's modules takes 50-90 ms
    that nobody waits for; the quick ``eval`` path has no file open and no thread at work.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _run_app(args: list[str], command: str | None) -> Any:
    """Build the commands needed and run typer's app."""
    if command in _MODULE_OF and not _wants_help(args):
        importlib.import_module(f"ragmeter.cli.{_MODULE_OF[command]}")
    else:  # help, or an unknown command: every command, for the list and the did-you-mean
        _register_commands()
    from ragmeter.cli import app

    return app(args=args, prog_name="ragmeter", standalone_mode=False)


def _echo(message: str, *, err: bool = True) -> None:
    print(message, file=sys.stderr if err else sys.stdout, flush=True)


def _fail(exc: BaseException, *, debug: bool) -> NoReturn:
    """One line for ``exc`` (the traceback with ``--debug``), and the exit code for it."""
    if isinstance(exc, KeyboardInterrupt):
        _echo("Interrupted.")
        sys.exit(130)
    if isinstance(exc, RagmeterError):
        if debug:
            raise exc
        _echo(f"Error: {exc}")
        sys.exit(EXIT_ERROR)
    if "typer" in sys.modules:  # the app ran: its usage errors
        import typer

        try:  # typer >= 0.29 vendors click; older releases use the click package
            from typer._click import exceptions as click_exceptions
        except ImportError:  # pragma: no cover - depends on the installed typer
            from click import exceptions as click_exceptions  # type: ignore[no-redef]

        if isinstance(exc, click_exceptions.NoArgsIsHelpError):
            _echo(exc.ctx.get_help() if exc.ctx else str(exc), err=False)
            sys.exit(0)
        if isinstance(exc, typer.Abort):
            _echo("Aborted.")
            sys.exit(130)
        if isinstance(exc, click_exceptions.ClickException):  # usage errors included
            if debug:
                raise exc
            _echo(f"Error: {exc.format_message()}")
            sys.exit(EXIT_ERROR)
    if debug:
        raise exc
    if isinstance(exc, OSError):  # a path the command could not read or write
        where = f"{exc.filename}: " if exc.filename else ""
        _echo(f"Error: {where}{exc.strerror or exc}")
        sys.exit(EXIT_ERROR)
    if isinstance(exc, ModuleNotFoundError):  # an optional package this command needs is not installed
        from ragmeter.extras import missing_extra_message

        hint = missing_extra_message(exc.name or "")
        if hint is not None:
            _echo(f"Error: {hint}")
            sys.exit(EXIT_ERROR)
    _echo(
        f"Error: internal error ({type(exc).__name__}: {exc}); rerun with --debug for the traceback "
        "and please report it"
    )
    sys.exit(EXIT_ERROR)


def _wants_help(args: list[str]) -> bool:
    """Whether ``-h`` or ``--help`` is among the arguments (help lists every command)."""
    return "--help" in args or "-h" in args
