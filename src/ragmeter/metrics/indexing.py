"""Indexing coverage: run-level numbers from an index-statistics file.

* ``no_chunks_rate`` = ``docs_with_zero_chunks`` / ``docs_processed``
* ``skipped_for_context_rate`` = chunks skipped for a context reason / ``chunks_attempted``
  (``chunks_embedded + chunks_skipped`` when ``chunks_attempted`` is missing)

A skip reason is a *context* reason when, lower-cased with every run of
non-alphanumeric characters turned into ``_``, it contains ``context``,
``too_long`` or ``oversize``.

>>> from ragmeter.schema.rag import IndexStats
>>> stats = IndexStats.model_validate({"docs_processed": 20, "docs_with_zero_chunks": 1, "chunks_attempted": 200,
...     "chunks_skipped": 5, "skip_reasons": {"exceeds context window": 3, "Too-Long": 1, "empty": 1}})
>>> cov = index_coverage(stats)
>>> cov["no_chunks_rate"], cov["skipped_for_context_rate"], cov["context_skip_reasons"]
(0.05, 0.02, ['Too-Long', 'exceeds context window'])
"""

from __future__ import annotations

import re
from typing import Any

from ragmeter.schema.rag import IndexStats

CONTEXT_MARKERS = ("context", "too_long", "oversize")
_NON_ALNUM = re.compile(r"[^0-9a-z]+")
PROVENANCE_FIELDS = ("chunker_version", "embedding_model", "index_version", "created_at")


def is_context_reason(reason: str) -> bool:
    """True when a skip reason says the chunk was too long for the context.

    >>> is_context_reason("CONTEXT_LENGTH_EXCEEDED"), is_context_reason("oversized chunk"), is_context_reason("empty")
    (True, True, False)
    """
    key = _NON_ALNUM.sub("_", reason.lower())
    return any(marker in key for marker in CONTEXT_MARKERS)


def _rate(num: int | None, den: int | None) -> float | None:
    if num is None or den is None or den == 0:
        return None
    return num / den


def index_coverage(stats: IndexStats) -> dict[str, Any]:
    """The ``index_coverage`` section of a result (rates are ``None`` when their inputs are missing)."""
    attempted = stats.chunks_attempted
    if attempted is None and stats.chunks_embedded is not None and stats.chunks_skipped is not None:
        attempted = stats.chunks_embedded + stats.chunks_skipped
    reasons = stats.skip_reasons
    context = sorted(r for r in reasons or {} if is_context_reason(r))
    skipped_for_context = sum((reasons or {})[r] for r in context) if reasons is not None else None
    return {
        "no_chunks_rate": _rate(stats.zero_chunk_count(), stats.docs_processed),
        "skipped_for_context_rate": _rate(skipped_for_context, attempted),
        "docs_processed": stats.docs_processed,
        "docs_with_zero_chunks": stats.zero_chunk_count(),
        "zero_chunk_rel_paths": stats.zero_chunk_paths(),
        "chunks_attempted": stats.chunks_attempted,
        "chunks_embedded": stats.chunks_embedded,
        "chunks_skipped": stats.chunks_skipped,
        "chunks_skipped_for_context": skipped_for_context,
        "skip_reasons": dict(reasons) if reasons is not None else None,
        "context_skip_reasons": context,
        "tokens_per_chunk": stats.tokens_per_chunk.model_dump() if stats.tokens_per_chunk else None,
    }


def index_provenance(stats: IndexStats) -> dict[str, Any]:
    """Version information of the index, for the result's provenance."""
    return {name: getattr(stats, name) for name in PROVENANCE_FIELDS}
