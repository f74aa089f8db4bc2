"""The reference RAG pipeline: heading-aware markdown chunks, BM25 (``bm25s``), extractive answers.

The ``builtin`` system of ``ragmeter run`` and a quick baseline for your own
notes. See ``docs/pipeline.md``.

    reference.py   ReferencePipeline: build_index() and answer() (the output contract)
    config.py      PipelineConfig: every setting, validated
    index.py       vault walk, index version, on-disk cache
    chunker.py     markdown sections -> chunks (split or skip oversize ones)
    tokenizer.py   the documented word tokenizer and stopwords
    retrieval.py   normalised BM25 scores and deterministic ranking
    folders.py     folder selection (off, on, on_with_fallback)
    answer.py      extractive answers (sentence overlap scoring)
    stats.py       IndexStats: the index-statistics file

>>> from ragmeter.pipeline import ReferencePipeline, PipelineConfig, IndexStats
>>> sorted(PipelineConfig.model_fields)[:3]
['abstain_threshold', 'answer_chunks', 'bm25_b']
"""

from __future__ import annotations

from ragmeter.pipeline.answer import ABSTAIN_ANSWER
from ragmeter.pipeline.chunker import CHUNKER_VERSION, Chunk, chunk_note
from ragmeter.pipeline.config import FolderMode, PipelineConfig, load_pipeline_config
from ragmeter.pipeline.index import NoteIndex, build_note_index
from ragmeter.pipeline.reference import ReferencePipeline
from ragmeter.pipeline.stats import IndexStats, TokenDistribution, ZeroChunkDocs, write_index_stats

__all__ = [
    "ABSTAIN_ANSWER",
    "CHUNKER_VERSION",
    "Chunk",
    "FolderMode",
    "IndexStats",
    "NoteIndex",
    "PipelineConfig",
    "ReferencePipeline",
    "TokenDistribution",
    "ZeroChunkDocs",
    "build_note_index",
    "chunk_note",
    "load_pipeline_config",
    "write_index_stats",
]
