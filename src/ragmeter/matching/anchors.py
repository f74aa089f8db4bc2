"""Anchor matching: retrieved chunks and cited references against gold supports → gains per rank.

A chunk matches a gold support when its normalised ``rel_path`` equals the
support's and the support's heading components are a *component-wise prefix*
of the chunk's. With snippet matching on (the default) a support that lists
snippets also needs one of them in the chunk text (NFKC, case-fold, collapsed
whitespace). References are matched the same way, without snippets.

>>> split_heading("  Setup >Install  /  Linux # x86 ")
('Setup', 'Install', 'Linux', 'x86')
>>> normalize_rel_path(".\\\\notes//setup.md")
'notes/setup.md'
>>> gold = AnchorKey.of("notes/setup.md", "Setup > Install")
>>> gold.covers("notes/setup.md", "Setup > Install > Linux"), gold.covers("notes/setup.md", "Setup > Installer")
(True, False)
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragmeter.errors import MissingFieldError
from ragmeter.matching.ids import repeated_positions
from ragmeter.metrics.containment import normalize_text
from ragmeter.metrics.records import AnchorFacts
from ragmeter.metrics.relevance import RelevanceTable
from ragmeter.schema.outputs import RetrievedItem, SystemOutput
from ragmeter.schema.rag import Anchor
from ragmeter.schema.samples import Sample

_HEADING_SPLIT = re.compile(r"[>/#]")
_SPACE = re.compile(r"\s+")
_SLASHES = re.compile(r"/{2,}")

HeadingPath = str | Sequence[str] | None


def normalize_rel_path(path: str) -> str:
    """Unicode NFC, backslashes → ``/``, no repeated slashes, no ``.`` segments, no trailing slash.

    >>> normalize_rel_path(" ./a/./b\\\\c.md "), normalize_rel_path("/vault//x.md/")
    ('a/b/c.md', '/vault/x.md')
    """
    text = unicodedata.normalize("NFC", path.strip()).replace("\\", "/")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    return ("/" if text.startswith("/") else "") + "/".join(parts)


def _component(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def split_heading(heading: HeadingPath) -> tuple[str, ...]:
    """Heading components: split on ``>``, ``/`` and ``#``, each trimmed, inner spaces collapsed.

    A list is split the same way, component by component, so ``["A > B"]``,
    ``["A", "B"]`` and ``"A > B"`` are the same path. Empty components are dropped.

    >>> split_heading(["Setup", "Install  guide"]), split_heading("## Intro"), split_heading(None)
    (('Setup', 'Install guide'), ('Intro',), ())
    """
    if heading is None:
        return ()
    parts = [heading] if isinstance(heading, str) else list(heading)
    out: list[str] = []
    for part in parts:
        out.extend(c for c in (_component(x) for x in _HEADING_SPLIT.split(part)) if c)
    return tuple(out)


def in_folder(rel_path: str, folder: str) -> bool:
    """True when ``rel_path`` lies under ``folder`` (component-wise; ``""``, ``.`` and ``/`` mean everything).

    >>> in_folder("work/projects/a.md", "work/"), in_folder("work2/a.md", "work"), in_folder("a.md", ".")
    (True, False, True)
    """
    path = normalize_rel_path(rel_path).strip("/").split("/")
    base = [p for p in normalize_rel_path(folder).strip("/").split("/") if p]
    return path[: len(base)] == base


@dataclass(frozen=True)
class AnchorKey:
    """A normalised anchor: path, heading components, normalised snippets, recency flag."""

    rel_path: str
    heading: tuple[str, ...]
    snippets: tuple[str, ...] = ()
    newer: bool = False

    @classmethod
    def of(
        cls, rel_path: str, heading: HeadingPath, snippets: Sequence[str] = (), newer: bool = False
    ) -> AnchorKey:
        """Normalise the parts of an anchor."""
        wanted = tuple(s for s in (normalize_text(x) for x in snippets) if s)
        return cls(normalize_rel_path(rel_path), split_heading(heading), wanted, newer)

    @classmethod
    def from_anchor(cls, anchor: Anchor) -> AnchorKey:
        """Normalise a gold support."""
        return cls.of(anchor.rel_path, anchor.heading_path, anchor.snippets, anchor.newer)

    def covers(self, rel_path: str | None, heading: HeadingPath) -> bool:
        """Same file, and this anchor's heading components are a prefix of ``heading``'s."""
        if rel_path is None or normalize_rel_path(rel_path) != self.rel_path:
            return False
        return split_heading(heading)[: len(self.heading)] == self.heading

    def snippet_found(self, text: str) -> bool:
        """True when the anchor has no snippets or ``text`` contains one (normalised)."""
        if not self.snippets:
            return True
        haystack = normalize_text(text)
        return any(s in haystack for s in self.snippets)


def chunk_matches(
    sample_id: str,
    rank: int,
    item: RetrievedItem,
    supports: Sequence[AnchorKey],
    *,
    snippet_matching: bool,
    required: bool = True,
) -> frozenset[int]:
    """Indexes of the supports that the chunk at ``rank`` matches.

    With ``required`` (relevance comes from anchors) a chunk without ``rel_path``
    is an error, as is a chunk without text when a matching support lists snippets.
    """
    if item.rel_path is None:
        if not required:
            return frozenset()
        raise MissingFieldError(
            f"retrieved item at rank {rank} has no 'rel_path', needed to match gold_supports",
            where=f"sample {sample_id!r}",
        )
    hits: set[int] = set()
    for index, gold in enumerate(supports):
        if not gold.covers(item.rel_path, item.heading_path):
            continue
        if snippet_matching and gold.snippets:
            if item.text is None:
                raise MissingFieldError(
                    f"retrieved item at rank {rank} has no 'text', needed to check the snippets of "
                    "gold_supports (turn snippet matching off to match on anchors only)",
                    where=f"sample {sample_id!r}",
                )
            if not gold.snippet_found(item.text):
                continue
        hits.add(index)
    return frozenset(hits)


@dataclass
class AnchorMatch:
    """Anchor-matched rows: support-level gains, chunk-level gains, per-sample facts."""

    support_gains: list[list[float]]
    chunk_gains: list[list[float]]
    truth: list[list[float]]
    facts: list[AnchorFacts | None]
    warnings: list[str]


def _first_ranks(matched: list[frozenset[int]], n: int) -> list[int]:
    """1-based rank of the first chunk matching each of ``n`` supports (0 = never)."""
    first = [0] * n
    for rank, hits in enumerate(matched, start=1):
        for index in hits:
            if first[index] == 0:
                first[index] = rank
    return first


def _reference_hits(
    output: SystemOutput | None, supports: Sequence[AnchorKey]
) -> tuple[frozenset[int], ...] | None:
    if output is None:
        return ()
    if output.references is None:
        return () if output.failed() else None
    return tuple(
        frozenset(i for i, gold in enumerate(supports) if gold.covers(ref.rel_path, ref.heading_path))
        for ref in output.references
    )


def _in_scope(output: SystemOutput | None, supports: Sequence[AnchorKey]) -> bool | None:
    if output is None or output.folder_mode not in ("on", "on_with_fallback"):
        return None
    if output.selected_folders is None:
        return None
    return any(in_folder(s.rel_path, f) for s in supports for f in output.selected_folders)


def _facts(
    sample: Sample, output: SystemOutput | None, items: list[RetrievedItem], *, snippet_matching: bool
) -> tuple[AnchorFacts, list[frozenset[int]]]:
    required = sample.has_anchors()
    supports = [AnchorKey.from_anchor(a) for a in sample.supports()]

    def matches(keys: Sequence[AnchorKey]) -> list[frozenset[int]]:
        return [
            chunk_matches(sample.id, rank, item, keys, snippet_matching=snippet_matching, required=required)
            for rank, item in enumerate(items, start=1)
        ]

    matched = matches(supports)
    group_first: list[int] = []
    for group in sample.required_support_groups or []:
        group_hits = matches([AnchorKey.from_anchor(a) for a in group])
        group_first.append(next((rank for rank, hits in enumerate(group_hits, start=1) if hits), 0))
    facts = AnchorFacts(
        support_paths=tuple(s.rel_path for s in supports),
        support_newer=tuple(s.newer for s in supports),
        support_first_rank=tuple(_first_ranks(matched, len(supports))),
        group_first_rank=tuple(group_first),
        reference_hits=_reference_hits(output, supports),
        in_scope=_in_scope(output, supports),
    )
    return facts, matched


def _rank_order_warning(sample_id: str, items: list[RetrievedItem]) -> str | None:
    ranks = [item.rank for item in items if item.rank is not None]
    if len(ranks) == len(items) and any(b <= a for a, b in itertools.pairwise(ranks)):
        return (
            f"sample {sample_id!r}: the 'rank' fields of the retrieved items are not increasing in list "
            "order; list order is used as rank order"
        )
    return None


def match_anchors(
    samples: Sequence[Sample], outputs: Mapping[str, SystemOutput], *, snippet_matching: bool = True
) -> AnchorMatch:
    """Match every sample's retrieved chunks and references against its gold supports.

    Samples without anchors get ``None`` facts and empty rows. A chunk gets a
    *chunk* gain of 1 when it matches any gold support, and a *support* gain of 1
    when it matches a support no higher-ranked chunk matched (a support counts
    once, at its first rank, as a repeated id does), so recall@k over anchors is
    the fraction of gold supports found in the top k. Unanswerable samples have
    no relevant items.
    """
    support_gains: list[list[float]] = []
    chunk_gains: list[list[float]] = []
    truth: list[list[float]] = []
    facts: list[AnchorFacts | None] = []
    warnings: list[str] = []
    for sample in samples:
        if not sample.supports() and not sample.required_support_groups:
            support_gains.append([])
            chunk_gains.append([])
            truth.append([])
            facts.append(None)
            continue
        output = outputs.get(sample.id)
        items = output.retrieved if output is not None else []
        repeats = repeated_positions(sample.id, items, [])
        note = _rank_order_warning(sample.id, items)
        if note:
            warnings.append(note)
        sample_facts, matched = _facts(sample, output, items, snippet_matching=snippet_matching)
        matched = [frozenset() if pos in repeats else hits for pos, hits in enumerate(matched)]
        facts.append(sample_facts)
        covered: set[int] = set()
        row: list[float] = []
        for hits in matched:
            row.append(1.0 if hits - covered else 0.0)
            covered |= hits
        support_gains.append(row)
        chunk_gains.append([1.0 if hits else 0.0 for hits in matched])
        truth.append([1.0] * len(sample_facts.support_paths) if sample.answerable else [])
    return AnchorMatch(support_gains, chunk_gains, truth, facts, warnings)


def merged_tables(
    samples: Sequence[Sample], id_table: RelevanceTable, anchors: AnchorMatch
) -> tuple[RelevanceTable, RelevanceTable | None]:
    """Per sample, id rows or anchor rows: the support-level table and the chunk-level table.

    Samples with ``expected_output`` keep their id gains (the same in both
    tables); anchor samples take the anchor rows. Unanswerable samples have no
    relevant items in either. Without anchor or unanswerable samples the id
    table is returned as it is, with no chunk-level table (``None``).
    """
    if all(s.answerable and not s.has_anchors() for s in samples):
        return id_table, None
    ids = [s.id for s in samples]
    support_rows: list[list[float]] = []
    chunk_rows: list[list[float]] = []
    truth_rows: list[list[float]] = []
    offsets, ideal = id_table.offsets, id_table.ideal_offsets
    for q, sample in enumerate(samples):
        if sample.has_anchors():
            support_rows.append(anchors.support_gains[q])
            chunk_rows.append(anchors.chunk_gains[q])
            truth_rows.append(anchors.truth[q])
            continue
        row = id_table.gains[offsets[q] : offsets[q + 1]].tolist()
        support_rows.append(row)
        chunk_rows.append(row)
        truth_rows.append(id_table.ideal_gains[ideal[q] : ideal[q + 1]].tolist() if sample.answerable else [])
    return (
        RelevanceTable.from_lists(ids, support_rows, truth_rows),
        RelevanceTable.from_lists(ids, chunk_rows, truth_rows),
    )
