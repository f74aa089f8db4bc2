"""A DSPy program over the example vault: a search module (word-overlap vectors), DummyLM answers.

(``dspy.retrievers.Embeddings`` would do the same search, but it batches queries with a
0.1 s wait per call.)
"""

from __future__ import annotations

import dspy
import numpy as np
import vault_corpus
from dspy.utils.dummies import DummyLM

CORPUS = [
    {"text": c.text, "source": c.rel_path, "heading_path": list(c.heading_path), "id": c.id}
    for c in vault_corpus.chunks()
]


MATRIX = np.array([vault_corpus.embed(vault_corpus.indexed_text(c)) for c in vault_corpus.chunks()])


class Search(dspy.Module):
    def forward(self, question: str) -> dspy.Prediction:
        scores = MATRIX @ np.array(vault_corpus.embed(question))
        top = np.argsort(-scores, kind="stable")[: vault_corpus.K]
        return dspy.Prediction(passages=[CORPUS[i] for i in top])


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
