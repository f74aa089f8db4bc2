"""A DSPy program over the example vault: dspy.retrievers.Embeddings in a search module, DummyLM answers."""

from __future__ import annotations

import dspy
import numpy as np
import vault_corpus
from dspy.utils.dummies import DummyLM

CORPUS = [
    {"text": c.text, "source": c.rel_path, "heading_path": list(c.heading_path), "id": c.id}
    for c in vault_corpus.chunks()
]


def _embed(texts: list[str]) -> np.ndarray:
    return np.array([vault_corpus.embed(text) for text in texts])


class Search(dspy.Module):
    def __init__(self) -> None:
        super().__init__()
        texts = [vault_corpus.indexed_text(c) for c in vault_corpus.chunks()]
        self.embeddings = dspy.retrievers.Embeddings(
            corpus=texts, embedder=dspy.Embedder(_embed), k=vault_corpus.K
        )

    def forward(self, question: str) -> dspy.Prediction:
        found = self.embeddings(question)
        return dspy.Prediction(passages=[CORPUS[i] for i in found.indices])


class VaultRAG(dspy.Module):
    def __init__(self) -> None:
        super().__init__()
        self.search = Search()
        self.respond = dspy.Predict("context: list[str], question -> answer")
        self.respond.set_lm(DummyLM([{"answer": "See the notes."}] * 1000))

    def forward(self, question: str) -> dspy.Prediction:
        passages = self.search(question=question).passages
        answer = self.respond(context=[p["text"] for p in passages], question=question).answer
        return dspy.Prediction(passages=passages, answer=answer)


program = VaultRAG()
