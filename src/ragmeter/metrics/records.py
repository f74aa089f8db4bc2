"""What the per-sample (whole-RAG, operational) kernels read: samples, outputs and anchor facts.

:class:`AnchorFacts` is what anchor matching (:mod:`ragmeter.matching.anchors`) found for one
sample; :class:`RagBatch` holds them for all samples, aligned by query, with the recorded
outputs and the model prices. Scoring inputs (:mod:`ragmeter.metrics.inputs`) carry a batch.

>>> facts = AnchorFacts(("a.md", "b.md"), (False, False), (2, 0), (2, 0), (frozenset({0}),), None)
>>> facts.hit(5), facts.all_groups(5), facts.cited()
(True, False, True)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the metrics load without the pydantic models
    from ragmeter.schema.outputs import SystemOutput
    from ragmeter.schema.rag import ModelPrice
    from ragmeter.schema.samples import Sample


@dataclass(frozen=True)
class AnchorFacts:
    """What anchor matching found for one sample (ranks are 1-based; 0 means never)."""

    support_paths: tuple[str, ...]
    """Normalised ``rel_path`` of each gold support."""
    support_newer: tuple[bool, ...]
    support_first_rank: tuple[int, ...]
    """Rank of the first chunk matching each gold support."""
    group_first_rank: tuple[int, ...]
    """Rank of the first chunk matching each required support group."""
    reference_hits: tuple[frozenset[int], ...] | None
    """For each reference, the gold supports it matches; ``None``: the output has no ``references``."""
    in_scope: bool | None
    """Whether a selected folder holds a gold support; ``None`` when folder selection was not on."""

    def hit(self, k: int | None, supports: Sequence[int] | None = None) -> bool:
        """True when a (chosen) gold support was matched within the top ``k``."""
        chosen = range(len(self.support_first_rank)) if supports is None else supports
        return any(
            self.support_first_rank[i] > 0 and (k is None or self.support_first_rank[i] <= k) for i in chosen
        )

    def all_groups(self, k: int | None) -> bool:
        """True when every required group was matched within the top ``k``."""
        return all(r > 0 and (k is None or r <= k) for r in self.group_first_rank)

    def cited(self) -> bool:
        """True when some reference matches a gold support."""
        return any(self.reference_hits or ())


@dataclass(frozen=True)
class RagBatch:
    """What the per-sample kernels read, aligned by query: samples, outputs, anchor facts, prices."""

    samples: list[Sample]
    outputs: list[SystemOutput | None]
    facts: list[AnchorFacts | None]
    pricing: Mapping[str, ModelPrice] = field(default_factory=dict)

    def any_output(self, predicate: Callable[[SystemOutput], bool]) -> bool:
        """True when at least one recorded output satisfies ``predicate``."""
        return any(predicate(o) for o in self.outputs if o is not None)
