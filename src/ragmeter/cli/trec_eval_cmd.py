"""``ragmeter trec_eval``: a drop-in for the trec_eval 10.0 command line, byte for byte.

Options are read as trec_eval reads them (``getopt``: ``-mP.5`` or ``-m P.5``, ``-l2``,
``-qc``, the long names), so a script that calls trec_eval can call this instead.
"""

from __future__ import annotations

import getopt
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragmeter.cli import app
from ragmeter.errors import ConfigError

if TYPE_CHECKING:
    from ragmeter.evaluation.trec_eval import TrecEvalOptions

SHORT = "hvqm:cl:nD:JN:M:R:T:oZ:"
LONG = [
    "help",
    "version",
    "query_eval_wanted",
    "measure=",
    "complete_rel_info_wanted",
    "level_for_rel=",
    "nosummary",
    "Debug_level=",
    "Judged_docs_only",
    "Number_docs_in_coll=",
    "Max_retrieved_per_topic=",
    "Rel_info_format=",
    "Results_format=",
    "Output_old_results_format",
    "Zscore=",
]
USAGE = (
    "ragmeter trec_eval [-q] [-c] [-n] [-J] [-l N] [-M N] [-N N] [-Z FILE] [-m MEASURE[.PARAMS]]... QRELS RUN"
)
HELP = f"""Usage: {USAGE}

A drop-in for trec_eval 10.0: the same options, measures and output, byte for byte.
RUN may be '-' for standard input.

  -q            also print each topic's values
  -m MEASURE    a measure (P, map, ndcg_cut, …), with parameters after a dot (P.5,10;
                ndcg.1=3,2=9; iprec_at_recall..1,.5), or a set: official (default), all_trec, set
  -c            average over every qrels topic; a topic missing from the run counts 0
  -l N          the lowest relevance value that counts as relevant (default 1)
  -M N          evaluate only the top N documents of each topic
  -N N          documents in the collection (for utility)
  -J            drop unjudged documents before evaluating
  -n            no summary (only with -q)
  -Z FILE       print z-scores from FILE's per-topic means and standard deviations

Where it differs from `ragmeter eval`: topics without relevant documents count 0 in the
averages, plain names are trec_eval's measures over the whole ranking, and every number is
trec_eval's (see docs/ranking.md). Not read: -R prefs / qrels_jg, -T, -D.

Example:
  ragmeter trec_eval -q -m all_trec qrels.txt run.txt
  ragmeter trec_eval -c -M 100 -m P.5,10 -m ndcg_cut.10 qrels.txt run.txt
"""


def parse_arguments(args: list[str]) -> tuple[TrecEvalOptions, Path, Path]:
    """trec_eval's options and the two files, as its ``getopt_long`` reads them."""
    from ragmeter.evaluation.trec_eval import TrecEvalOptions
    from ragmeter.metrics.trec_table import atol

    try:
        pairs, files = getopt.gnu_getopt(args, SHORT, LONG)
    except getopt.GetoptError as exc:
        raise ConfigError(f"trec_eval: {exc.msg}; usage: {USAGE}") from None
    options = TrecEvalOptions()
    for flag, value in pairs:
        if flag in ("-h", "--help"):
            typer.echo(HELP, nl=False)
            raise typer.Exit(0)
        if flag in ("-v", "--version"):
            typer.echo("trec_eval version 10.0 (ragmeter trec_eval)", err=True)
            raise typer.Exit(0)
        if flag in ("-q", "--query_eval_wanted"):
            options.per_query = True
        elif flag in ("-m", "--measure"):
            options.measures.append(value)
        elif flag in ("-c", "--complete_rel_info_wanted"):
            options.complete = True
        elif flag in ("-l", "--level_for_rel"):
            options.relevance_level = atol(value)
        elif flag in ("-n", "--nosummary"):
            options.summary = False
        elif flag in ("-J", "--Judged_docs_only"):
            options.judged_only = True
        elif flag in ("-N", "--Number_docs_in_coll"):
            options.n_docs = atol(value)
        elif flag in ("-M", "--Max_retrieved_per_topic"):
            options.max_docs = atol(value)
        elif flag in ("-Z", "--Zscore"):
            options.zscores = Path(value)
        elif flag in ("-R", "--Rel_info_format"):
            if value != "qrels":
                raise ConfigError(f"-R {value}: ragmeter trec_eval reads qrels only (not prefs or qrels_jg)")
        elif flag in ("-T", "--Results_format"):
            if value != "trec_results":
                raise ConfigError(f"-T {value}: ragmeter trec_eval reads trec_results only")
        elif flag in ("-o", "--Output_old_results_format"):
            raise ConfigError("-o: the old output format is not supported (nor by trec_eval 10.0)")
        # -D (debug level) changes nothing printed on stdout for the summary; it is accepted and ignored
    if len(files) != 2:
        raise ConfigError(
            f"trec_eval needs a qrels file and a run file, got {len(files)} file(s); usage: {USAGE}"
        )
    return options, Path(files[0]), Path(files[1])


@app.command(
    "trec_eval",
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
    add_help_option=False,
)
def trec_eval_command(
    ctx: typer.Context,
    help_: Annotated[bool, typer.Option("--help", help="Show this message and exit.")] = False,
) -> None:
    """trec_eval 10.0, byte for byte: ragmeter trec_eval [-q] [-c] [-l N] [-M N] [-m MEASURE]... QRELS RUN.

    Example: ragmeter trec_eval -q -m all_trec -m P.5,10 qrels.txt run.txt
    """
    if help_:
        typer.echo(HELP, nl=False)
        return
    from ragmeter.evaluation.trec_eval import trec_eval
    from ragmeter.report.trec_eval_text import report_text

    options, qrels, run = parse_arguments(list(ctx.args))
    if str(run) != "-":
        sys.stdout.write(report_text(trec_eval(qrels, run, options)))
        return
    with tempfile.TemporaryDirectory(prefix="ragmeter-trec_eval-") as folder:  # '-': the run on stdin
        copy = Path(folder) / "stdin"
        with copy.open("wb") as handle:
            shutil.copyfileobj(sys.stdin.buffer, handle)
        sys.stdout.write(report_text(trec_eval(qrels, copy, options)))
