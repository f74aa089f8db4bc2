"""The bundled example vault as a corpus for the framework systems under test (no framework imported here).

``chunks()`` cuts the notes with the reference pipeline's heading-aware chunker;
``embed()`` is a deterministic hashed bag of words over the reference tokenizer's
terms, so the frameworks' in-memory vector stores rank by word overlap (their own
fake embeddings are random, or constant, and would make every metric 0 or a tie).
"""

from __future__ import annotations

import hashlib
import math
from functools import cache
from pathlib import Path

from ragmeter.pipeline.chunker import Chunk, chunk_note
from ragmeter.pipeline.index import find_notes
from ragmeter.pipeline.tokenizer import terms

REPO = Path(__file__).resolve().parents[3]
VAULT = REPO / "examples" / "vault"
DATASET = REPO / "examples" / "tests.yaml"
DIMENSIONS = 1024
K = 5


@cache
def notes() -> tuple[tuple[str, str], ...]:
    """``(rel_path, text)`` of every note of the vault."""
    return tuple((rel_path, path.read_text(encoding="utf-8")) for rel_path, path in find_notes(VAULT))


@cache
def chunks() -> tuple[Chunk, ...]:
    """The vault cut by the reference chunker."""
    return tuple(c for rel_path, text in notes() for c in chunk_note(rel_path, text, max_tokens=300).chunks)


def indexed_text(chunk: Chunk) -> str:
    """What a chunk is embedded as: its file name, headings and text."""
    return " ".join([Path(chunk.rel_path).stem, *chunk.heading_path, chunk.text])


@cache
def embed(text: str) -> tuple[float, ...]:
    """A unit vector of hashed term counts."""
    vector = [0.0] * DIMENSIONS
    for term in terms(text):
        vector[
            int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "big") % DIMENSIONS
        ] += 1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return tuple(v / norm for v in vector)
