"""The reference RAG pipeline: markdown chunks, BM25 retrieval, optional folder scoping, extractive answers.

``answer()`` returns ragmeter's system-output contract (a JSON-able dict)::

    {"retrieved": [{"id", "rel_path", "heading_path", "text", "score", "rank"}, ...],
     "answer": str, "references": [{"rel_path", "heading_path"}, ...], "abstained": bool,
     "folder_mode": "off" | "on" | "on_with_fallback", "selected_folders": [str, ...],
     "timings": {"folder_selection": s, "retrieval": s, "generation": s},
     "tokens": {"prompt": 0, "completion": 0}}

The pipeline abstains (``abstained: true``, no references) when the best
retrieval score is below ``abstain_threshold`` or no sentence of the top chunks
shares a term with the question. One pipeline may answer from many threads at
once; the index is built on first use if :meth:`ReferencePipeline.build_index`
was not called.

>>> import tempfile
>>> vault = Path(tempfile.mkdtemp())
>>> (vault / "work").mkdir()
>>> _ = (vault / "work" / "oncall.md").write_text("# On-call\\n## Escalation\\nPage the secondary after 15 minutes.\\n")
>>> out = ReferencePipeline({"vault": vault}).answer("When do I page the secondary on-call?", k=3)
>>> out["answer"], out["references"], out["abstained"]
('Page the secondary after 15 minutes.', [{'rel_path': 'work/oncall.md', 'heading_path': ['On-call', 'Escalation']}], False)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from ragmeter.errors import ConfigError, InputError
from ragmeter.pipeline.answer import ABSTAIN_ANSWER, AnswerSource, extract_answer
from ragmeter.pipeline.config import PipelineConfig, load_pipeline_config
from ragmeter.pipeline.folders import select_folders
from ragmeter.pipeline.index import INDEX_STATS_FILE, NoteIndex, build_note_index
from ragmeter.pipeline.retrieval import BoolArray, FloatArray, rank
from ragmeter.pipeline.stats import IndexStats, write_index_stats
from ragmeter.pipeline.tokenizer import terms


class ReferencePipeline:
    """ragmeter's builtin system under test: a real, honest BM25 baseline over a folder of notes.

    ``config`` is a :class:`PipelineConfig` or a mapping of its fields;
    ``overrides`` (keyword settings) win over it. Bad settings raise
    ``ConfigError`` naming the setting.
    """

    def __init__(self, config: PipelineConfig | Mapping[str, Any] | None = None, /, **overrides: Any) -> None:
        settings: dict[str, Any] = {}
        if isinstance(config, PipelineConfig):
            settings = config.model_dump()
        elif isinstance(config, Mapping):
            settings = dict(config)
        elif config is not None:
            raise ConfigError(
                f"settings must be a PipelineConfig or a mapping, got {type(config).__name__}",
                where="pipeline config",
            )
        self.config = load_pipeline_config({**settings, **overrides})
        self._index: NoteIndex | None = None
        self._lock = threading.Lock()

    def build_index(self) -> IndexStats:
        """Chunk and index the vault (or load the cached index of the same version); return the statistics."""
        with self._lock:
            return self._build().stats

    def _build(self) -> NoteIndex:
        cfg = self.config
        self._index = build_note_index(
            cfg.vault,
            max_chunk_tokens=cfg.max_chunk_tokens,
            min_chunk_tokens=cfg.min_chunk_tokens,
            oversize=cfg.oversize,
            k1=cfg.bm25_k1,
            b=cfg.bm25_b,
            index_dir=cfg.index_dir,
        )
        return self._index

    @property
    def index(self) -> NoteIndex:
        """The built index (built now, once, if :meth:`build_index` was not called)."""
        index = self._index
        if index is None:
            with self._lock:
                index = self._index if self._index is not None else self._build()
        return index

    @property
    def index_stats(self) -> IndexStats:
        """Statistics of the built index (built now if needed)."""
        return self.index.stats

    @property
    def index_stats_path(self) -> Path | None:
        """The cached ``index_stats.json`` (``None`` without ``index_dir`` or before :meth:`build_index`)."""
        if self._index is None or self._index.location is None:
            return None
        return self._index.location / INDEX_STATS_FILE

    def write_index_stats(self, path: str | Path) -> Path:
        """Write the index statistics to ``path`` (JSON); return the path."""
        return write_index_stats(self.index_stats, path)

    def answer(self, question: str, *, k: int | None = None) -> dict[str, Any]:
        """Retrieve the top ``k`` chunks for ``question`` and answer from them (the output contract)."""
        if not isinstance(question, str):
            raise InputError(f"question must be a string, got {type(question).__name__}", where="answer()")
        if k is None:
            k = self.config.k
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"k must be a whole number >= 1, got {k!r}", where="answer()")
        index = self.index
        cfg = self.config
        query = terms(question)

        started = time.perf_counter()
        scores = index.scorer.scores(query)
        selected: list[str] = []
        mask: BoolArray | None = None
        scoped = cfg.folder_mode != "off"
        if scoped:
            selection = select_folders(
                scores, index.folders, keep_fraction=cfg.folder_keep_fraction, top_n=cfg.folder_top_n
            )
            selected, mask = selection.selected, selection.mask(index.folders)
        selected_at = time.perf_counter()
        top = rank(scores, k=k, mask=mask)
        if cfg.folder_mode == "on_with_fallback" and _best(scores, top) < cfg.abstain_threshold:
            top = rank(scores, k=k)  # search everywhere; selected_folders still records the selection
        retrieved_at = time.perf_counter()
        answer_text, references, abstained = self._answer(index, query, scores, top)
        finished = time.perf_counter()

        return {
            "retrieved": [
                {
                    "id": index.chunks[i].id,
                    "rel_path": index.chunks[i].rel_path,
                    "heading_path": list(index.chunks[i].heading_path),
                    "text": index.chunks[i].text,
                    "score": round(float(scores[i]), 6),
                    "rank": r,
                }
                for r, i in enumerate(top, start=1)
            ],
            "answer": answer_text,
            "references": references,
            "abstained": abstained,
            "folder_mode": cfg.folder_mode,
            "selected_folders": selected,
            "timings": {
                "folder_selection": selected_at - started if scoped else 0.0,
                "retrieval": retrieved_at - (selected_at if scoped else started),
                "generation": finished - retrieved_at,
            },
            "tokens": {"prompt": 0, "completion": 0},
        }

    def _answer(
        self, index: NoteIndex, query: list[str], scores: FloatArray, top: list[int]
    ) -> tuple[str, list[dict[str, Any]], bool]:
        cfg = self.config
        if _best(scores, top) < cfg.abstain_threshold or not top:
            return ABSTAIN_ANSWER, [], True
        sources = top[: cfg.answer_chunks]
        chunks = index.chunks
        extracted = extract_answer(
            query,
            [
                AnswerSource(
                    chunks[i].rel_path,
                    " ".join([PurePosixPath(chunks[i].rel_path).stem, *chunks[i].heading_path]),
                    chunks[i].text,
                )
                for i in sources
            ],
            index.scorer.idf,
            max_sentences=cfg.max_answer_sentences,
            ratio=cfg.second_sentence_ratio,
        )
        if extracted is None:
            return ABSTAIN_ANSWER, [], True
        references: list[dict[str, Any]] = []
        for source in extracted.sources:
            chunk = chunks[sources[source]]
            ref = {"rel_path": chunk.rel_path, "heading_path": list(chunk.heading_path)}
            if ref not in references:
                references.append(ref)
        return extracted.text, references, False


def _best(scores: FloatArray, top: list[int]) -> float:
    return float(np.max(scores[top])) if top else 0.0
