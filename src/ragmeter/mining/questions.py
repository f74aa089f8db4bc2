"""Turn a registry into prepared questions: pool, per-question seed and ground truth.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "r.yaml").write_text('''
... seed: 7
... corpora: {c: {packages: [textwrap]}}
... solver: {kind: python, function: "m:f"}
... benchmarks:
...   - name: b
...     corpus: c
...     validator: {kind: answer}
...     candidates: {distractors: 2}
...     questions: [{id: q1, question: "Default width of textwrap.fill?", answer: "70"}]
... ''')
>>> from ragmeter.mining.registry import load_registry
>>> [q] = prepare_questions(load_registry(d / "r.yaml"))
>>> q.pair_id, len(q.pool.candidates), [c.id for c in q.pool.candidates if c.source == "seed"]
('b:q1', 3, ['textwrap.fill'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragmeter.errors import ConfigError
from ragmeter.mining.corpus import Corpus, build_package_corpus, load_corpus_file
from ragmeter.mining.driver import question_seed
from ragmeter.mining.extractor import Pool, build_pool, dotted_names, imported_names, strings_in
from ragmeter.mining.registry import AnswerValidatorSpec, BenchmarkSpec, QuestionSpec, Registry
from ragmeter.mining.validators import GroundTruth


@dataclass(frozen=True)
class MiningQuestion:
    """One question ready to mine."""

    pair_id: str
    benchmark: str
    question_id: str
    query: str
    pool: Pool
    seed: int
    truth: GroundTruth
    task: Literal["answer", "code"]
    solution_file: str | None
    metadata: dict[str, Any] = field(default_factory=dict)


def load_corpora(registry: Registry, names: Sequence[str]) -> dict[str, Corpus]:
    """Build (or read) the named corpora of a registry."""
    out: dict[str, Corpus] = {}
    for name in names:
        spec = registry.corpora[name]
        where = f"{registry.path}:corpora.{name}"
        try:
            if spec.file is not None:
                out[name] = load_corpus_file(registry.resolve(spec.file))
            else:
                out[name] = build_package_corpus(
                    spec.packages, include_methods=spec.include_methods, exclude=spec.exclude
                )
        except ConfigError as exc:
            raise ConfigError(exc.message, where=where) from None
        if not len(out[name]):
            raise ConfigError("the corpus has no documents", where=where)
    return out


def select_pairs(registry: Registry, only: Sequence[str] | None) -> list[tuple[BenchmarkSpec, QuestionSpec]]:
    """The (benchmark, question) pairs named by ``--only`` (benchmark name or ``name:id``), in file order."""
    pairs = registry.pairs()
    if not only:
        return pairs
    chosen: list[tuple[BenchmarkSpec, QuestionSpec]] = []
    for selector in only:
        matched = [(b, q) for b, q in pairs if selector in (b.name, b.pair_id(q)) and (b, q) not in chosen]
        if not any(selector in (b.name, b.pair_id(q)) for b, q in pairs):
            raise ConfigError(f"--only {selector!r} names no benchmark or question (use name or name:id)")
        chosen.extend(matched)
    return [p for p in pairs if p in chosen]


def prepare_questions(
    registry: Registry, *, only: Sequence[str] | None = None, corpora: dict[str, Corpus] | None = None
) -> list[MiningQuestion]:
    """Every selected question with its pool (seeds + distractors), seed and ground truth."""
    selected = select_pairs(registry, only)
    if corpora is None:
        corpora = load_corpora(registry, sorted({b.corpus for b, _ in selected}))
    index = {id(b): i for i, b in enumerate(registry.benchmarks)}
    out: list[MiningQuestion] = []
    for bench, question in selected:
        b_index = index[id(bench)]
        q_index = bench.questions.index(question)
        where = f"{registry.path}:benchmarks[{b_index}].questions[{q_index}]"
        pair_id = bench.pair_id(question)
        sources = bench.candidates.seed_from
        reasons: dict[str, list[str]] = {}

        def note(names: Sequence[str], source: str, reasons: dict[str, list[str]] = reasons) -> list[str]:
            for name in names:
                reasons.setdefault(name, [])
                if source not in reasons[name]:
                    reasons[name].append(source)
            return list(names)

        discovered: list[str] = []
        if "text" in sources:
            discovered += note(dotted_names(question.question), "text")
        if "metadata" in sources:
            discovered += note(
                [n for s in strings_in(question.metadata) for n in dotted_names(s)], "metadata"
            )
        test_paths = [*bench.test_files, *question.test_files]
        test_files = tuple((Path(name).name, registry.resolve(name).read_bytes()) for name in test_paths)
        if "imports" in sources:
            for _, content in test_files:
                discovered += note(imported_names(content.decode("utf-8", "replace")), "imports")
        pool = build_pool(
            corpora[bench.corpus],
            explicit=question.seeds if "seeds" in sources else [],
            discovered=discovered,
            distractors=question.distractors
            if question.distractors is not None
            else bench.candidates.distractors,
            seed=question_seed(registry.seed, pair_id + "#pool"),
            max_pool=bench.candidates.max_pool,
            where=f"{where}.seeds",
            reasons=reasons,
        )
        names = [name for name, _ in test_files]
        if len(set(names)) != len(names):
            raise ConfigError("two test files have the same file name", where=f"{where}.test_files")
        is_answer = isinstance(bench.validator, AnswerValidatorSpec)
        out.append(
            MiningQuestion(
                pair_id=pair_id,
                benchmark=bench.name,
                question_id=question.id,
                query=question.question,
                pool=pool,
                seed=question_seed(registry.seed, pair_id),
                truth=GroundTruth(answers=tuple(question.answers()), test_files=test_files),
                task="answer" if is_answer else "code",
                solution_file=None if is_answer else getattr(bench.validator, "solution_file", None),
                metadata=dict(question.metadata),
            )
        )
    return out
