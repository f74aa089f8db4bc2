"""Project configuration: ``--config PATH`` or ``ragmeter.yaml`` in the working directory.

Every key is checked: a misspelt section or setting is an error that names the
right one, never silently ignored. The ``judge:`` block is checked by the judges'
own model (:mod:`ragmeter.judges.config`) when the file is read.

>>> cfg = RagmeterConfig.model_validate({"metrics": {"retrieval": {"default_k": 10}}})
>>> cfg.metrics.retrieval.default_k
10
>>> cfg = RagmeterConfig.model_validate({"pricing": {"default": {"prompt_per_1k": 0.1, "completion_per_1k": 0.2}}})
>>> cfg.pricing["default"].completion_per_1k, cfg.metrics.rag.snippet_matching
(0.2, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from ragmeter.config_defaults import CONFIG_FILENAME as CONFIG_FILENAME
from ragmeter.config_defaults import FALLBACK_K as FALLBACK_K
from ragmeter.errors import ConfigError
from ragmeter.io.records import describe_validation_error, read_structured
from ragmeter.metrics.names import MAX_K
from ragmeter.schema.rag import ModelPrice
from ragmeter.schema.strict_numbers import NumbersModel


class RetrievalConfig(NumbersModel):
    """``metrics.retrieval``: defaults for the ranking metrics."""

    model_config = ConfigDict(extra="forbid")

    default_k: int = Field(default=FALLBACK_K, ge=1, le=MAX_K)
    relevance_level: float | None = Field(default=None, gt=0)
    metrics: list[str] | None = None


class RagConfig(NumbersModel):
    """``metrics.rag``: whole-RAG settings (see docs/rag.md)."""

    model_config = ConfigDict(extra="forbid")

    snippet_matching: bool = True
    """A gold support that lists snippets also needs one in the chunk text."""


class MetricsConfig(NumbersModel):
    """``metrics``: per-family settings."""

    model_config = ConfigDict(extra="forbid")

    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    rag: RagConfig = Field(default_factory=RagConfig)


class RagmeterConfig(NumbersModel):
    """The whole configuration file."""

    model_config = ConfigDict(extra="forbid")

    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    pricing: dict[str, ModelPrice] = Field(default_factory=dict)
    """Model name → price per 1k prompt/completion tokens; ``default`` prices any other model."""
    index_stats: str | None = None
    """Index-statistics file; a relative path is relative to the config file's folder."""
    judge: Any = None
    """The ``judge:`` block (see docs/judges.md), checked when a judge is used."""


def load_config(
    path: str | Path | None = None, *, cwd: Path | None = None
) -> tuple[RagmeterConfig, Path | None]:
    """Load the config from ``path``, else ``ragmeter.yaml`` in ``cwd``, else defaults.

    Returns the config and the file it came from (``None`` for defaults).
    """
    if path is None:
        candidate = (cwd or Path.cwd()) / CONFIG_FILENAME
        if not candidate.is_file():
            return RagmeterConfig(), None
        path = candidate
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            "is a directory, expected a config file" if path.is_dir() else "config file not found",
            where=str(path),
        )
    data = read_structured(path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("config must be a mapping", where=str(path))
    from pydantic import ValidationError

    try:
        cfg = RagmeterConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, RagmeterConfig), where=str(path)) from None
    if cfg.judge is not None:  # a typo in the judge: block is an error whichever command reads the file
        from ragmeter.judges.config import check_judge_settings

        check_judge_settings(cfg.judge, where=f"{path}: judge")
    return cfg, path
