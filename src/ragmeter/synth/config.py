"""The synthesis settings: ``synth.yaml`` (every key optional) and the command-line options that win.

Paths in the file (``python_path``, ``prompts_dir``) are relative to the file. Unknown keys are
errors, and every error names the file, the line and the key
(``synth.yaml:7: verification.distractor: unknown key; did you mean 'distractors'?``).

.. code-block:: yaml

    seed: 7
    n: 40                                  # questions to generate, spread over the categories
    categories: [factual, multi_hop, recency, unanswerable, paraphrase, adversarial]
    generator: {kind: llm, base_url: "http://127.0.0.1:8000/v1", model: qwen2.5-14b}   # a judge block
    solver: {kind: llm, base_url: "http://127.0.0.1:8000/v1", model: qwen2.5-7b, temperature: 0.7}
    verification: {distractors: 6, closed_book_trials: 3}
    filters: {fuzzy_threshold: 90, bertscore: true}

>>> cfg = parse_config({"n": 12, "categories": ["factual", "unanswerable"]}, path=Path("s.yaml"))
>>> cfg.counts()
{'factual': 8, 'unanswerable': 4}
>>> parse_config({"verification": {"distractor": 3}}, path=Path("s.yaml"))
Traceback (most recent call last):
...
ragmeter.errors.ConfigError: s.yaml: verification.distractor: unknown key; did you mean 'distractors'?
"""

from __future__ import annotations

import difflib
import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from ragmeter.errors import ConfigError
from ragmeter.judges.config import JudgeConfig
from ragmeter.mining.designs import BayesDesign
from ragmeter.mining.registry import LLMSolverSpec, PythonSolverSpec
from ragmeter.schema.strict_numbers import NumbersModel

Category = Literal["factual", "multi_hop", "recency", "unanswerable", "paraphrase", "adversarial"]
CATEGORIES: tuple[Category, ...] = (
    "factual",
    "multi_hop",
    "recency",
    "unanswerable",
    "paraphrase",
    "adversarial",
)
DEFAULT_MIX: dict[Category, float] = {
    "factual": 0.35,
    "multi_hop": 0.2,
    "recency": 0.1,
    "unanswerable": 0.15,
    "paraphrase": 0.1,
    "adversarial": 0.1,
}
"""The share of ``n`` each category gets (renormalised over the categories asked for)."""

PROMPT_IDS: dict[str, str] = {
    "factual": "synth_factual",
    "multi_hop": "synth_multi_hop",
    "recency": "synth_recency",
    "unanswerable": "synth_unanswerable",
    "variants": "synth_variants",
}
"""The prompt file of each generation task (``paraphrase`` and ``adversarial`` share ``variants``)."""


class CorpusSettings(NumbersModel):
    """How the corpus is read and chunked (the reference pipeline's chunker for vaults)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["auto", "vault", "text", "beir"] = Field(
        default="auto", description="auto: a BEIR corpus.jsonl file, else a folder of notes or text files"
    )
    max_chunk_tokens: int = Field(
        default=200, ge=8, le=10_000, description="largest chunk (pipeline default)"
    )
    min_source_tokens: int = Field(default=8, ge=1, description="smaller chunks are not generation sources")
    bm25_k1: float = Field(default=1.5, ge=0)
    bm25_b: float = Field(default=0.75, ge=0, le=1)


class LLMGeneratorSpec(JudgeConfig):
    """The generator on an OpenAI-compatible endpoint: a ``judge:`` block (pinned, cached, temperature 0)."""

    kind: Literal["llm"] = "llm"


class PythonGeneratorSpec(PythonSolverSpec):
    """A scripted generator: ``package.module:function(request)`` returning the reply text (or a dict).

    The same keys as a ``python`` solver; ``python_path`` is relative to the config file.
    """


GeneratorSpec = Annotated[LLMGeneratorSpec | PythonGeneratorSpec, Field(discriminator="kind")]
SolverSpec = Annotated[LLMSolverSpec | PythonSolverSpec, Field(discriminator="kind")]


class VerificationSettings(NumbersModel):
    """How each question is verified with the mining trials (research/montecarlo.md's design)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    distractors: int = Field(default=6, ge=0, le=30, description="BM25-retrieved chunks added to the pool")
    closed_book_trials: int = Field(default=3, ge=0, le=20, description="no-context trials (0: no check)")
    closed_book_max_passes: int = Field(default=0, ge=0, description="more passes than this: rejected")
    answer_threshold: float = Field(default=90.0, ge=0, le=100, description="fuzzy match of the answer")
    sufficiency_trials: int = Field(
        default=4, ge=0, le=20, description="trials showing only the verified gold (0: no check)"
    )
    sufficiency_min_passes: int = Field(default=2, ge=1, description="passes those trials need")
    unanswerable_top_k: int = Field(default=5, ge=1, le=30, description="chunks shown to the solver")
    unanswerable_trials: int = Field(default=3, ge=1, le=20, description="every one must abstain")
    recency_min_newer_rate: float = Field(
        default=0.5, ge=0, le=1, description="pass rate needed when both conflicting chunks are shown"
    )
    design: dict[str, Any] = Field(default_factory=dict, description="parameters of the bayes design")

    def bayes(self, where: str) -> BayesDesign:
        """The verification design (mining's ``bayes``, with these parameters)."""
        try:
            return BayesDesign.model_validate(self.design)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise ConfigError(
                f"verification.design.{loc}: {str(err['msg']).removeprefix('Value error, ')}", where=where
            ) from None


class FilterSettings(NumbersModel):
    """Which generated questions are dropped before verification."""

    model_config = ConfigDict(extra="forbid")

    answer_in_question: bool = Field(default=True, description="drop questions that contain their answer")
    fuzzy_threshold: float = Field(
        default=90.0,
        ge=0,
        le=100,
        description="rapidfuzz token-sort ratio at which two questions are duplicates",
    )
    bertscore: bool = Field(default=True, description="then BERTScore on the bundled offline model")
    bertscore_threshold: float = Field(default=0.9, gt=0, le=1, description="BERTScore F1 of duplicates")
    bertscore_model: str = "all-MiniLM-L6-v2"
    bertscore_candidates: float = Field(
        default=40.0,
        ge=0,
        le=100,
        description="two unanswerable questions may be duplicates when their token-set ratio is at least this",
    )


class SynthConfig(NumbersModel):
    """Everything ``ragmeter synth`` can be told; every key has a default."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    seed: int = Field(default=0, ge=0)
    n: int = Field(default=40, ge=1, le=100_000, description="questions to generate (before filtering)")
    categories: list[Category] = Field(default_factory=lambda: list(CATEGORIES), min_length=1)
    mix: dict[Category, float] = Field(default_factory=lambda: dict(DEFAULT_MIX))
    corpus: CorpusSettings = Field(default_factory=CorpusSettings)
    generator: GeneratorSpec | None = None
    solver: SolverSpec | None = None
    prompt_versions: dict[str, str] = Field(default_factory=dict, description="e.g. {synth_factual: v1}")
    prompts_dir: str | None = Field(default=None, description="your own <id>.<version>.md prompt files")
    verification: VerificationSettings = Field(default_factory=VerificationSettings)
    filters: FilterSettings = Field(default_factory=FilterSettings)

    _path: Path | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _generator_kind(cls, value: Any) -> Any:
        if (
            isinstance(value, dict)
            and isinstance(value.get("generator"), dict)
            and "kind" not in value["generator"]
        ):
            value = {**value, "generator": {"kind": "llm", **value["generator"]}}
        return value

    @field_validator("categories")
    @classmethod
    def _unique(cls, value: list[Category]) -> list[Category]:
        if len(set(value)) != len(value):
            raise ValueError("a category is listed twice")
        return value

    @field_validator("mix")
    @classmethod
    def _mix(cls, value: dict[Category, float]) -> dict[Category, float]:
        for name, weight in value.items():
            if not math.isfinite(weight) or weight < 0:
                raise ValueError(f"the weight of {name!r} must be a finite number >= 0, got {weight!r}")
        return value

    @field_validator("prompt_versions")
    @classmethod
    def _versions(cls, value: dict[str, str]) -> dict[str, str]:
        known = set(PROMPT_IDS.values())
        for prompt, version in value.items():
            if prompt not in known:
                raise ValueError(f"unknown prompt {prompt!r} (known: {', '.join(sorted(known))})")
            if not version.startswith("v"):
                raise ValueError(f"version of {prompt!r} must look like v1 or v2-alt, got {version!r}")
        return value

    @property
    def base_dir(self) -> Path:
        """The folder relative paths are resolved against (the config file's, else the current one)."""
        return self._path.parent if self._path is not None else Path(".")

    @property
    def where(self) -> str:
        """The config file, for error messages."""
        return str(self._path) if self._path is not None else "synth config"

    def resolve(self, relative: str) -> Path:
        """A path of the config, resolved against its folder."""
        path = Path(relative).expanduser()
        return path if path.is_absolute() else (self.base_dir / path)

    def counts(self) -> dict[str, int]:
        """Questions per category: ``n`` split by ``mix`` over ``categories`` (largest remainder).

        >>> SynthConfig(n=10, categories=["factual", "multi_hop"]).counts()
        {'factual': 6, 'multi_hop': 4}
        """
        weights: dict[str, float] = {c: self.mix.get(c, DEFAULT_MIX[c]) for c in self.categories}
        total = sum(weights.values())
        if total <= 0:
            raise ConfigError(
                "the mix gives every category asked for a weight of 0", where=f"{self.where}: mix"
            )
        exact = {c: self.n * w / total for c, w in weights.items()}
        counts: dict[str, int] = {c: math.floor(v) for c, v in exact.items()}
        left = self.n - sum(counts.values())
        order = list(weights)
        for c in sorted(exact, key=lambda c: (-(exact[c] - counts[c]), order.index(c)))[:left]:
            counts[c] += 1
        return counts


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in ("llm", "python") and out.endswith(("generator", "solver")):
            continue  # the discriminated-union tag pydantic puts in the path
        else:
            out += f".{part}" if out else str(part)
    return out


_SECTIONS: dict[str, type[BaseModel]] = {
    "corpus": CorpusSettings,
    "verification": VerificationSettings,
    "filters": FilterSettings,
    "generator": LLMGeneratorSpec,
    "solver": LLMSolverSpec,
}


def _describe(exc: ValidationError) -> tuple[tuple[Any, ...], str]:
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p in ("llm", "python")))
    if err["type"] == "extra_forbidden":
        model = SynthConfig if len(loc) == 1 else _SECTIONS.get(str(loc[0])) if len(loc) == 2 else None
        known = list(model.model_fields) if model is not None else []
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        return loc, "unknown key" + (f"; did you mean {close[0]!r}?" if close else "")
    if err["type"] == "missing":
        return loc, "required key is missing"
    return loc, str(err["msg"]).removeprefix("Value error, ")


def parse_config(data: Any, *, path: Path, text: str | None = None) -> SynthConfig:
    """Validate synth settings read from ``path`` (``text``, when given, locates the line of an error)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"expected a mapping, got {type(data).__name__}", where=str(path))
    try:
        config = SynthConfig.model_validate(data)
    except ValidationError as exc:
        loc, message = _describe(exc)
        where = str(path)
        if text is not None and path.suffix.lower() != ".json":
            from ragmeter.harness.suite import yaml_line

            line = yaml_line(text, [p for p in loc if isinstance(p, (str, int))])
            where = f"{path}:{line}" if line is not None else where
        raise ConfigError(f"{_format_loc(loc)}: {message}" if loc else message, where=where) from None
    config._path = path
    return config


def load_config(path: str | Path | None) -> SynthConfig:
    """Read ``synth.yaml`` (``None``: every default)."""
    if path is None:
        return SynthConfig()
    from ragmeter.errors import InputError
    from ragmeter.io.records import read_structured, read_text

    path = Path(path)
    try:
        text = read_text(path)
        data = read_structured(path)
    except InputError as exc:
        raise ConfigError(exc.message, where=exc.where) from None
    return parse_config(data, path=path, text=text)


def default_solver(generator: LLMGeneratorSpec) -> LLMSolverSpec:
    """The blind solver when none is configured: the generator's endpoint and model at temperature 0.7.

    >>> gen = LLMGeneratorSpec(base_url="http://127.0.0.1:8000/v1", model="m")
    >>> s = default_solver(gen)
    >>> s.model, s.temperature, s.max_tokens
    ('m', 0.7, 256)
    """
    return LLMSolverSpec(
        kind="llm",
        base_url=generator.base_url,
        model=generator.model,
        model_revision=generator.model_revision,
        api_key_env=generator.api_key_env,
        temperature=0.7,
        max_tokens=256,
        timeout_s=generator.timeout_s,
        max_retries=generator.max_retries,
        retry_base_delay_s=generator.retry_base_delay_s,
        retry_max_delay_s=generator.retry_max_delay_s,
        concurrency=generator.concurrency,
        prices=dict(generator.prices),
    )
