"""The corpus questions are made from: chunks with anchors, dates, and BM25 over them.

Three kinds of corpus:

- a **markdown vault** (``*.md``, ``*.markdown``): the reference pipeline's heading-aware
  chunker, so every chunk's anchor is ``rel_path`` + ``heading_path`` (what ``ragmeter eval``
  matches retrieved chunks against);
- a **folder of text files** (``*.txt``): each file cut into blank-line paragraphs packed up to
  ``max_chunk_tokens``; the anchor is the file (``rel_path``, no heading);
- a **BEIR ``corpus.jsonl``** (``{"_id", "title", "text"}`` per line): one chunk per document,
  anchored by its id (``rel_path`` = the document id).

A chunk's *date* (for recency/conflict pairs) is the date its note states it was updated
(``Last updated: 2024-05-02``, ``Effective 2024-03``), else the first date in its path
(``policy-2022.md``, ``2024-06-planning.md``), else none.

>>> find_date("work/oncall/policy-2022.md"), find_date("no date here")
((2022, 0, 0), None)
>>> find_date("Last updated: 2024-05-02. Replaces 2022-03-14.")
(2024, 5, 2)
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import numpy as np

from ragmeter.errors import ConfigError, InputError
from ragmeter.pipeline import Chunk
from ragmeter.pipeline.index import build_note_index, chunk_terms, find_notes
from ragmeter.pipeline.retrieval import Bm25Scorer, rank
from ragmeter.pipeline.tokenizer import count_tokens, terms
from ragmeter.synth.config import CorpusSettings

Date = tuple[int, int, int]
"""(year, month, day); 0 for a part the text does not give."""

_DATE = re.compile(r"(?<!\d)((?:19|20)\d{2})(?:-(0[1-9]|1[0-2])(?:-(0[1-9]|[12]\d|3[01]))?)?(?![\d])")
_STATED = re.compile(
    r"(?:last\s+updated|updated|effective(?:\s+from)?|valid\s+from|as\s+of|dated?|version\s+of)\s*[:\-]?\s*"
    r"((?:19|20)\d{2}(?:-\d{2}(?:-\d{2})?)?)",
    re.IGNORECASE,
)
TEXT_SUFFIXES = (".txt", ".text")


def find_date(text: str) -> Date | None:
    """The first date in ``text`` (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``), or ``None``."""
    match = _DATE.search(text)
    if match is None:
        return None
    return (int(match.group(1)), int(match.group(2) or 0), int(match.group(3) or 0))


def note_date(rel_path: str, text: str) -> Date | None:
    """The date a note states it was updated, else the first date in its path.

    >>> note_date("work/policy.md", "# Policy\\nLast updated: 2024-05-02.\\n")
    (2024, 5, 2)
    >>> note_date("work/2024-06-planning.md", "# Planning")
    (2024, 6, 0)
    """
    stated = _STATED.search(text)
    if stated is not None:
        return find_date(stated.group(1))
    return find_date(rel_path)


def format_date(date: Date | None) -> str:
    """``2024-05-02``, ``2024-05`` or ``2024`` (``unknown`` without a date).

    >>> format_date((2024, 5, 0)), format_date(None)
    ('2024-05', 'unknown')
    """
    if date is None:
        return "unknown"
    year, month, day = date
    return f"{year:04d}" + (f"-{month:02d}" if month else "") + (f"-{day:02d}" if month and day else "")


@dataclass
class SynthCorpus:
    """Chunks (in index order), their dates, BM25 over them, and a digest of it all."""

    path: Path
    format: str
    chunks: list[Chunk]
    scorer: Bm25Scorer
    dates: dict[str, Date | None] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {c.id: c for c in self.chunks}
        self.position = {c.id: i for i, c in enumerate(self.chunks)}
        digest = hashlib.sha256(self.format.encode())
        for chunk in self.chunks:
            digest.update(b"\0" + chunk.id.encode() + b"\0" + chunk.text.encode())
        self.digest = digest.hexdigest()

    def __len__(self) -> int:
        return len(self.chunks)

    def text_of(self, chunk_id: str) -> str:
        """What the generator and the solver see of a chunk (a BEIR title first)."""
        chunk = self.by_id[chunk_id]
        title = self.titles.get(chunk_id)
        return f"{title}\n{chunk.text}" if title else chunk.text

    def search(self, query: str, *, k: int, exclude: tuple[str, ...] | set[str] = ()) -> list[str]:
        """The ids of the top ``k`` chunks for ``query`` by BM25 (score > 0), skipping ``exclude``."""
        scores = self.scorer.scores(terms(query))
        mask = None
        if exclude:
            mask = np.ones(len(self.chunks), dtype=np.bool_)
            for chunk_id in exclude:
                if chunk_id in self.position:
                    mask[self.position[chunk_id]] = False
        return [self.chunks[i].id for i in rank(scores, k=k, mask=mask)]

    def scores_for(self, query: str) -> dict[str, float]:
        """Normalised BM25 score of every chunk with a score > 0."""
        scores = self.scorer.scores(terms(query))
        return {self.chunks[i].id: float(scores[i]) for i in np.flatnonzero(scores > 0)}

    def describe(self) -> dict[str, object]:
        """Provenance written to the dataset header."""
        return {
            "path": str(self.path),
            "format": self.format,
            "chunks": len(self.chunks),
            "sha256": self.digest,
        }


def detect_format(path: Path) -> str:
    """``beir`` for a ``.jsonl`` file (or a folder holding ``corpus.jsonl``), ``vault`` for notes, else ``text``."""
    if path.is_file():
        if path.suffix.lower() == ".jsonl":
            return "beir"
        raise ConfigError("a corpus file must be a BEIR corpus.jsonl", where=str(path))
    if not path.is_dir():
        raise ConfigError("corpus not found", where=str(path))
    if (path / "corpus.jsonl").is_file():
        return "beir"
    if find_notes(path):
        return "vault"
    return "text"


def load_corpus(path: str | Path, settings: CorpusSettings) -> SynthCorpus:
    """Read and chunk a corpus, and index it with BM25; an empty corpus is an error naming it."""
    path = Path(path)
    kind = detect_format(path) if settings.format == "auto" else settings.format
    if kind == "vault":
        corpus = _vault(path, settings)
    elif kind == "text":
        corpus = _text_folder(path, settings)
    else:
        corpus = _beir(path / "corpus.jsonl" if path.is_dir() else path, settings)
    if not corpus.chunks:
        raise ConfigError(f"the corpus has no {kind} chunks to make questions from", where=str(path))
    return corpus


def _vault(path: Path, settings: CorpusSettings) -> SynthCorpus:
    if not path.is_dir():
        raise ConfigError("a vault must be a folder of markdown notes", where=str(path))
    index = build_note_index(
        path, max_chunk_tokens=settings.max_chunk_tokens, k1=settings.bm25_k1, b=settings.bm25_b
    )
    dates: dict[str, Date | None] = {}
    for rel_path, note in find_notes(path):
        text = note.read_text(encoding="utf-8-sig", errors="replace")
        dates[rel_path] = note_date(rel_path, text)
    return SynthCorpus(
        path, "vault", index.chunks, index.scorer, {c.id: dates.get(c.rel_path) for c in index.chunks}
    )


def _paragraph_pieces(text: str, max_tokens: int) -> list[str]:
    """Blank-line paragraphs packed greedily up to ``max_tokens`` (a longer paragraph stays whole).

    >>> _paragraph_pieces("a b\\n\\nc d\\n\\ne f g", 4)
    ['a b\\n\\nc d', 'e f g']
    """
    pieces: list[str] = []
    current: list[str] = []
    for paragraph in (p.strip() for p in re.split(r"\n\s*\n", text)):
        if not paragraph:
            continue
        if current and count_tokens("\n\n".join([*current, paragraph])) > max_tokens:
            pieces.append("\n\n".join(current))
            current = []
        current.append(paragraph)
    if current:
        pieces.append("\n\n".join(current))
    return pieces


def _text_folder(path: Path, settings: CorpusSettings) -> SynthCorpus:
    if not path.is_dir():
        raise ConfigError("a text corpus must be a folder of .txt files", where=str(path))
    files = sorted(
        (PurePosixPath(*p.relative_to(path).parts).as_posix(), p)
        for p in path.rglob("*")
        if p.is_file()
        and p.suffix.lower() in TEXT_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )
    chunks: list[Chunk] = []
    dates: dict[str, Date | None] = {}
    for rel_path, file in files:
        try:
            text = file.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the text file ({exc})", where=str(file)) from None
        for number, piece in enumerate(_paragraph_pieces(text, settings.max_chunk_tokens), start=1):
            chunk_id = rel_path if number == 1 else f"{rel_path} [{number}]"
            chunks.append(Chunk(chunk_id, rel_path, (), piece, count_tokens(piece)))
            dates[chunk_id] = note_date(rel_path, text)
    scorer = Bm25Scorer.build([chunk_terms(c) for c in chunks], k1=settings.bm25_k1, b=settings.bm25_b)
    return SynthCorpus(path, "text", chunks, scorer, dates)


def _beir(path: Path, settings: CorpusSettings) -> SynthCorpus:
    from ragmeter.io.records import read_jsonl

    chunks: list[Chunk] = []
    titles: dict[str, str] = {}
    dates: dict[str, Date | None] = {}
    seen: set[str] = set()
    for record in read_jsonl(path):
        value = record.value
        if not isinstance(value, dict):
            raise InputError("each line must be an object {_id, title, text}", where=record.where)
        doc_id = value.get("_id", value.get("id"))
        if isinstance(doc_id, int) and not isinstance(doc_id, bool):
            doc_id = str(doc_id)
        if not isinstance(doc_id, str) or not doc_id.strip():
            raise InputError("'_id' must be a non-empty string", where=record.where)
        if doc_id in seen:
            raise InputError(f"document id {doc_id!r} is used twice", where=record.where)
        seen.add(doc_id)
        text = value.get("text")
        title = value.get("title") or ""
        if not isinstance(text, str) or not isinstance(title, str):
            raise InputError("'text' (and 'title') must be strings", where=record.where)
        if not text.strip():
            continue
        chunks.append(Chunk(doc_id, doc_id, (), text.strip(), count_tokens(text)))
        if title.strip():
            titles[doc_id] = title.strip()
        dates[doc_id] = note_date("", f"{title}\n{text}")
    corpus_terms = [terms(f"{titles.get(c.id, '')} {c.text}") for c in chunks]
    scorer = Bm25Scorer.build(corpus_terms, k1=settings.bm25_k1, b=settings.bm25_b)
    return SynthCorpus(path, "beir", chunks, scorer, dates, titles)
