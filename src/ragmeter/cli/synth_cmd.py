"""``ragmeter synth``: generate a test set from a corpus and verify its gold supports (docs/synth.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from ragmeter.cli import app
from ragmeter.cli.options import examples
from ragmeter.errors import ConfigError


@app.command(
    "synth",
    epilog=examples("ragmeter synth examples/vault -c examples/synth/synth.yaml -o testset.yaml --n 20"),
)
def synth_command(
    corpus: Annotated[
        Path,
        typer.Argument(
            help="A markdown vault, a folder of .txt files, or a BEIR corpus.jsonl.", show_default=False
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="The test set to write (YAML).")] = Path(
        "tests.yaml"
    ),
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Synthesis settings (synth.yaml; see docs/synth.md)."),
    ] = None,
    judge_config: Annotated[
        Path | None,
        typer.Option(
            "--judge-config", help="A file whose 'judge:' block is the generator (wins over --config)."
        ),
    ] = None,
    n: Annotated[int | None, typer.Option("--n", min=1, help="Questions to generate (default: 40).")] = None,
    categories: Annotated[
        str | None,
        typer.Option(
            "--categories",
            help="Comma-separated: factual, multi_hop, recency, unanswerable, paraphrase, adversarial (default: all).",
        ),
    ] = None,
    seed: Annotated[
        int | None, typer.Option("--seed", min=0, help="Seed of the plan and the trials.")
    ] = None,
    verify: Annotated[
        bool | None,
        typer.Option("--verify/--no-verify", help="Verify every question (default: on).", show_default=False),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="Continue from the logs: nothing already answered is asked again."),
    ] = False,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Delete the logs, dataset and report of an earlier run first.")
    ] = False,
    work_dir: Annotated[
        Path | None, typer.Option("--work-dir", help="Where the logs go (default: <out>.synth/).")
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", min=1, max=64, help="Solver calls in flight.")
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bars or per-question lines.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the synthesis report as JSON.")] = False,
) -> None:
    """Generate questions from CORPUS, verify them with Monte Carlo trials, write the test set and a report."""
    from ragmeter.cli.mine_cmd import MiningView
    from ragmeter.progress import make_progress
    from ragmeter.synth.config import CATEGORIES
    from ragmeter.synth.report import summary_lines
    from ragmeter.synth.session import Overrides, synthesize

    chosen = None
    if categories is not None:
        chosen = [c.strip() for c in categories.split(",") if c.strip()]
        unknown = [c for c in chosen if c not in CATEGORIES]
        if unknown or not chosen:
            raise ConfigError(
                f"--categories: unknown category {unknown[0]!r} (known: {', '.join(CATEGORIES)})"
                if unknown
                else "--categories: name at least one category"
            )
    err = Console(stderr=True, highlight=False, soft_wrap=True)

    def note(message: str) -> None:
        if not quiet:
            err.print(message, markup=False)

    progress = make_progress(quiet=quiet, console=err, emit=note)

    def factory(total: int) -> MiningView:  # verification: mine's questions and trials
        return MiningView(progress, total, count_questions=False)

    def on_task(done: int, total: int) -> None:  # generation, stage by stage
        if done == 1:
            progress.add("generation", total=total, unit="tasks")
        progress.update("generation", done=done)

    def on_question(done: int, total: int) -> None:  # the session prints a line per question
        progress.update("questions", done=done)

    overrides = Overrides(
        n=n, categories=chosen, seed=seed, verify=verify, judge_config=judge_config, concurrency=concurrency
    )
    try:
        outcome = synthesize(
            corpus,
            out,
            config=config,
            overrides=overrides,
            resume=resume,
            fresh=fresh,
            work_dir=work_dir,
            progress=factory,
            notify=note,
            on_task=on_task,
            on_question=on_question,
        )
    finally:
        progress.stop()
    if as_json:
        typer.echo(json.dumps(outcome.report, indent=2, ensure_ascii=False))
    else:
        for line in summary_lines(outcome.report):
            typer.echo(line)
    json_file, md_file = outcome.report_files
    if outcome.written:
        err.print(f"wrote {outcome.out}, {json_file} and {md_file}; logs in {outcome.work_dir}", markup=False)
    elif outcome.complete:
        reasons = sorted(set(outcome.report["generation_outcomes"].values())) or ["no reply"]
        raise ConfigError(f"the generator gave no usable question ({', '.join(reasons)}); nothing written")
    if outcome.budget_stop is not None:
        raise ConfigError(f"stopped: {outcome.budget_stop}; raise max_cost_usd and continue with --resume")
    if not outcome.complete:
        failed = len(outcome.generation.failed)
        pending = len(outcome.pending)
        parts = [f"{failed} generation task(s) failed"] if failed else []
        parts += [f"{pending} question(s) not decided"] if pending else []
        raise ConfigError(f"{' and '.join(parts)}; continue with --resume")
