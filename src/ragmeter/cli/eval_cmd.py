"""``ragmeter eval``: score recorded outputs or a TREC run (with LLM judges when configured)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ragmeter.cli import app
from ragmeter.cli.options import examples, finite, output_file, parse_columns, results_folder
from ragmeter.cli.render import JudgeConsole
from ragmeter.cli.run_cmd import ExecutorOption, RayAddressOption
from ragmeter.errors import ConfigError
from ragmeter.metrics.names import MAX_K


@app.command(
    "eval",
    epilog=examples(
        "ragmeter eval --qrels qrels.txt --run run.txt -m ndcg@10 -m map",
        "ragmeter eval --qrels beir/scifact --run run.json -m ndcg@10 --format trec",
        "ragmeter eval -d tests.yaml --outputs outputs.jsonl -o results/",
        "ragmeter eval -d ragas_rows.jsonl --limit 20",
        "ragmeter eval --qrels qrels.parquet --run run.csv --columns q_id=query,score=sim",
    ),
)
def eval_command(
    dataset: Annotated[
        str | None,
        typer.Option(
            "--dataset",
            "-d",
            metavar="SOURCE",
            help="Samples: YAML/JSON/JSONL/CSV file (ragmeter, RAGAS or DeepEval rows), a BEIR folder, "
            "a saved Hugging Face dataset or irds:<id>.",
        ),
    ] = None,
    outputs: Annotated[
        Path | None,
        typer.Option(
            "--outputs",
            help="Recorded outputs: JSONL, JSON keyed by sample id, or a ranx/pytrec_eval run {qid: {docid: score}}.",
        ),
    ] = None,
    qrels: Annotated[
        str | None,
        typer.Option(
            "--qrels",
            metavar="SOURCE",
            help="Qrels: TREC file (gz/bz2/zst too), ranx/pytrec_eval JSON, CSV/TSV/parquet, a BEIR folder, "
            "a saved Hugging Face dataset, irds:<id> or - (stdin).",
        ),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            metavar="SOURCE",
            help="Run: TREC file (gz/bz2/zst too), ranx/pytrec_eval JSON, CSV/TSV/parquet, "
            "a saved Hugging Face dataset, irds:<id> or - (stdin).",
        ),
    ] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            "--columns",
            metavar="FIELD=COLUMN,...",
            help="Read these fields from other columns (q_id, doc_id, score, rel; for samples id, input, "
            "expected_output, answer, contexts, expected_answer).",
        ),
    ] = None,
    split: Annotated[
        str | None,
        typer.Option(
            "--split", metavar="NAME", help="Split of a BEIR folder (default test) or Hugging Face dataset."
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, metavar="N", help="A quick look: evaluate only the first N queries."),
    ] = None,
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
        typer.Option(
            "--out",
            "-o",
            help="Write metrics.json and per_query.jsonl into this folder.",
            callback=results_folder,
        ),
    ] = None,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="table|json|trec",
            help="What to print: the table, one JSON object, or trec_eval -q lines (metric, query, value).",
        ),
    ] = "table",
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
    """Score recorded outputs against a dataset, or a run against qrels."""
    from ragmeter.io.table_readers import file_sources

    if qrels is not None and run is not None:
        from ragmeter.io.digests import hash_in_background

        hash_in_background(file_sources(qrels, run))  # on another core while numpy and pyarrow are imported
    from ragmeter.api import evaluate, evaluate_trec
    from ragmeter.cli.render import parse_breakdowns, print_result

    if output_format not in OUTPUT_FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(OUTPUT_FORMATS)}, got {output_format!r}")
    if as_json:
        output_format = "json"
    mapping = parse_columns(columns)
    trec_mode = qrels is not None or run is not None
    if trec_mode and (dataset is not None or outputs is not None):
        raise ConfigError("give either --dataset/--outputs or --qrels/--run, not both")
    if qrels == "-" and run == "-":
        raise ConfigError("--qrels and --run cannot both read standard input (-)")
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

            if len(file_sources(qrels, run)) != 2 or mapping or split or limit:
                raise ConfigError(
                    "--executor ray reads TREC files (--qrels and --run as files, without --columns, --split or --limit)"
                )
            try:
                result = evaluate_trec_partitioned(Path(qrels), Path(run), executor=runner, **options)
                Console(stderr=True).print(executor_note(runner.describe()), markup=False, highlight=False)
            finally:
                runner.close()
        else:
            result = evaluate_trec(qrels, run, columns=mapping, split=split, limit=limit, **options)
    else:
        if dataset is None:
            raise ConfigError("nothing to evaluate: give --dataset (with --outputs) or --qrels and --run")
        if complete:
            raise ConfigError("--complete applies to TREC runs (--qrels/--run) only")
        from ragmeter.judges.answers import DEFAULT_LOG_NAME

        observer = JudgeConsole(Console(stderr=True), say_budget_stop=output_format != "table")
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
                columns=mapping,
                split=split,
                limit=limit,
            )
        finally:
            observer.close()
    if out is not None:
        result.write(out)
    if record or history is not None:
        from ragmeter.report.history import default_history_path, record_run

        label = Path(run or dataset or "eval").name
        record_run(
            result, db=history or default_history_path(), label=label, source=str(out) if out else None
        )
    if output_format == "json":
        typer.echo(result.to_json_text())
    elif output_format == "trec":
        from ragmeter.report.trec_text import per_query_trec_text

        typer.echo(per_query_trec_text(result), nl=False)
        err = Console(stderr=True)
        for warning in result.warnings:
            err.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    else:
        print_result(result, Console(), Console(stderr=True), breakdowns=dims)
    if out is not None and output_format != "json":
        Console(stderr=True).print(f"wrote {out / 'metrics.json'} and {out / 'per_query.jsonl'}")


OUTPUT_FORMATS = ("table", "json", "trec")
"""What ``eval --format`` prints."""
