"""``ragmeter mine``: mine a retrieval dataset by Monte Carlo relevance verification; ``mine analyze``.

``ragmeter mine REGISTRY ...`` is short for ``ragmeter mine run REGISTRY ...``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ragmeter.cli import app
from ragmeter.cli.once import OnceGroup
from ragmeter.cli.options import NoInputO, examples, finite, output_file, output_folder
from ragmeter.cli.run_cmd import ExecutorOption, RayAddressOption, executor_note
from ragmeter.errors import ConfigError
from ragmeter.metrics.names import MAX_K

if TYPE_CHECKING:
    from ragmeter.mining.miner import MinedQuestion
    from ragmeter.progress import Progress

try:  # typer >= 0.29 vendors click; older releases use the click package
    from typer._click import Context
except ImportError:  # pragma: no cover - depends on the installed typer
    from click import Context  # type: ignore[assignment]


class _DefaultRunGroup(OnceGroup):
    """A group whose first argument, when it is not a subcommand, is the registry of ``run``."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


def _money(cost: float, unpriced: int, calls: int) -> str:
    if calls and unpriced == calls:
        return "cost unknown (unpriced solver)"
    text = f"${cost:.4f}"
    return text + (f" + {unpriced} unpriced calls" if unpriced else "")


def summary_line(mined: MinedQuestion) -> str:
    """One line per finished question.

    Example: ``b:q1: IDENTIFIED after 48 trials (textwrap.fill), 48 calls, $0.0123``.
    """
    c = mined.conclusion
    if c is None:
        return f"{mined.question.pair_id}: INCOMPLETE ({mined.error}), {mined.calls} calls"
    yes = [mined.question.pool.ids[i] for i, s in enumerate(c.docs) if s.verdict == "YES"]
    status = c.status + (f"/{c.no_relevant_kind}" if c.no_relevant_kind else "")
    found = f" ({', '.join(yes)})" if yes else ""
    return (
        f"{mined.question.pair_id}: {status} after {c.trials} trials{found}, "
        f"{mined.calls} calls, {_money(mined.cost_usd, mined.unpriced_calls, mined.calls)}"
    )


class MiningView:
    """Mining progress on a :class:`~ragmeter.progress.Progress`: questions, the current question's trials.

    The questions task carries the current question, its look, its passes and the cost so far;
    the trials task (a bar only) runs up to the look being run. Every finished question prints its
    summary line (also with ``--quiet``). With ``count_questions=False`` the caller moves the
    questions task and prints the lines (``synth`` decides some questions without mining).
    """

    def __init__(self, progress: Progress, total: int, *, count_questions: bool = True) -> None:
        self._progress = progress
        self._count = count_questions
        self._cost = 0.0
        self._unpriced = 0
        self._calls = 0
        self._pair = ""
        self._look = 0
        self._passes = 0
        self._trials = 0
        progress.add("questions", total=total)

    def _info(self) -> str:
        money = _money(self._cost, self._unpriced, self._calls)
        return f"{self._pair}, look {self._look}, {self._passes}/{self._trials} trials passed, {money} so far"

    def question_started(self, pair_id: str, pool_size: int, trials_logged: int) -> None:
        """A new question: its trials bar starts from what its log holds."""
        self._pair, self._look, self._passes, self._trials = pair_id, 0, 0, trials_logged
        self._progress.add("trials", total=None, done=trials_logged, lines=False)
        self._progress.update("questions", info=self._info())

    def look_started(self, pair_id: str, look: int, new_trials: int) -> None:
        """The trials bar now runs up to this look."""
        self._look = look
        self._progress.update("trials", total=look, done=look - new_trials)
        self._progress.update("questions", info=self._info())

    def trial_done(self, pair_id: str, passed: bool | None, cost_usd: float | None) -> None:
        """One more trial, and the running cost."""
        self._calls += 1
        self._trials += 1
        self._passes += bool(passed)
        if cost_usd is None:
            self._unpriced += 1
        else:
            self._cost += cost_usd
        self._progress.update("trials", advance=1)
        self._progress.update("questions", info=self._info())

    def question_done(self, mined: MinedQuestion) -> None:
        """Count the question and print its summary line."""
        if self._count:
            self._progress.note(summary_line(mined))
            self._progress.update("questions", advance=1)


mine_app = typer.Typer(
    cls=_DefaultRunGroup,
    name="mine",
    help=(
        "Mine a retrieval dataset: which candidate documents empirically help a blind solver pass "
        "(Monte Carlo relevance verification). 'ragmeter mine REGISTRY' is short for 'ragmeter mine run REGISTRY'."
    ),
    epilog=examples("ragmeter mine examples/mining/registry.yaml -o mined.yaml"),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
app.add_typer(mine_app, name="mine")


@mine_app.command("run", epilog=examples("ragmeter mine examples/mining/registry.yaml -o mined.yaml"))
def mine_run(
    registry: Annotated[Path, typer.Argument(help="Benchmark registry (YAML or JSON).", show_default=False)],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="The mined dataset (YAML).", callback=output_file)
    ] = Path("retrieval_dataset.yaml"),
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue from the trial logs: no trial is run twice.")
    ] = False,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Delete the trial logs and dataset of an earlier run first.")
    ] = False,
    recompute: Annotated[
        bool,
        typer.Option("--recompute", help="Recompute every verdict from the trial logs, with no solver call."),
    ] = False,
    design: Annotated[
        str | None, typer.Option("--design", help="bayes (default: sequential structure search) or fixed.")
    ] = None,
    trials: Annotated[
        int | None,
        typer.Option(
            "--trials", min=1, help="fixed: trials per question (default 10); bayes: the cap n_max (256)."
        ),
    ] = None,
    strict: Annotated[
        bool | None,
        typer.Option(
            "--strict/--no-strict", help="bayes: a YES also needs the exact fisher3 gate.", show_default=False
        ),
    ] = None,
    screen: Annotated[
        int | None,
        typer.Option("--screen", min=0, max=20, help="bayes: up to K all-docs and K no-docs trials first."),
    ] = None,
    tau: Annotated[
        float | None,
        typer.Option("--tau", help="bayes: posterior needed to stop and say YES (0.9).", callback=finite),
    ] = None,
    unsafe_no_sandbox: Annotated[
        bool,
        typer.Option(
            "--unsafe-no-sandbox",
            help="Run the solver's code (pytest benchmarks) WITHOUT a sandbox, as you, with your files "
            "and network (recorded as UNSANDBOXED). Without it, no sandbox means no run.",
        ),
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="Only this benchmark or benchmark:question; repeatable."),
    ] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            "--concurrency", min=1, max=64, help="Solver calls in flight (default: the registry's)."
        ),
    ] = None,
    trials_dir: Annotated[
        Path | None,
        typer.Option(
            "--trials-dir", help="Where the trial logs go (default: <out>.trials/).", callback=output_folder
        ),
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar; one line per question.")
    ] = False,
    executor: ExecutorOption = "local",
    ray_address: RayAddressOption = None,
) -> None:
    """Mine REGISTRY into a retrieval dataset (also a ragmeter evaluation dataset)."""
    from ragmeter.executors import make_executor
    from ragmeter.mining.session import DesignOptions, mine
    from ragmeter.progress import make_progress

    if design is not None and design not in ("bayes", "fixed"):
        raise ConfigError(f"--design must be bayes or fixed, got {design!r}")
    runner = make_executor(executor, address=ray_address)
    if runner.remote and recompute:
        raise ConfigError("--recompute makes no solver call: drop --executor ray")
    err = Console(stderr=True, highlight=False, soft_wrap=True)

    def note(message: str) -> None:
        err.print(message, markup=False)

    progress = make_progress(quiet=quiet, console=err, emit=note)

    def factory(total: int) -> MiningView:
        return MiningView(progress, total)

    options = DesignOptions(name=design, trials=trials, strict=strict, screen=screen, tau=tau)
    try:
        outcome = mine(
            registry,
            out,
            design_options=options,
            resume=resume,
            fresh=fresh,
            recompute=recompute,
            unsafe_no_sandbox=unsafe_no_sandbox,
            only=only,
            concurrency=concurrency,
            trials_dir=trials_dir,
            progress=factory,
            notify=note,
            executor=runner,
        )
        if runner.remote:
            note(executor_note(runner.describe()))
    finally:
        progress.stop()
        runner.close()
    if recompute:
        for mined in outcome.mined:
            note(summary_line(mined))
    calls = sum(m.calls for m in outcome.mined)
    per_q = calls / len(outcome.mined) if outcome.mined else 0.0
    n = len(outcome.mined)
    note(
        f"wrote {outcome.out} ({n} question{'s' if n != 1 else ''}, {calls} solver calls, "
        f"{per_q:.1f} per question); trial logs in {outcome.trials_dir}"
    )
    if outcome.budget_stop is not None:
        raise ConfigError(f"stopped: {outcome.budget_stop}; raise max_cost_usd and continue with --resume")
    if outcome.incomplete:
        names = ", ".join(m.question.pair_id for m in outcome.incomplete[:5])
        more = f" and {len(outcome.incomplete) - 5} more" if len(outcome.incomplete) > 5 else ""
        hint = "" if recompute else "; continue with --resume"
        raise ConfigError(f"{len(outcome.incomplete)} question(s) not decided ({names}{more}){hint}")


@mine_app.command(
    "analyze", epilog=examples("ragmeter mine analyze -d mined.yaml --outputs outputs.jsonl -k 10")
)
def mine_analyze(
    dataset: Annotated[
        Path,
        typer.Option("--dataset", "-d", help="A dataset written by 'ragmeter mine'.", show_default=False),
    ],
    outputs: Annotated[
        Path, typer.Option("--outputs", help="Ranked outputs: JSONL {id, output}.", show_default=False)
    ],
    _old_o: NoInputO = None,
    k: Annotated[
        int, typer.Option("-k", min=1, max=MAX_K, help="A YES document outside the top k is a miss.")
    ] = 5,
    examples: Annotated[int, typer.Option("--examples", min=0, help="Examples shown per bucket.")] = 3,
    vocabulary_threshold: Annotated[
        float,
        typer.Option(
            "--vocabulary-threshold",
            min=0,
            max=1,
            help="Query-term overlap below which a miss is a vocabulary mismatch.",
            callback=finite,
        ),
    ] = 0.25,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
) -> None:
    """Classify each miss: vocabulary mismatch, distractor overlap, specificity gap (or other)."""
    from ragmeter.mining.analysis import BUCKETS, analyze_files

    report = analyze_files(dataset, outputs, k=k, vocabulary_threshold=vocabulary_threshold)
    summary = report.to_dict(per_bucket=examples)
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    console = Console()
    console.print(
        f"{report.scored} pairs with YES documents ({report.skipped} without, skipped; "
        f"{report.missing_output} without output): {report.hits}/{report.gold_documents} YES documents in the top {k}, "
        f"{len(report.misses)} misses",
        markup=False,
        highlight=False,
    )
    table = Table("bucket", "misses", "share", "fix")
    fixes = {
        "vocabulary_mismatch": "vector search",
        "distractor_overlap": "reranking / contrastive training",
        "specificity_gap": "query expansion",
        "other": "",
        "no_output": "the system returned nothing",
    }
    buckets: dict[str, Any] = summary["buckets"]
    for name in BUCKETS:
        share = buckets[name]["share"]
        table.add_row(name, str(buckets[name]["count"]), "" if share is None else f"{share:.0%}", fixes[name])
    console.print(table)
    for name in BUCKETS:
        for example in buckets[name]["examples"]:
            culprit = (
                f"; above it: {example['culprit']} (shares {', '.join(example['shared_terms'])})"
                if example["culprit"]
                else ""
            )
            rank = "not retrieved" if example["rank"] is None else f"rank {example['rank']}"
            console.print(
                f"  [{name}] {example['pair_id']}: {example['query']!r} -> {example['gold']} ({rank}, "
                f"overlap {example['gold_overlap']:.2f}){culprit}",
                markup=False,
                highlight=False,
            )
