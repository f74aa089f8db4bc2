"""TREC run evaluation: read qrels and a run (any source ``io.table_readers`` knows), match, score.

It returns the result's fields. This module imports no pydantic model (a run without a config file never loads one), so
``ragmeter eval --qrels --run --json`` can start quickly: the CLI turns these fields into JSON
with :func:`ragmeter.result_json.eval_json_dict`; :func:`ragmeter.api.evaluate_trec` builds an
:class:`~ragmeter.results.EvalResult` from them.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.evaluation.arguments import (
    DEFAULT_TREC_METRICS,
    check_k,
    check_level,
    check_limit,
    limit_warning,
    resolve_metrics,
    retrieval_settings,
)
from ragmeter.evaluation.assemble import base_provenance, result_fields
from ragmeter.io.digests import hash_in_background
from ragmeter.io.table_readers import file_sources, load_qrels, load_run
from ragmeter.io.table_subsets import head_topics, only_topics
from ragmeter.matching.trec import match_trec
from ragmeter.metrics.inputs import ScoringInput
from ragmeter.metrics.scoring import score_metrics

if TYPE_CHECKING:
    from ragmeter.config import RagmeterConfig


def trec_result_fields(
    qrels: Any,
    run: Any,
    *,
    metrics: Sequence[str] | None = None,
    k: int | None = None,
    relevance_level: float | None = None,
    complete: bool = False,
    trec_compat: bool = False,
    config: RagmeterConfig | str | Path | None = None,
    columns: Mapping[str, str] | None = None,
    split: str | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """The fields of :func:`ragmeter.api.evaluate_trec`'s result (see there for the arguments)."""
    check_k(k)
    check_level(relevance_level)
    check_limit(limit)
    (cfg_metrics, cfg_level, cfg_k, k_source), cfg_path = retrieval_settings(config, k)
    started = time.perf_counter()
    resolved = resolve_metrics(metrics or cfg_metrics or list(DEFAULT_TREC_METRICS))
    hash_in_background(
        file_sources(qrels, run)
    )  # for the provenance, on another core (the CLI started it earlier)
    q = load_qrels(qrels, columns=columns, split=split, trec_compat=trec_compat)
    q_table, limited = q.table, None
    if limit is not None and limit < len(q_table.topics):
        limited = (limit, len(q_table.topics))
        q_table = head_topics(q_table, limit)
    r = load_run(run, qrels=q_table, columns=columns, split=split)
    r_table = only_topics(r.table, q_table.topics) if limited else r.table
    matched = match_trec(q_table, r_table, complete=complete)
    level = relevance_level if relevance_level is not None else cfg_level
    inp = ScoringInput.from_table(matched.table, relevance_level=level)
    default_k = k if k is not None else cfg_k
    scored = score_metrics(resolved, inp, default_k=default_k, trec_compat=trec_compat, k_source=k_source)
    settings: dict[str, Any] = {"complete": complete, "trec_compat": trec_compat}
    if columns:
        settings["columns"] = dict(columns)
    if split is not None:
        settings["split"] = split
    if limit is not None:
        settings["limit"] = limit
    provenance = base_provenance(cfg_path, k=k, default_k=default_k, relevance_level=level, **settings) | {
        "inputs": {"qrels": q.provenance, "run": r.provenance},
        "elapsed_seconds": round(time.perf_counter() - started, 6),
        **({"limited": {"first": limited[0], "of": limited[1]}} if limited else {}),
    }
    warnings = list(matched.warnings)
    if limited:
        warnings.insert(0, limit_warning(*limited, unit="topics"))
    return result_fields(
        matched.table.query_ids,
        scored,
        warnings=warnings,
        provenance=provenance,
        n_missing_output=len(matched.missing_topics) if complete else 0,
    )
