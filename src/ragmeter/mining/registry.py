"""The benchmark registry: what to mine, with what solver, against which ground truth.

A registry is a YAML (or JSON) file. Paths in it are relative to the file. Unknown keys are
errors, and every error names the place, e.g.
``registry.yaml:benchmarks[0].questions[3].answer: ...``.

.. code-block:: yaml

    version: 1
    seed: 20260124                  # dataset seed: per-question RNG = sha256(seed, question id)
    corpora:
      stdlib: {packages: [json, textwrap]}     # or {file: docs.jsonl}
    solver: {kind: llm, base_url: "http://127.0.0.1:8000/v1", model: qwen2.5-7b, temperature: 0.7}
    design: {name: bayes}           # optional; the CLI's --design/--trials win
    benchmarks:
      - name: stdlib_api
        corpus: stdlib
        validator: {kind: answer, match: normalised}
        candidates: {distractors: 10}
        questions:
          - {id: fill_width, question: "Default width of textwrap.fill?", answer: "70"}

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "r.yaml").write_text('''
... corpora: {c: {packages: [json]}}
... solver: {kind: python, function: "mymod:solve"}
... benchmarks:
...   - {name: b, corpus: c, validator: {kind: answer}, questions: [{id: 1, question: "?", answer: "x"}]}
... ''')
>>> reg = load_registry(d / "r.yaml")
>>> reg.benchmarks[0].questions[0].id, reg.benchmarks[0].pair_id(reg.benchmarks[0].questions[0])
('1', 'b:1')
>>> _ = (d / "bad.yaml").write_text(
...     "corpora: {c: {packages: [json]}}\\nsolver: {kind: python, function: m:f}\\n"
...     "benchmarks: [{name: b, corpus: c, validator: {kind: answer}, questions: [{id: 1, question: q}]}]\\n")
>>> load_registry(d / "bad.yaml")
Traceback (most recent call last):
...
ragmeter.errors.ConfigError: ...bad.yaml:benchmarks[0].questions[0].answer: the answer validator needs an expected answer
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from ragmeter.errors import ConfigError
from ragmeter.io.records import read_structured, unknown_key_message
from ragmeter.judges.config import Price
from ragmeter.mining.designs import BayesDesign, FixedDesign
from ragmeter.schema.strict_numbers import NumbersModel
from ragmeter.schema.urls import check_http_url

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"

SeedSource = Literal["seeds", "text", "metadata", "imports"]
SEED_SOURCES: tuple[SeedSource, ...] = ("seeds", "text", "metadata", "imports")


def _as_text_id(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value)
    return value


class CorpusSpec(NumbersModel):
    """Where candidate documents come from: installed packages (one doc per public class/function) or a file."""

    model_config = ConfigDict(extra="forbid")

    packages: list[str] = Field(default_factory=list, description="importable package or module names")
    file: str | None = Field(default=None, description="JSONL/YAML/JSON list of {id, text[, aliases]}")
    include_methods: bool = Field(default=False, description="also one doc per public method of a class")
    exclude: list[str] = Field(default_factory=list, description="fqn prefixes to leave out")

    @model_validator(mode="after")
    def _one_source(self) -> CorpusSpec:
        if bool(self.packages) == (self.file is not None):
            raise ValueError("give exactly one of 'packages' or 'file'")
        return self


class LLMSolverSpec(NumbersModel):
    """An LLM on an OpenAI-compatible chat-completions endpoint."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["llm"]
    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    model_revision: str | None = None
    api_key_env: str | None = None
    temperature: float = Field(default=0.7, gt=0, le=2, description="> 0: trials must be independent")
    max_tokens: int = Field(default=1024, ge=16)
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=20)
    retry_base_delay_s: float = Field(default=1.0, ge=0)
    retry_max_delay_s: float = Field(default=60.0, ge=0)
    concurrency: int = Field(default=4, ge=1, le=64)
    max_cost_usd: float | None = Field(default=None, gt=0)
    prices: dict[str, Price] = Field(default_factory=dict)
    system_prompt: str | None = Field(default=None, description="replaces the built-in system prompt")

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return check_http_url(value).rstrip("/")


class PythonSolverSpec(NumbersModel):
    """Your own solver: ``package.module:function`` called with one request dict per trial."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["python"]
    function: str = Field(pattern=r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
    python_path: list[str] = Field(default_factory=lambda: ["."], description="folders put first on sys.path")
    kwargs: dict[str, Any] = Field(default_factory=dict)
    concurrency: int = Field(default=1, ge=1, le=64)
    name: str | None = Field(default=None, description="identity recorded with every trial")


SolverSpec = Annotated[LLMSolverSpec | PythonSolverSpec, Field(discriminator="kind")]


class AnswerValidatorSpec(NumbersModel):
    """Compare the solver's answer with the question's expected answer(s)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["answer"]
    match: Literal["exact", "normalised", "regex", "fuzzy"] = "normalised"
    fuzzy_threshold: float = Field(default=90.0, ge=0, le=100)
    ignore_case: bool = Field(default=True, description="regex only (exact is case-sensitive)")


class PytestValidatorSpec(NumbersModel):
    """Run the benchmark's tests on the solver's code, inside a sandbox."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["pytest"]
    solution_file: str = Field(default="solution.py", pattern=r"^[A-Za-z_][\w]*\.py$")
    timeout_s: float = Field(default=60.0, gt=0, le=3600, description="wall clock per trial")
    cpu_s: int = Field(default=30, ge=1, le=3600, description="CPU seconds (RLIMIT_CPU)")
    memory_mb: int = Field(default=1024, ge=64, description="address space (RLIMIT_AS)")
    max_processes: int = Field(default=64, ge=4, le=4096, description="RLIMIT_NPROC inside the sandbox")
    file_size_mb: int = Field(default=64, ge=1, description="largest file the code may write (RLIMIT_FSIZE)")
    pytest_args: list[str] = Field(default_factory=list)
    sandbox: Literal["auto", "bwrap", "unshare"] = Field(
        default="auto", description="auto: bwrap, else unshare"
    )


ValidatorSpec = Annotated[AnswerValidatorSpec | PytestValidatorSpec, Field(discriminator="kind")]


class CandidatesSpec(NumbersModel):
    """How each question's candidate pool is built: seeded targets plus random distractors."""

    model_config = ConfigDict(extra="forbid")

    distractors: int = Field(default=10, ge=0, le=500)
    seed_from: list[SeedSource] = Field(default_factory=lambda: list(SEED_SOURCES))
    max_pool: int = Field(default=30, ge=1, le=200)


class QuestionSpec(NumbersModel):
    """One question: the task, its ground truth and optional seeded targets."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=NAME_PATTERN)
    question: str = Field(min_length=1)
    answer: str | list[str] | None = None
    test_files: list[str] = Field(default_factory=list)
    seeds: list[str] = Field(default_factory=list, description="fqns that must be in the pool")
    metadata: dict[str, Any] = Field(default_factory=dict)
    distractors: int | None = Field(default=None, ge=0, le=500)

    @field_validator("id", mode="before")
    @classmethod
    def _id(cls, value: Any) -> Any:
        return _as_text_id(value)

    def answers(self) -> list[str]:
        """The expected answers as a list."""
        if self.answer is None:
            return []
        return [self.answer] if isinstance(self.answer, str) else list(self.answer)


class BenchmarkSpec(NumbersModel):
    """One benchmark: questions, their ground truth and where candidates come from."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN)
    description: str | None = None
    corpus: str
    validator: ValidatorSpec
    candidates: CandidatesSpec = Field(default_factory=CandidatesSpec)
    test_files: list[str] = Field(default_factory=list, description="shared by every question")
    questions: list[QuestionSpec] = Field(min_length=1)

    def pair_id(self, question: QuestionSpec) -> str:
        """``<benchmark>:<question id>``, the id of the mined pair."""
        return f"{self.name}:{question.id}"


class DesignSpec(NumbersModel):
    """``design:`` — ``bayes`` (default) or ``fixed``, with the design's parameters."""

    model_config = ConfigDict(extra="forbid")

    name: Literal["bayes", "fixed"] = "bayes"
    params: dict[str, Any] = Field(default_factory=dict)


class Registry(NumbersModel):
    """A benchmark registry file, validated."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    seed: int = Field(default=0, ge=0)
    corpora: dict[str, CorpusSpec] = Field(min_length=1)
    solver: SolverSpec
    design: DesignSpec = Field(default_factory=DesignSpec)
    benchmarks: list[BenchmarkSpec] = Field(min_length=1)

    _path: Path = PrivateAttr(default=Path("registry.yaml"))

    @property
    def path(self) -> Path:
        """The registry file."""
        return self._path

    @property
    def base_dir(self) -> Path:
        """The folder relative paths are resolved against."""
        return self.path.parent

    def resolve(self, relative: str) -> Path:
        """A path of the registry, resolved against its folder."""
        return (self.base_dir / relative).resolve()

    def pairs(self) -> list[tuple[BenchmarkSpec, QuestionSpec]]:
        """Every (benchmark, question), in file order."""
        return [(b, q) for b in self.benchmarks for q in b.questions]


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("llm", "python", "answer", "pytest") and out.endswith(("solver", "validator")):
            continue  # the discriminated-union tag pydantic puts in the path
        else:
            out += f".{part}" if out else str(part)
    return out


def parse_registry(data: Any, *, path: Path) -> Registry:
    """Validate registry data read from ``path`` (no file access beyond the cross-checks)."""
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping, got {type(data).__name__}", where=str(path))
    try:
        registry = Registry.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        err = next(
            (e for e in errors if e["type"] == "extra_forbidden"), errors[0]
        )  # a typo explains the rest
        message = str(err["msg"]).removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = unknown_key_message(Registry, tuple(err["loc"]), what="key")
        raise ConfigError(message, where=f"{path}:{_where(tuple(err['loc']))}") from None
    registry._path = path
    _cross_check(registry)
    return registry


def load_registry(path: str | Path) -> Registry:
    """Read and validate a registry file, with cross-checks (answers, test files, corpora, ids)."""
    path = Path(path)
    return parse_registry(read_structured(path), path=path)


def _cross_check(registry: Registry) -> None:
    path = registry.path
    names: set[str] = set()
    for b_index, bench in enumerate(registry.benchmarks):
        where = f"{path}:benchmarks[{b_index}]"
        if bench.name in names:
            raise ConfigError(f"benchmark name {bench.name!r} is used twice", where=f"{where}.name")
        names.add(bench.name)
        if bench.corpus not in registry.corpora:
            known = ", ".join(sorted(registry.corpora))
            raise ConfigError(f"no corpus named {bench.corpus!r} (corpora: {known})", where=f"{where}.corpus")
        for f_index, name in enumerate(bench.test_files):
            _check_file(registry, name, f"{where}.test_files[{f_index}]")
        seen: set[str] = set()
        for q_index, question in enumerate(bench.questions):
            q_where = f"{where}.questions[{q_index}]"
            if question.id in seen:
                raise ConfigError(f"question id {question.id!r} is used twice", where=f"{q_where}.id")
            seen.add(question.id)
            validator = bench.validator
            if isinstance(validator, AnswerValidatorSpec):
                if not question.answers():
                    raise ConfigError(
                        "the answer validator needs an expected answer", where=f"{q_where}.answer"
                    )
                for a_index, answer in enumerate(question.answers()):
                    if validator.match == "regex":
                        try:
                            re.compile(answer)
                        except re.error as exc:
                            suffix = f"[{a_index}]" if isinstance(question.answer, list) else ""
                            raise ConfigError(
                                f"not a valid regular expression ({exc})", where=f"{q_where}.answer{suffix}"
                            ) from None
                if question.test_files:
                    raise ConfigError("test_files need the pytest validator", where=f"{q_where}.test_files")
            else:
                if not question.test_files and not bench.test_files:
                    raise ConfigError(
                        "the pytest validator needs test_files (here or on the benchmark)",
                        where=f"{q_where}.test_files",
                    )
                for f_index, name in enumerate(question.test_files):
                    _check_file(registry, name, f"{q_where}.test_files[{f_index}]")
    for name, corpus in registry.corpora.items():
        if corpus.file is not None:
            _check_file(registry, corpus.file, f"{path}:corpora.{name}.file")


def _check_file(registry: Registry, name: str, where: str) -> None:
    if Path(name).is_absolute() or ".." in Path(name).parts:
        raise ConfigError("must be a relative path inside the registry's folder", where=where)
    if not registry.resolve(name).is_file():
        raise ConfigError(f"file not found: {registry.resolve(name)}", where=where)


def design_from_spec(spec: DesignSpec, *, where: str) -> BayesDesign | FixedDesign:
    """Build the design named by a registry's ``design:`` block.

    >>> design_from_spec(DesignSpec(name="fixed", params={"trials": 20}), where="r.yaml:design").trials
    20
    """
    model: type[BayesDesign] | type[FixedDesign] = BayesDesign if spec.name == "bayes" else FixedDesign
    try:
        return model.model_validate(spec.params)
    except ValidationError as exc:
        err = exc.errors()[0]
        message = str(err["msg"]).removeprefix("Value error, ")
        raise ConfigError(message, where=f"{where}.params.{_where(tuple(err['loc']))}") from None
