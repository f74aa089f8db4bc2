"""Index a vault of markdown notes: chunk every note, index the chunks with BM25, cache on disk.

The notes are the ``*.md`` and ``*.markdown`` files under the vault (hidden files
and folders skipped, symlinked folders not followed), in ``rel_path`` order.
A chunk is indexed under the terms of its note's file name, its heading path and
its text. The *index version* is a hash of every note's path and bytes plus
the chunker, tokenizer and BM25 settings; with an ``index_dir`` the index is
kept in ``index_dir/<index_version>/`` and reused while nothing changed.

>>> import tempfile
>>> vault = Path(tempfile.mkdtemp())
>>> (vault / "work").mkdir()
>>> _ = (vault / "work" / "a.md").write_text("# Setup\\nInstall with pip.\\n")
>>> _ = (vault / "empty.md").write_text("")
>>> index = build_note_index(vault, max_chunk_tokens=100)
>>> [c.id for c in index.chunks], index.folders, index.stats.docs_with_zero_chunks.rel_paths
(['work/a.md#Setup'], ['work'], ['empty.md'])
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from ragmeter.errors import ConfigError, InputError
from ragmeter.pipeline.chunker import CHUNKER_VERSION, Chunk, OversizePolicy, chunk_note
from ragmeter.pipeline.retrieval import Bm25Scorer, bm25s_version
from ragmeter.pipeline.stats import IndexStats, summarize_index, write_index_stats
from ragmeter.pipeline.tokenizer import TOKENIZER_NAME, terms

NOTE_SUFFIXES = (".md", ".markdown")
INDEX_STATS_FILE = "index_stats.json"
_CHUNKS_FILE = "chunks.json"
_BM25_DIR = "bm25"


@dataclass(frozen=True)
class NoteIndex:
    """A built index: chunks in index order, each chunk's top-level folder, BM25, statistics."""

    chunks: list[Chunk]
    folders: list[str]
    scorer: Bm25Scorer
    stats: IndexStats
    location: Path | None = None

    @property
    def version(self) -> str:
        """The index version (also ``stats.index_version``)."""
        return self.stats.index_version


def top_folder(rel_path: str) -> str:
    """The top-level folder of a note (``""`` for a note at the vault root).

    >>> top_folder("work/projects/a.md"), top_folder("todo.md")
    ('work', '')
    """
    parts = rel_path.split("/")
    return parts[0] if len(parts) > 1 else ""


def find_notes(vault: Path) -> list[tuple[str, Path]]:
    """``(rel_path, path)`` of every note under ``vault``, sorted by ``rel_path``; hidden entries skipped.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> for name in ("b.md", "a/c.markdown", ".trash/d.md", "e.txt"):
    ...     (root / name).parent.mkdir(parents=True, exist_ok=True)
    ...     _ = (root / name).write_text("x")
    >>> [rel_path for rel_path, _ in find_notes(root)]
    ['a/c.markdown', 'b.md']
    """
    if not vault.is_dir():
        raise ConfigError(f"vault folder not found: {vault}", where="pipeline config: vault")
    found: list[tuple[str, Path]] = []
    for root, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith(".") or not name.lower().endswith(NOTE_SUFFIXES):
                continue
            path = Path(root) / name
            found.append((PurePosixPath(*path.relative_to(vault).parts).as_posix(), path))
    return sorted(found)


def index_settings(
    *, max_chunk_tokens: int, min_chunk_tokens: int, oversize: str, k1: float, b: float
) -> dict[str, Any]:
    """Everything besides the notes that changes the index (hashed into the index version)."""
    return {
        "chunker": CHUNKER_VERSION,
        "tokenizer": TOKENIZER_NAME,
        "retriever": f"bm25s-{bm25s_version()}",
        "max_chunk_tokens": max_chunk_tokens,
        "min_chunk_tokens": min_chunk_tokens,
        "oversize": oversize,
        "bm25_k1": k1,
        "bm25_b": b,
    }


def compute_index_version(notes: list[tuple[str, bytes]], settings: dict[str, Any]) -> str:
    """First 16 hex digits of a SHA-256 over the settings and every note's path and content hash.

    >>> compute_index_version([("a.md", b"x")], {"s": 1}) == compute_index_version([("a.md", b"x")], {"s": 1})
    True
    >>> compute_index_version([("a.md", b"x")], {"s": 1}) == compute_index_version([("a.md", b"y")], {"s": 1})
    False
    """
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    for rel_path, content in notes:
        digest.update(b"\0" + rel_path.encode() + b"\0" + hashlib.sha256(content).digest())
    return digest.hexdigest()[:16]


def chunk_terms(chunk: Chunk) -> list[str]:
    """The terms a chunk is indexed under: file name, heading path and text.

    >>> chunk_terms(Chunk("w/oncall-2024.md#Escalation", "w/oncall-2024.md", ("Escalation",), "Page Kim.", 2))
    ['oncall', '2024', 'escalation', 'page', 'kim']
    """
    stem = PurePosixPath(chunk.rel_path).stem
    return terms(" ".join([stem, *chunk.heading_path, chunk.text]))


def build_note_index(
    vault: Path,
    *,
    max_chunk_tokens: int,
    min_chunk_tokens: int = 1,
    oversize: OversizePolicy = "split",
    k1: float = 1.5,
    b: float = 0.75,
    index_dir: Path | None = None,
) -> NoteIndex:
    """Chunk and index every note of ``vault``; reuse (or fill) the cache in ``index_dir``."""
    contents: list[tuple[str, bytes]] = []
    for rel_path, path in find_notes(vault):
        try:
            contents.append((rel_path, path.read_bytes()))
        except OSError as exc:
            raise InputError(f"cannot read the note: {exc.strerror or exc}", where=str(path)) from None
    settings = index_settings(
        max_chunk_tokens=max_chunk_tokens, min_chunk_tokens=min_chunk_tokens, oversize=oversize, k1=k1, b=b
    )
    version = compute_index_version(contents, settings)
    if index_dir is not None:
        cached = _load_cached(index_dir / version)
        if cached is not None:
            return cached
    chunks: list[Chunk] = []
    skip_reasons: list[str] = []
    zero: list[str] = []
    for rel_path, content in contents:
        note = chunk_note(
            rel_path,
            content.decode("utf-8-sig", errors="replace"),
            max_tokens=max_chunk_tokens,
            min_tokens=min_chunk_tokens,
            oversize=oversize,
        )
        chunks.extend(note.chunks)
        skip_reasons.extend(s.reason for s in note.skipped)
        if not note.chunks:
            zero.append(rel_path)
    stats = summarize_index(
        docs=[rel_path for rel_path, _ in contents],
        zero_chunk_docs=zero,
        token_counts=[c.n_tokens for c in chunks],
        skip_reasons=skip_reasons,
        embedding_model=settings["retriever"],
        index_version=version,
        created_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    scorer = Bm25Scorer.build([chunk_terms(c) for c in chunks], k1=k1, b=b)
    index = NoteIndex(chunks, [top_folder(c.rel_path) for c in chunks], scorer, stats)
    if index_dir is not None:
        try:
            index = _save_cached(index, index_dir / version)
        except OSError as exc:
            raise ConfigError(
                f"cannot write the index cache: {exc.strerror or exc}",
                where=f"pipeline config: index_dir ({index_dir})",
            ) from None
    return index


def _chunk_json(chunk: Chunk) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "rel_path": chunk.rel_path,
        "heading_path": list(chunk.heading_path),
        "text": chunk.text,
        "n_tokens": chunk.n_tokens,
    }


def _save_cached(index: NoteIndex, target: Path) -> NoteIndex:
    """Write the index to a temporary folder, then rename it into place (a concurrent writer may win)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".tmp-{target.name}-{uuid.uuid4().hex}"
    try:
        tmp.mkdir()
        (tmp / _CHUNKS_FILE).write_text(
            json.dumps([_chunk_json(c) for c in index.chunks], ensure_ascii=False), encoding="utf-8"
        )
        index.scorer.save(tmp / _BM25_DIR)
        write_index_stats(index.stats, tmp / INDEX_STATS_FILE)
        try:
            os.replace(tmp, target)
        except OSError:
            theirs = _load_cached(target)
            if theirs is not None:  # another process wrote the same version first
                return theirs
            shutil.rmtree(target)  # a broken leftover
            os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return NoteIndex(index.chunks, index.folders, index.scorer, index.stats, location=target)


def _load_cached(folder: Path) -> NoteIndex | None:
    """The cached index in ``folder``, or ``None`` when it is missing or unreadable."""
    if not (folder / INDEX_STATS_FILE).is_file():
        return None
    try:
        stats = IndexStats.model_validate_json((folder / INDEX_STATS_FILE).read_text(encoding="utf-8"))
        raw = json.loads((folder / _CHUNKS_FILE).read_text(encoding="utf-8"))
        chunks = [
            Chunk(
                str(c["id"]), str(c["rel_path"]), tuple(c["heading_path"]), str(c["text"]), int(c["n_tokens"])
            )
            for c in raw
        ]
        scorer = Bm25Scorer.load(folder / _BM25_DIR)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if scorer.n_docs != len(chunks) or stats.index_version != folder.name:
        return None
    return NoteIndex(chunks, [top_folder(c.rel_path) for c in chunks], scorer, stats, location=folder)
