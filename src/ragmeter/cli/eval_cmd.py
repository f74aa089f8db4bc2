"""``ragmeter eval``: score recorded outputs or a TREC run (with LLM judges when configured)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ragmeter.cli import app
from ragmeter.cli.options import finite, output_file, output_folder
from ragmeter.cli.render import JudgeConsole
from ragmeter.cli.run_cmd import ExecutorOption, RayAddressOption
from ragmeter.errors import ConfigError
from ragmeter.metrics.names import MAX_K


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
    k: Annotated[
        int | None, typer.Option("-k", min=1, max=MAX_K, help="Cutoff for metrics named without @k.")
    ] = None,
    relevance_level: Annotated[
        float | None,
        typer.Option(
            "--relevance-level",
            "-l",
            help="Minimum gain counted as relevant (binary metrics).",
            callback=finite,
        ),
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
        Path | None,
        typer.Option("--out", help="Write metrics.json and per_query.jsonl here.", callback=output_folder),
    ] = None,
    trec_compat: Annotated[
        bool,
        typer.Option(
            "--trec-compat",
            help="Average queries without relevant items in as 0 and truncate a fractional qrels "
            "relevance, as trec_eval does.",
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
    judge_config: Annotated[
        Path | None,
        typer.Option(
            "--judge-config",
            help="LLM judge settings: a YAML/JSON file with a judge: block (default: the config's judge:).",
        ),
    ] = None,
    judges: Annotated[
        str | None,
        typer.Option(
            "--judges",
            metavar="NAMES",
            help="Judges to run, comma-separated: groundedness,correctness,factual_match "
            "(default: all three, or those the -m metrics need).",
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option(
            "--max-cost",
            metavar="USD",
            help="Stop judging before spending more than this; what was judged is kept.",
            callback=finite,
        ),
    ] = None,
    no_judge: Annotated[
        bool, typer.Option("--no-judge", help="Run no LLM judge, even when the config has a judge: block.")
    ] = False,
    judge_log: Annotated[
        Path | None,
        typer.Option(
            "--judge-log",
            help="Resumable judge log, JSON Lines (default: judge_log.jsonl in --out).",
            callback=output_file,
        ),
    ] = None,
    reliability: Annotated[
        bool | None,
        typer.Option(
            "--reliability/--no-reliability",
            help="Run the judge reliability spot-check (default: when judge.reliability is configured).",
            show_default=False,
        ),
    ] = None,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
) -> None:
    """Score recorded outputs against a dataset, or a TREC run against qrels."""
    if qrels is not None and run is not None:
        from ragmeter.io.digests import hash_in_background

        hash_in_background((qrels, run))  # on another core while numpy and pyarrow are imported
    from ragmeter.api import evaluate, evaluate_trec
    from ragmeter.cli.render import parse_breakdowns, print_result

    trec_mode = qrels is not None or run is not None
    if trec_mode and (dataset is not None or outputs is not None):
        raise ConfigError("give either --dataset/--outputs or --qrels/--run, not both")
    if trec_mode and (index_stats is not None or snippet_matching is not None):
        raise ConfigError("--index-stats and --snippet-matching apply to --dataset evaluations only")
    judge_options = [
        name
        for name, value in (
            ("--judge-config", judge_config),
            ("--judges", judges),
            ("--max-cost", max_cost),
            ("--judge-log", judge_log),
            ("--reliability", reliability),
        )
        if value is not None
    ]
    if trec_mode and (judge_options or no_judge):
        raise ConfigError("the judge options apply to --dataset evaluations only")
    if no_judge and judge_options:
        raise ConfigError(f"--no-judge cannot be combined with {', '.join(judge_options)}")
    dims = parse_breakdowns(breakdowns)  # checked before any work
    if record or history is not None:
        from ragmeter.report.history import check_history

        check_history(history)
    runner = None
    if executor != "local" or ray_address is not None:
        from ragmeter.executors import make_executor

        runner = make_executor(executor, address=ray_address)  # checks both options; Ray starts later
        if not trec_mode:
            raise ConfigError("--executor and --ray-address apply to TREC runs (--qrels/--run) only")
    if trec_mode:
        if qrels is None or run is None:
            raise ConfigError("TREC evaluation needs both --qrels and --run")
        options: dict[str, Any] = {
            "metrics": metric or None,
            "k": k,
            "relevance_level": relevance_level,
            "complete": complete,
            "trec_compat": trec_compat,
            "config": config,
        }
        if runner is not None and runner.remote:
            from ragmeter.cli.run_cmd import executor_note
            from ragmeter.partitioned_trec import evaluate_trec_partitioned

            try:
                result = evaluate_trec_partitioned(qrels, run, executor=runner, **options)
                Console(stderr=True).print(executor_note(runner.describe()), markup=False, highlight=False)
            finally:
                runner.close()
        else:
            result = evaluate_trec(qrels, run, **options)
    else:
        if dataset is None:
            raise ConfigError("nothing to evaluate: give --dataset (with --outputs) or --qrels and --run")
        if complete:
            raise ConfigError("--complete applies to TREC runs (--qrels/--run) only")
        from ragmeter.judges.answers import DEFAULT_LOG_NAME

        observer = JudgeConsole(Console(stderr=True), say_budget_stop=as_json)
        try:
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
                judge=False if no_judge else judge_config,
                judges=[j for j in judges.split(",") if j.strip()] if judges is not None else None,
                judge_log=judge_log or (out / DEFAULT_LOG_NAME if out is not None else None),
                max_cost=max_cost,
                reliability=reliability,
                judge_observer=observer,
            )
        finally:
            observer.close()
    if out is not None:
        result.write(out)
    if record or history is not None:
        from ragmeter.report.history import default_history_path, record_run

        label = (run or dataset or Path("eval")).name
        record_run(
            result, db=history or default_history_path(), label=label, source=str(out) if out else None
        )
    if as_json:
        typer.echo(result.to_json_text())
    else:
        print_result(result, Console(), Console(stderr=True), breakdowns=dims)
        if out is not None:
            Console(stderr=True).print(f"wrote {out / 'metrics.json'} and {out / 'per_query.jsonl'}")
