"""The arguments every evaluation checks first: the cutoff, the relevance level, the config, the metrics.

>>> [m.name for m in resolve_metrics(["mrr", "MRR", "ndcg@10"])]
['mrr', 'ndcg@10']
>>> check_k(0)
Traceback (most recent call last):
...
ragmeter.errors.ConfigError: the cutoff k (-k / k=) must be a whole number >= 1, got 0
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.config_defaults import CONFIG_FILENAME, FALLBACK_K
from ragmeter.errors import ConfigError
from ragmeter.metrics.registry import ResolvedMetric, resolve_metric

if TYPE_CHECKING:
    from ragmeter.config import RagmeterConfig

DEFAULT_DATASET_METRICS = ("hit", "recall@k", "mrr", "ndcg")
DEFAULT_TREC_METRICS = ("map", "mrr", "ndcg", "precision", "recall@k", "r-precision")


def resolve_metrics(names: Sequence[str]) -> list[ResolvedMetric]:
    """Resolve metric names (an unknown one is an error naming it); the same metric twice counts once."""
    resolved: list[ResolvedMetric] = []
    seen: set[str] = set()
    for name in names:
        metric = resolve_metric(name)
        if metric.name not in seen:
            seen.add(metric.name)
            resolved.append(metric)
    return resolved


def check_k(k: int | None) -> None:
    """Refuse a cutoff that is not a whole number >= 1."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ConfigError(f"the cutoff k (-k / k=) must be a whole number >= 1, got {k!r}")


def check_level(level: float | None) -> None:
    """Refuse a relevance level that is not > 0."""
    if level is not None and not level > 0:
        raise ConfigError(
            f"the relevance level (--relevance-level / relevance_level) must be > 0, got {level!r}"
        )


def load_settings(
    config: RagmeterConfig | str | Path | None,
) -> tuple[RagmeterConfig, Path | None]:
    """The config given, or the one read from a file (or found): the config and its path."""
    from ragmeter.config import RagmeterConfig, load_config  # pydantic: only when there is a config

    if isinstance(config, RagmeterConfig):
        return config, None
    return load_config(config)


RetrievalSettings = tuple[list[str] | None, float | None, int]
"""``metrics.retrieval``: the metrics, the relevance level and the default cutoff."""


def retrieval_settings(config: RagmeterConfig | str | Path | None) -> tuple[RetrievalSettings, Path | None]:
    """The ranking metrics' settings from the config, and the config file (the models load only if there is one).

    >>> retrieval_settings(None)[0] == (None, None, FALLBACK_K) or Path(CONFIG_FILENAME).is_file()
    True
    """
    if config is None and not (Path.cwd() / CONFIG_FILENAME).is_file():
        return (None, None, FALLBACK_K), None
    cfg, path = load_settings(config)
    retrieval = cfg.metrics.retrieval
    return (retrieval.metrics, retrieval.relevance_level, retrieval.default_k), path
