"""Match ranked ids against id ground truth: samples + outputs → gains per rank.

A repeated id in one ranked list counts once, at its first rank, and is
reported; the copy keeps its rank slot and scores 0. A sample with no recorded output is scored as an empty list and
counted.

>>> from ragmeter.schema import Sample, SystemOutput
>>> s = Sample.model_validate({"id": "q", "expected_output": {"a": 2, "b": 1}})
>>> m = match_ids([s], {"q": SystemOutput.from_raw(["b", "x", "b", "a"])})
>>> m.table.gains.tolist(), m.warnings
([1.0, 0.0, 0.0, 2.0], ["sample 'q': id 'b' repeated at rank 3 (first at rank 1); counted once"])
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ragmeter.errors import InputError
from ragmeter.metrics.relevance import RelevanceTable
from ragmeter.schema.outputs import RetrievedItem, SystemOutput
from ragmeter.schema.samples import Sample


@dataclass
class MatchedRanking:
    """Gains per rank for every sample, with texts and expected answers aligned by query."""

    table: RelevanceTable
    texts: list[list[str | None]]
    answers: list[list[str]]
    missing_output: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def repeated_positions(sample_id: str, items: list[RetrievedItem], warnings: list[str]) -> frozenset[int]:
    """0-based positions whose id already appeared higher up; each is reported in ``warnings``.

    A repeat keeps its rank slot but scores nothing (the id counts once, at its
    first rank), so padding a list with copies never pulls later items into the top k.
    """
    first_rank: dict[str, int] = {}
    repeats: set[int] = set()
    for position, item in enumerate(items):
        if item.id is None:
            continue
        if item.id in first_rank:
            warnings.append(
                f"sample {sample_id!r}: id {item.id!r} repeated at rank {position + 1} "
                f"(first at rank {first_rank[item.id]}); counted once"
            )
            repeats.add(position)
        else:
            first_rank[item.id] = position + 1
    return frozenset(repeats)


def match_ids(samples: list[Sample], outputs: Mapping[str, SystemOutput]) -> MatchedRanking:
    """Turn id ground truth and ranked outputs into a :class:`RelevanceTable`."""
    warnings: list[str] = []
    missing: list[str] = []
    ranked_gains: list[list[float]] = []
    ranked_judged: list[list[bool]] = []
    truth_gains: list[list[float]] = []
    texts: list[list[str | None]] = []
    for sample in samples:
        output = outputs.get(sample.id)
        if output is None:
            missing.append(sample.id)
            items: list[RetrievedItem] = []
        else:
            items = output.retrieved
        repeats = repeated_positions(sample.id, items, warnings)
        truth = sample.gains()
        if truth:
            for rank, item in enumerate(items, start=1):
                if item.id is None:
                    raise InputError(
                        f"retrieved item at rank {rank} has no 'id', needed to match expected_output",
                        where=f"sample {sample.id!r}",
                    )
        listed = [
            item.id is not None and pos not in repeats and item.id in truth for pos, item in enumerate(items)
        ]
        ranked_gains.append(
            [truth[str(item.id)] if known else 0.0 for known, item in zip(listed, items, strict=True)]
        )
        ranked_judged.append(listed)
        truth_gains.append(list(truth.values()))
        texts.append([item.text for item in items])
    table = RelevanceTable.from_lists([s.id for s in samples], ranked_gains, truth_gains, ranked_judged)
    answers = [s.metadata.expected_answers() for s in samples]
    return MatchedRanking(table, texts, answers, missing, warnings)
