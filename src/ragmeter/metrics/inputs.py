"""What a metric kernel reads: ranked gains, and for text metrics the texts and expected answers.

>>> from ragmeter.metrics.relevance import RelevanceTable
>>> inp = ScoringInput.from_table(RelevanceTable.from_lists(["q"], [[1.0]], [[1.0]]))
>>> inp.query_ids
['q']
"""

from __future__ import annotations

from dataclasses import dataclass

from ragmeter.metrics.relevance import Ranked, RelevanceTable


@dataclass(frozen=True)
class ScoringInput:
    """Everything the kernels may read for Q queries, aligned by query index."""

    query_ids: list[str]
    ranked: Ranked
    texts: list[list[str | None]] | None = None
    answers: list[list[str]] | None = None

    @classmethod
    def from_table(
        cls,
        table: RelevanceTable,
        *,
        relevance_level: float | None = None,
        texts: list[list[str | None]] | None = None,
        answers: list[list[str]] | None = None,
    ) -> ScoringInput:
        """Wrap a relevance table (and optional texts/answers) for scoring."""
        return cls(table.query_ids, Ranked(table, relevance_level), texts, answers)
