"""TREC run evaluation: read both files, match, score, and the result's fields.

This module imports no pydantic model (a run without a config file never loads one), so
``ragmeter eval --qrels --run --json`` can start quickly: the CLI turns these fields into JSON
with :func:`ragmeter.result_json.eval_json_dict`; :func:`ragmeter.api.evaluate_trec` builds an
:class:`~ragmeter.results.EvalResult` from them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.evaluation.arguments import (
    DEFAULT_TREC_METRICS,
    check_k,
    check_level,
    resolve_metrics,
    retrieval_settings,
)
from ragmeter.evaluation.assemble import base_provenance, result_fields
from ragmeter.io.digests import file_sha256, hash_in_background
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.matching.trec import match_trec
from ragmeter.metrics.inputs import ScoringInput
from ragmeter.metrics.scoring import score_metrics

if TYPE_CHECKING:
    from ragmeter.config import RagmeterConfig


def trec_result_fields(
    qrels: str | Path,
    run: str | Path,
    *,
    metrics: Sequence[str] | None = None,
    k: int | None = None,
    relevance_level: float | None = None,
    complete: bool = False,
    trec_compat: bool = False,
    config: RagmeterConfig | str | Path | None = None,
) -> dict[str, Any]:
    """The fields of :func:`ragmeter.api.evaluate_trec`'s result (see there for the arguments)."""
    check_k(k)
    check_level(relevance_level)
    (cfg_metrics, cfg_level, cfg_k, k_source), cfg_path = retrieval_settings(config, k)
    started = time.perf_counter()
    resolved = resolve_metrics(metrics or cfg_metrics or list(DEFAULT_TREC_METRICS))
    hash_in_background((qrels, run))  # for the provenance, on another core (the CLI started it earlier)
    q = read_qrels(qrels, trec_compat=trec_compat)
    r = read_run(run, qrels=q)
    matched = match_trec(q, r, complete=complete)
    level = relevance_level if relevance_level is not None else cfg_level
    inp = ScoringInput.from_table(matched.table, relevance_level=level)
    default_k = k if k is not None else cfg_k
    scored = score_metrics(resolved, inp, default_k=default_k, trec_compat=trec_compat, k_source=k_source)
    provenance = base_provenance(
        cfg_path, k=k, default_k=default_k, relevance_level=level, complete=complete, trec_compat=trec_compat
    ) | {
        "inputs": {
            "qrels": {"path": str(qrels), "sha256": file_sha256(qrels)},
            "run": {"path": str(run), "sha256": file_sha256(run)},
        },
        "elapsed_seconds": round(time.perf_counter() - started, 6),
    }
    return result_fields(
        matched.table.query_ids,
        scored,
        warnings=matched.warnings,
        provenance=provenance,
        n_missing_output=len(matched.missing_topics) if complete else 0,
    )
