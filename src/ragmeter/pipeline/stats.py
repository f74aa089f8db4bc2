"""The index-statistics file the reference pipeline writes (``index_stats.json``).

Every field is always present (the reader, :class:`ragmeter.schema.rag.IndexStats`,
accepts files from other indexers that report less). Token counts are
:func:`ragmeter.pipeline.tokenizer.tokenize` tokens of the chunk text; the
distribution covers the indexed chunks, ``p95`` by linear interpolation
(numpy's default), and is all ``null`` when nothing was indexed.

>>> stats = summarize_index(
...     docs=["a.md", "b.md"], zero_chunk_docs=["b.md"], token_counts=[3, 5], skip_reasons=["exceeds_max_tokens"],
...     embedding_model="bm25s-0", index_version="abc", created_at="2024-01-01T00:00:00Z")
>>> stats.chunks_attempted, stats.chunks_embedded, stats.chunks_skipped, stats.skip_reasons
(3, 2, 1, {'exceeds_max_tokens': 1})
>>> stats.tokens_per_chunk.model_dump()
{'min': 3.0, 'max': 5.0, 'mean': 4.0, 'p95': 4.9}
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ragmeter.io.atomic import write_text_atomic
from ragmeter.pipeline.chunker import CHUNKER_VERSION


class ZeroChunkDocs(BaseModel):
    """Notes that produced no indexed chunk: how many, and which (sorted ``rel_path``s)."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(ge=0)
    rel_paths: list[str]


class TokenDistribution(BaseModel):
    """Tokens per indexed chunk: min, max, mean and 95th percentile (all null without chunks)."""

    model_config = ConfigDict(extra="forbid")

    min: float | None
    max: float | None
    mean: float | None
    p95: float | None


class IndexStats(BaseModel):
    """What one indexing run of the reference pipeline did (the ``index_stats.json`` file)."""

    model_config = ConfigDict(extra="forbid")

    docs_processed: int = Field(ge=0, description="notes read")
    docs_with_zero_chunks: ZeroChunkDocs = Field(description="notes that produced no indexed chunk")
    chunks_attempted: int = Field(ge=0, description="chunks the chunker produced (indexed + skipped)")
    chunks_embedded: int = Field(ge=0, description="chunks indexed (BM25 has no embeddings)")
    chunks_skipped: int = Field(ge=0, description="chunks not indexed")
    skip_reasons: dict[str, int] = Field(description="reason -> skipped chunks")
    tokens_per_chunk: TokenDistribution
    chunker_version: str
    embedding_model: str = Field(description="'bm25s-<version>': the retriever that indexed the chunks")
    index_version: str = Field(description="hash of the vault content and the chunker/BM25 settings")
    created_at: str = Field(description="when the index was built, ISO 8601 UTC")


def token_distribution(counts: Sequence[int]) -> TokenDistribution:
    """Min, max, mean and p95 of token counts (``None`` each for no counts).

    >>> token_distribution([]).min is None, token_distribution([2, 4]).mean
    (True, 3.0)
    """
    if not counts:
        return TokenDistribution(min=None, max=None, mean=None, p95=None)
    values = np.asarray(counts, dtype=np.float64)
    return TokenDistribution(
        min=float(values.min()),
        max=float(values.max()),
        mean=round(float(values.mean()), 4),
        p95=round(float(np.percentile(values, 95)), 4),
    )


def summarize_index(
    *,
    docs: Sequence[str],
    zero_chunk_docs: Sequence[str],
    token_counts: Sequence[int],
    skip_reasons: Sequence[str],
    embedding_model: str,
    index_version: str,
    created_at: str,
) -> IndexStats:
    """Build the statistics from what the indexer saw (one skip reason per skipped chunk)."""
    return IndexStats(
        docs_processed=len(docs),
        docs_with_zero_chunks=ZeroChunkDocs(count=len(zero_chunk_docs), rel_paths=sorted(zero_chunk_docs)),
        chunks_attempted=len(token_counts) + len(skip_reasons),
        chunks_embedded=len(token_counts),
        chunks_skipped=len(skip_reasons),
        skip_reasons=dict(sorted(Counter(skip_reasons).items())),
        tokens_per_chunk=token_distribution(token_counts),
        chunker_version=CHUNKER_VERSION,
        embedding_model=embedding_model,
        index_version=index_version,
        created_at=created_at,
    )


def write_index_stats(stats: IndexStats, path: str | Path) -> Path:
    """Write the statistics as indented JSON (atomically: a temporary file, then a rename).

    >>> import tempfile
    >>> s = summarize_index(docs=[], zero_chunk_docs=[], token_counts=[], skip_reasons=[],
    ...                     embedding_model="bm25s-0", index_version="x", created_at="t")
    >>> out = write_index_stats(s, Path(tempfile.mkdtemp()) / "index_stats.json")
    >>> IndexStats.model_validate_json(out.read_text()) == s
    True
    """
    return write_text_atomic(path, json.dumps(stats.model_dump(mode="json"), indent=2) + "\n")
