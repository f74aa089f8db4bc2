"""The arguments every evaluation checks first: the cutoff, the relevance level, the config, the metrics.

>>> [m.name for m in resolve_metrics(["mrr", "MRR", "ndcg@10"])]
['mrr', 'ndcg@10']
>>> check_k(0)
Traceback (most recent call last):
...
ragmeter.errors.ConfigError: the cutoff k (-k / k=) must be a whole number >= 1, got 0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.config_defaults import CONFIG_FILENAME, FALLBACK_K
from ragmeter.errors import ConfigError
from ragmeter.metrics.names import MAX_K, expand_metric_names
from ragmeter.metrics.registry import ResolvedMetric, resolve_metric

if TYPE_CHECKING:
    from ragmeter.config import RagmeterConfig

DEFAULT_DATASET_METRICS = ("hit", "recall@k", "mrr", "ndcg")
DEFAULT_TREC_METRICS = ("map", "mrr", "ndcg", "precision", "recall@k", "r-precision")


def resolve_metrics(names: Sequence[str]) -> list[ResolvedMetric]:
    """Resolve metric names (an unknown one is an error naming it); the same metric twice counts once.

    trec_eval's multi-cutoff spelling (``P.5,10``) names one metric per cutoff.
    """
    resolved: list[ResolvedMetric] = []
    seen: set[str] = set()
    for typed in names:
        for name in expand_metric_names(typed):
            metric = resolve_metric(name)
            if metric.name not in seen:
                seen.add(metric.name)
                resolved.append(metric)
    return resolved


def k_source_of(k: int | None, cfg: RagmeterConfig | None) -> str:
    """Where the cutoff of names without ``@k`` comes from (shown beside the resolved name).

    ``cfg`` None: no config at all (the default cutoff).

    >>> from ragmeter.config import RagmeterConfig
    >>> k_source_of(10, RagmeterConfig()), k_source_of(None, RagmeterConfig()), k_source_of(None, None)
    ('-k / k=', 'the default (5)', 'the default (5)')
    """
    if k is not None:
        return "-k / k="
    if cfg is None:
        return f"the default ({FALLBACK_K})"
    retrieval = cfg.metrics.retrieval
    if "default_k" in retrieval.model_fields_set:
        return "config metrics.retrieval.default_k"
    return f"the default ({retrieval.default_k})"


def check_k(k: int | None) -> None:
    """Refuse a cutoff that is not a whole number >= 1."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ConfigError(f"the cutoff k (-k / k=) must be a whole number >= 1, got {k!r}")
    if k is not None and k > MAX_K:
        raise ConfigError(f"the cutoff k (-k / k=) must be at most {MAX_K}, got {k}")


def check_limit(limit: int | None) -> None:
    """Refuse a ``limit`` (first N queries) that is not a whole number >= 1."""
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"the limit (--limit / limit=) must be a whole number >= 1, got {limit!r}")


def limit_warning(limit: int, total: int, *, unit: str = "queries") -> str:
    """What a result evaluated with ``--limit`` says first, so nobody takes it for a full run.

    >>> limit_warning(5, 50)
    'quick look: only the first 5 of 50 queries were evaluated (--limit 5); this is not a full run'
    """
    return f"quick look: only the first {limit} of {total} {unit} were evaluated (--limit {limit}); this is not a full run"


def check_level(level: float | None) -> None:
    """Refuse a relevance level that is not > 0."""
    if level is not None and (isinstance(level, bool) or not level > 0):
        raise ConfigError(
            f"the relevance level (--relevance-level / relevance_level) must be > 0, got {level!r}"
        )
    if level is not None and not math.isfinite(level):
        raise ConfigError(
            f"the relevance level (--relevance-level / relevance_level) must be a finite number, got {level!r}"
        )


def load_settings(
    config: RagmeterConfig | str | Path | None,
) -> tuple[RagmeterConfig, Path | None]:
    """The config given, or the one read from a file (or found): the config and its path."""
    from ragmeter.config import RagmeterConfig, load_config  # pydantic: only when there is a config

    if isinstance(config, RagmeterConfig):
        return config, None
    return load_config(config)


RetrievalSettings = tuple[list[str] | None, float | None, int, str]
"""``metrics.retrieval``: the metrics, the relevance level, the default cutoff and where the cutoff comes from."""


def retrieval_settings(
    config: RagmeterConfig | str | Path | None, k: int | None = None
) -> tuple[RetrievalSettings, Path | None]:
    """The ranking metrics' settings from the config, and the config file (the models load only if there is one).

    >>> retrieval_settings(None, 10)[0][2:] == (FALLBACK_K, "-k / k=") or Path(CONFIG_FILENAME).is_file()
    True
    """
    if config is None and not (Path.cwd() / CONFIG_FILENAME).is_file():
        return (None, None, FALLBACK_K, k_source_of(k, None)), None
    cfg, path = load_settings(config)
    retrieval = cfg.metrics.retrieval
    return (retrieval.metrics, retrieval.relevance_level, retrieval.default_k, k_source_of(k, cfg)), path
