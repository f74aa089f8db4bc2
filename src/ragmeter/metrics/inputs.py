"""What a metric kernel reads: ranked gains, and for text metrics the texts and expected answers.

Anchor matching also fills :attr:`ScoringInput.items` (one gain per ranked
chunk, for precision) and :attr:`ScoringInput.records` (samples, outputs and
matched anchor facts, for the whole-RAG and operational metrics). Judge verdicts,
made before scoring (see :mod:`ragmeter.judges.answers`), arrive as plain
:class:`JudgedValue` series in :attr:`ScoringInput.judged`. Per-sample
kernels return :class:`SampleScores`: values, which queries were scored, and why
the others were not.

>>> from ragmeter.metrics.relevance import RelevanceTable
>>> inp = ScoringInput.from_table(RelevanceTable.from_lists(["q"], [[1.0]], [[1.0]]))
>>> inp.query_ids, inp.item_view() is inp.ranked
(['q'], True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragmeter.metrics.relevance import BoolArray, FloatArray, Ranked, RelevanceTable

if TYPE_CHECKING:
    from ragmeter.metrics.records import RagBatch


@dataclass(frozen=True)
class SampleScores:
    """What a per-sample kernel returns: one value per query, a scored mask, and reasons.

    ``reasons[q]`` is ``""`` for a scored query and says why otherwise.
    """

    values: FloatArray
    scored: BoolArray
    reasons: list[str]


@dataclass(frozen=True)
class JudgedValue:
    """A judge verdict for one query, made before scoring: a value, or why there is none.

    >>> JudgedValue(4.0), JudgedValue(None, "no_context: no context chunks were given").reason
    (JudgedValue(value=4.0, reason=''), 'no_context: no context chunks were given')
    """

    value: float | None
    reason: str = ""


@dataclass(frozen=True)
class ScoringInput:
    """Everything the kernels may read for Q queries, aligned by query index."""

    query_ids: list[str]
    ranked: Ranked
    texts: list[list[str | None]] | None = None
    answers: list[list[str]] | None = None
    items: Ranked | None = None
    """Relevance of every ranked item when several can match one ground-truth item (anchors);
    ``None`` means the same as :attr:`ranked`."""
    records: RagBatch | None = None
    """Samples, outputs and anchor facts, for the per-sample (whole-RAG, operational) metrics."""
    judged: Mapping[str, Sequence[JudgedValue]] | None = None
    """Judge metric name (``groundedness``, ``abstained``, …) → one verdict per query."""

    @classmethod
    def from_table(
        cls,
        table: RelevanceTable,
        *,
        relevance_level: float | None = None,
        texts: list[list[str | None]] | None = None,
        answers: list[list[str]] | None = None,
        item_table: RelevanceTable | None = None,
        records: RagBatch | None = None,
        judged: Mapping[str, Sequence[JudgedValue]] | None = None,
    ) -> ScoringInput:
        """Wrap a relevance table (and optional texts/answers/item table/records/verdicts) for scoring."""
        items = Ranked(item_table, relevance_level) if item_table is not None else None
        return cls(table.query_ids, Ranked(table, relevance_level), texts, answers, items, records, judged)

    def item_view(self) -> Ranked:
        """Per-item relevance (for precision): :attr:`items` when set, else :attr:`ranked`."""
        return self.items if self.items is not None else self.ranked
