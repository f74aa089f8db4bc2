"""``ragmeter eval``: score recorded outputs or a TREC run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ragmeter.cli import app
from ragmeter.errors import ConfigError


@app.command("eval")
def eval_command(
    dataset: Annotated[
        Path | None, typer.Option("--dataset", "-d", help="Samples file (YAML, JSON or JSONL).")
    ] = None,
    outputs: Annotated[
        Path | None,
        typer.Option("--outputs", "-o", help="Recorded outputs (JSONL or JSON keyed by sample id)."),
    ] = None,
    qrels: Annotated[Path | None, typer.Option("--qrels", help="TREC qrels file.")] = None,
    run: Annotated[Path | None, typer.Option("--run", help="TREC run file.")] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric", "-m", metavar="NAME", help="Metric name; repeat for more (see 'ragmeter metrics')."
        ),
    ] = None,
    k: Annotated[int | None, typer.Option("-k", min=1, help="Cutoff for metrics named without @k.")] = None,
    relevance_level: Annotated[
        float | None,
        typer.Option("--relevance-level", "-l", help="Minimum gain counted as relevant (binary metrics)."),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", help="Config file (default: ./ragmeter.yaml).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of the table.")
    ] = False,
    breakdowns: Annotated[
        str,
        typer.Option(
            "--breakdowns", metavar="DIMS", help="Breakdowns to print: comma-separated dimensions, or 'all'."
        ),
    ] = "category",
    record: Annotated[
        bool,
        typer.Option("--record", help="Append the aggregates to the run history (see 'ragmeter history')."),
    ] = False,
    history: Annotated[
        Path | None,
        typer.Option("--history", help="History database for --record (default .ragmeter/history.sqlite)."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write metrics.json and per_query.jsonl here.")
    ] = None,
    trec_compat: Annotated[
        bool,
        typer.Option(
            "--trec-compat", help="Average queries without relevant items in as 0, as trec_eval does."
        ),
    ] = False,
    complete: Annotated[
        bool,
        typer.Option("--complete", "-c", help="Qrels topics missing from the run count as 0 (trec_eval -c)."),
    ] = False,
    index_stats: Annotated[
        Path | None,
        typer.Option(
            "--index-stats", help="Index statistics JSON: adds the indexing coverage (docs/rag.md)."
        ),
    ] = None,
    snippet_matching: Annotated[
        bool | None,
        typer.Option(
            "--snippet-matching/--no-snippet-matching",
            help="Require a listed gold-support snippet in the chunk text (default: config, on).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Score recorded outputs against a dataset, or a TREC run against qrels."""
    from ragmeter.api import evaluate, evaluate_trec
    from ragmeter.cli.render import print_result

    trec_mode = qrels is not None or run is not None
    if trec_mode and (dataset is not None or outputs is not None):
        raise ConfigError("give either --dataset/--outputs or --qrels/--run, not both")
    if trec_mode and (index_stats is not None or snippet_matching is not None):
        raise ConfigError("--index-stats and --snippet-matching apply to --dataset evaluations only")
    if trec_mode:
        if qrels is None or run is None:
            raise ConfigError("TREC evaluation needs both --qrels and --run")
        result = evaluate_trec(
            qrels,
            run,
            metrics=metric or None,
            k=k,
            relevance_level=relevance_level,
            complete=complete,
            trec_compat=trec_compat,
            config=config,
        )
    else:
        if dataset is None:
            raise ConfigError("nothing to evaluate: give --dataset (with --outputs) or --qrels and --run")
        if complete:
            raise ConfigError("--complete applies to TREC runs (--qrels/--run) only")
        result = evaluate(
            dataset,
            outputs,
            metrics=metric or None,
            k=k,
            relevance_level=relevance_level,
            config=config,
            trec_compat=trec_compat,
            snippet_matching=snippet_matching,
            index_stats=index_stats,
        )
    if out is not None:
        result.write(out)
    if record or history is not None:
        from ragmeter.report.history import DEFAULT_HISTORY_PATH, record_run

        label = (run or dataset or Path("eval")).name
        record_run(result, db=history or DEFAULT_HISTORY_PATH, label=label, source=str(out) if out else None)
    if as_json:
        typer.echo(json.dumps(result.to_json_dict(), indent=2))
    else:
        dims = (
            None if breakdowns.strip() == "all" else [d.strip() for d in breakdowns.split(",") if d.strip()]
        )
        print_result(result, Console(), Console(stderr=True), breakdowns=dims)
        if out is not None:
            Console(stderr=True).print(f"wrote {out / 'metrics.json'} and {out / 'per_query.jsonl'}")
