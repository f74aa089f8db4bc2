"""One ``ragmeter synth`` run: corpus -> generation -> filters -> verification -> dataset and report.

Everything the run asks is logged before it is used, in ``<out stem>.synth/`` next to the
dataset: ``generation.jsonl`` (one record per generation task) and ``trials/`` (the Monte
Carlo trial log of each question, and its closed-book or abstention log). ``--resume``
continues from them and asks nothing already answered; a finished run resumed makes no call.
The dataset and the report are written atomically at the end — also after Ctrl-C, an error or
a budget stop, with the questions decided so far.

>>> default_work_dir(Path("results/synth/tests.yaml"))
PosixPath('results/synth/tests.synth')
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragmeter.errors import ConfigError
from ragmeter.io.digests import file_sha256
from ragmeter.io.records import check_output_file, describe_validation_error
from ragmeter.mining.miner import MiningProgress, SilentProgress
from ragmeter.mining.solvers import Solver
from ragmeter.synth.checks import ABSTAIN_SYSTEM_PROMPT
from ragmeter.synth.config import LLMGeneratorSpec, SynthConfig, default_solver
from ragmeter.synth.corpus import SynthCorpus, load_corpus
from ragmeter.synth.dataset import dataset_document, write_dataset
from ragmeter.synth.drafts import Draft, drafts_from_reply
from ragmeter.synth.filters import CachedSimilarity, FilterOutcome, apply_filters
from ragmeter.synth.generation import GenerationLog, GenerationStats, run_tasks
from ragmeter.synth.generator import Generator, build_generator, task_variables
from ragmeter.synth.plan import Task, plan_tasks, shortfall, variant_tasks
from ragmeter.synth.report import build_report, report_paths, write_report
from ragmeter.synth.verify import Verified, Verifier

GENERATION_LOG = "generation.jsonl"
SIMILARITIES = "bertscore.json"
TRIALS = "trials"


def default_work_dir(out: Path) -> Path:
    """``<out without suffix>.synth``: where the logs of a run go."""
    stem = out.with_suffix("")
    return stem.with_name(stem.name + ".synth")


@dataclass
class Overrides:
    """Command-line options that win over ``synth.yaml`` (``None``: take the file's)."""

    n: int | None = None
    categories: Sequence[str] | None = None
    seed: int | None = None
    verify: bool | None = None
    judge_config: Path | None = None
    concurrency: int | None = None


@dataclass
class SynthOutcome:
    """What a run did."""

    out: Path
    work_dir: Path
    report_files: tuple[Path, Path]
    report: dict[str, Any]
    verified: list[Verified] = field(default_factory=list)
    generation: GenerationStats = field(default_factory=GenerationStats)
    budget_stop: str | None = None
    written: bool = False
    """Whether the dataset and the report were written (not when generation gave no question)."""

    @property
    def pending(self) -> list[Verified]:
        """Questions not decided (a failed call or the budget)."""
        return [v for v in self.verified if v.status == "pending"]

    @property
    def complete(self) -> bool:
        """True when nothing is left for ``--resume`` to do."""
        return not self.pending and not self.generation.failed and self.budget_stop is None


def apply_overrides(config: SynthConfig, overrides: Overrides) -> SynthConfig:
    """The config with the command-line options applied (validated again)."""
    from ragmeter.judges.config import load_judge_config

    data: dict[str, Any] = {}
    if overrides.n is not None:
        data["n"] = overrides.n
    if overrides.categories is not None:
        data["categories"] = list(overrides.categories)
    if overrides.seed is not None:
        data["seed"] = overrides.seed
    if overrides.verify is not None:
        data["verification"] = config.verification.model_copy(update={"enabled": overrides.verify})
    if overrides.judge_config is not None:
        judge = load_judge_config(overrides.judge_config)
        data["generator"] = LLMGeneratorSpec.model_validate({"kind": "llm", **judge.model_dump()})
    if not data:
        return config
    try:
        updated = SynthConfig.model_validate({**config.model_dump(exclude_unset=True), **data})
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, SynthConfig), where="command line") from None
    updated._path = config._path
    return updated


def _build_solvers(config: SynthConfig, concurrency: int | None) -> tuple[Solver, Solver]:
    """The blind solver, and the one used for abstention checks (an LLM told it may abstain)."""
    from ragmeter.mining.registry import LLMSolverSpec

    spec = config.solver
    if spec is None:
        if not isinstance(config.generator, LLMGeneratorSpec):
            raise ConfigError("a python generator needs a solver: add a 'solver:' block", where=config.where)
        spec = default_solver(config.generator)
    if isinstance(spec, LLMSolverSpec):
        from ragmeter.mining.llm_solver import LLMSolver

        if concurrency is not None:
            spec = spec.model_copy(update={"concurrency": concurrency})
        abstain = spec.model_copy(update={"system_prompt": spec.system_prompt or ABSTAIN_SYSTEM_PROMPT})
        return LLMSolver(spec, where="solver"), LLMSolver(abstain, where="solver")
    from ragmeter.mining.solvers import load_python_solver

    solver = load_python_solver(
        spec.function,
        python_path=[str(config.resolve(p)) for p in spec.python_path],
        kwargs=spec.kwargs,
        concurrency=concurrency or spec.concurrency,
        name=spec.name,
        where="solver.function",
    )
    return solver, solver


def _clean(out: Path, work: Path) -> None:
    """``--fresh``: delete the logs, dataset and report of an earlier run."""
    for path in (work / GENERATION_LOG, work / SIMILARITIES, *sorted((work / TRIALS).glob("*.jsonl"))):
        path.unlink(missing_ok=True)
    for folder in (work / TRIALS, work):
        with contextlib.suppress(OSError):
            folder.rmdir()
    for path in (out, *report_paths(out)):
        path.unlink(missing_ok=True)


def _check_start(out: Path, work: Path, *, resume: bool, fresh: bool) -> None:
    """Refuse a run that would mix with an earlier one (before anything is read, written or deleted)."""
    if resume and fresh:
        raise ConfigError("choose one of --resume and --fresh")
    check_output_file(out)
    if not resume and not fresh and (out.exists() or (work / GENERATION_LOG).exists()):
        raise ConfigError(
            f"{out} or its logs in {work} exist from an earlier run; pass --resume to continue or --fresh to start over"
        )


OnTask = Callable[[int, int], None]
"""``on_task(done, total)``: generation or verification progress."""


class _Stage:
    """Generation bookkeeping: the log's records turned into drafts, and why a task gave none."""

    def __init__(self, corpus: SynthCorpus, log: GenerationLog) -> None:
        self.corpus = corpus
        self.log = log
        self.texts = {c.id: corpus.text_of(c.id) for c in corpus.chunks}
        self.outcomes: dict[str, str] = {}

    def drafts(self, tasks: Sequence[Task], parents: Mapping[str, Draft]) -> list[Draft]:
        out: list[Draft] = []
        for task in tasks:
            record = self.log.records.get(task.id)
            if record is None:
                continue
            if record.get("status") != "ok":
                self.outcomes[task.id] = "unusable_reply"
                continue
            made, why = drafts_from_reply(task, record.get("reply") or {}, texts=self.texts, parents=parents)
            if why is not None:
                self.outcomes[task.id] = why
            out += made
        return out


@dataclass
class _Run:
    """One run's settings, clients and results, step by step."""

    cfg: SynthConfig
    out: Path
    work: Path
    resume: bool
    corpus: SynthCorpus
    generator: Generator
    solvers: tuple[Solver, Solver] | None
    tasks: list[Task]
    notify: Callable[[str], None]
    stats: GenerationStats = field(default_factory=GenerationStats)
    stage: _Stage | None = None
    made: dict[str, int] = field(default_factory=dict)
    drafts: list[Draft] = field(default_factory=list)
    filtered: FilterOutcome = field(default_factory=FilterOutcome)
    verified: list[Verified] = field(default_factory=list)
    verifier: Verifier | None = None

    @property
    def counts(self) -> dict[str, int]:
        return self.cfg.counts()

    def _ask(
        self, tasks: Sequence[Task], parents: Mapping[str, Draft], label: str, on_task: OnTask | None
    ) -> list[Draft]:
        stage = self.stage
        assert stage is not None
        todo = sum(1 for t in tasks if t.id not in stage.log.records)
        if tasks:
            self.notify(
                f"generation ({label}): {len(tasks)} tasks, {len(tasks) - todo} from the log, {todo} to ask"
            )
        done = 0
        lock = threading.Lock()

        def tick(task: Task) -> None:
            nonlocal done
            with lock:
                done += 1
                if on_task is not None:
                    on_task(done, todo)

        run_tasks(
            tasks,
            generator=self.generator,
            log=stage.log,
            variables=lambda task: task_variables(task, self.corpus, parents),
            stats=self.stats,
            on_done=tick,
        )
        return stage.drafts(tasks, parents)

    def generate(self, on_task: OnTask | None) -> None:
        """Both stages: every category but the variants, then the variants of the questions kept so far."""
        cfg = self.cfg
        fingerprint = {
            "corpus": self.corpus.digest,
            "seed": cfg.seed,
            "plan": {"counts": self.counts, "min_source_tokens": cfg.corpus.min_source_tokens},
            "generator": self.generator.identity(),
        }
        tasks = self.tasks
        self.made = {c: sum(1 for t in tasks if t.category == c) for c in self.counts}
        log = GenerationLog(self.work / GENERATION_LOG, fingerprint, resume=self.resume)
        try:
            self.stage = _Stage(self.corpus, log)
            first = self._ask(tasks, {}, "first", on_task)
            lexical = cfg.filters.model_copy(update={"bertscore": False})
            parents = {d.id: d for d in apply_filters(first, lexical).kept}
            eligible = [(d.id, d.sources) for d in parents.values() if d.category in ("factual", "multi_hop")]
            variants = variant_tasks(eligible, self.counts)
            for kind in ("paraphrase", "adversarial"):
                self.made[kind] = sum(1 for t in variants if kind in t.extra["make"])
            self.drafts = first + self._ask(variants, parents, "variants", on_task)
        finally:
            log.close()
        self.stats.unusable = {
            k: str(r.get("reason")) for k, r in log.records.items() if r.get("status") != "ok"
        }

    def filter(self) -> None:
        """Answer-in-question and near-duplicates (BERTScore scores cached in the work folder)."""
        similarity = CachedSimilarity(self.work / SIMILARITIES, self.cfg.filters.bertscore_model)
        self.filtered = apply_filters(self.drafts, self.cfg.filters, similarity=similarity)
        similarity.save()
        what = "verify" if self.solvers else "write (not verified)"
        self.notify(
            f"generated {len(self.drafts)} questions; {len(self.filtered.rejected)} filtered out, "
            f"{len(self.filtered.kept)} to {what}"
        )

    def verify(self, progress: Callable[[int], MiningProgress] | None, on_question: OnTask | None) -> None:
        """Verify each question in turn; stop at a budget stop (the rest stay pending)."""
        if self.solvers is None:
            self.verified = [Verified(d, "kept", None, "not verified") for d in self.filtered.kept]
            return
        self.verifier = Verifier(
            corpus=self.corpus,
            settings=self.cfg.verification,
            design=self.cfg.verification.bayes(self.cfg.where),
            solver=self.solvers[0],
            abstain_solver=self.solvers[1],
            seed=self.cfg.seed,
            trials_dir=self.work / TRIALS,
            resume=self.resume,
            progress=progress(len(self.filtered.kept)) if progress is not None else SilentProgress(),
        )
        kept = self.filtered.kept
        for draft in kept:
            if self.budget is not None:
                break
            result = self.verifier.verify(draft)
            self.verified.append(result)
            self.notify(_question_line(result))
            if on_question is not None:
                on_question(len(self.verified), len(kept))

    @property
    def budget(self) -> str | None:
        """Why the budget stopped the run (generator's or solver's), if it did."""
        return self.stats.budget or (self.verifier.budget if self.verifier is not None else None)

    def close(self) -> None:
        """Release the clients and the trial pool."""
        if self.verifier is not None:
            self.verifier.close()
        self.generator.close()
        for solver in {id(s): s for s in self.solvers or ()}.values():
            solver.close()

    def finish(self) -> SynthOutcome:
        """Mark what was not reached as pending, write the dataset and the report (also after an error)."""
        if self.solvers is not None:
            reached = {v.draft.id for v in self.verified}
            self.verified += [
                Verified(d, "pending", "incomplete", "not verified yet")
                for d in self.filtered.kept
                if d.id not in reached
            ]
        cfg = self.cfg
        complete = not any(v.status == "pending" for v in self.verified) and not self.stats.failed
        header = {
            "seed": cfg.seed,
            "config": {
                "path": str(cfg._path) if cfg._path else None,
                "sha256": file_sha256(cfg._path) if cfg._path else None,
            },
            "generator": self.generator.identity(),
            "solver": self.solvers[0].identity() if self.solvers else None,
            "complete": complete and self.budget is None,
            "logs": str(self.work),
        }
        report = build_report(
            drafts=self.drafts,
            filtered=self.filtered.rejected,
            verified=self.verified,
            generation=self.stats.to_dict(),
            generation_outcomes=self.stage.outcomes if self.stage is not None else {},
            requested=self.counts,
            shortfall=shortfall(self.made, self.counts) if self.made else {},
            verify=self.solvers is not None,
            dataset=self.out,
        )
        files = report_paths(self.out)
        written = bool(self.drafts)
        if written:
            kept = [v for v in self.verified if v.status == "kept"]
            design = cfg.verification.bayes(cfg.where)
            document = dataset_document(
                kept,
                corpus=self.corpus,
                dataset_path=self.out,
                header=header,
                design=design,
                verify=self.solvers is not None,
            )
            write_dataset(self.out, document)
            files = write_report(self.out, report)
        return SynthOutcome(
            self.out, self.work, files, report, self.verified, self.stats, self.budget, written
        )


def synthesize(
    corpus_path: str | Path,
    out: str | Path,
    *,
    config: SynthConfig | str | Path | None = None,
    overrides: Overrides | None = None,
    resume: bool = False,
    fresh: bool = False,
    work_dir: str | Path | None = None,
    progress: Callable[[int], MiningProgress] | None = None,
    notify: Callable[[str], None] | None = None,
    on_task: OnTask | None = None,
    on_question: OnTask | None = None,
) -> SynthOutcome:
    """Generate, filter and verify a test set from a corpus; write the dataset and the report.

    Everything is checked (settings, paths, corpus, generator, solver) before anything is read
    from or written to the work folder; ``--fresh`` deletes the earlier run only then.
    ``progress`` is called with the number of questions to verify and returns the trial
    progress sink (as for ``ragmeter mine``); ``notify`` gets one line per step and per
    question; ``on_task(done, total)`` is called as generation tasks finish, ``on_question(done,
    total)`` as questions are verified (some are decided before any mining, or without).
    """
    from ragmeter.synth.config import load_config

    overrides = overrides or Overrides()
    cfg = apply_overrides(config if isinstance(config, SynthConfig) else load_config(config), overrides)
    if cfg.generator is None:
        raise ConfigError(
            "no generator: give --judge-config (a file with a 'judge:' block) or a 'generator:' block in --config"
        )
    out = Path(out)
    work = Path(work_dir) if work_dir is not None else default_work_dir(out)
    _check_start(out, work, resume=resume, fresh=fresh)
    cfg.verification.bayes(cfg.where)  # a bad design or mix is an error before any work
    counts = cfg.counts()
    corpus = load_corpus(corpus_path, cfg.corpus)
    tasks = plan_tasks(corpus, counts, seed=cfg.seed, min_source_tokens=cfg.corpus.min_source_tokens)
    if not tasks:
        raise ConfigError(
            f"no chunk of the corpus has the {cfg.corpus.min_source_tokens} tokens a question is made from "
            "(corpus.min_source_tokens), or no pair of chunks fits the categories asked for",
            where=str(corpus_path),
        )
    solvers = _build_solvers(cfg, overrides.concurrency) if cfg.verification.enabled else None
    generator = build_generator(
        cfg.generator,
        base_dir=cfg.base_dir,
        versions=cfg.prompt_versions,
        prompts_dir=cfg.resolve(cfg.prompts_dir) if cfg.prompts_dir else None,
    )
    if fresh:  # everything checked: only now is the earlier run deleted
        _clean(out, work)
    run = _Run(cfg, out, work, resume, corpus, generator, solvers, tasks, notify or (lambda message: None))
    run.notify(f"corpus {corpus_path}: {len(corpus)} {corpus.format} chunks; asking for {cfg.n} questions")
    try:
        run.generate(on_task)
        run.filter()
        run.verify(progress, on_question)
    finally:
        run.close()
        outcome = run.finish()
    return outcome


def _question_line(result: Verified) -> str:
    """One line per verified question: ``fact-0003: kept as factual (gold: a.md#A; 16 trials, 19 calls)``."""
    trials = result.mined.conclusion.trials if result.mined and result.mined.conclusion else 0
    if result.status == "kept":
        gold = ", ".join(s.chunk_id for s in result.supports) or "none (unanswerable)"
        return f"{result.draft.id}: kept as {result.category} (gold: {gold}; {trials} trials, {result.calls} calls)"
    return f"{result.draft.id}: {result.status} ({result.reason}: {result.detail})"
