"""The metric name grammar: a name is a value with one canonical string form.

Accepted spellings, all case-insensitive in the family part:

* canonical: ``ndcg@10``, ``recall@100``, ``mrr``, ``mrr@10``, ``map``, ``r-precision``
* ranx / ir-measures: ``P@10``, ``nDCG@10``, ``RR``, ``AP``, ``success@5``, ``R@100``
* trec_eval: ``P_10``, ``P.10``, ``ndcg_cut_10``, ``recip_rank``, ``map_cut_100``, ``Rprec``
* seed aliases: ``retrieval-ndcg-at-k``, ``retrieval-hit-at-k``, … (k from the precedence rule)
* a qualifier after a dot, for families that take one: ``latency_p95.retrieval`` (a timings stage)

>>> parse_metric_name("nDCG@10")
MetricName(family='ndcg', k=10)
>>> parse_metric_name("P_5"), parse_metric_name("recip_rank")
(MetricName(family='precision', k=5), MetricName(family='mrr', k=None))
>>> str(parse_metric_name("retrieval-hit-at-k"))
'hit@k'
>>> parse_metric_name("latency_p95.retrieval")
MetricName(family='latency_p95', k=None, qualifier='retrieval')
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from ragmeter.errors import MetricNameError

DEFAULT_K = "default"
"""Marker for ``k``: resolve it by the k precedence rule (sample, caller, config, 5)."""


@dataclass(frozen=True, repr=False)
class MetricName:
    """A parsed metric name: a family and a cutoff (an int, ``None``, or :data:`DEFAULT_K`)."""

    family: str
    k: int | str | None = None
    qualifier: str | None = None
    """What a qualified family measures, e.g. the timings stage of ``latency_p50.retrieval``."""

    def __repr__(self) -> str:
        qualifier = "" if self.qualifier is None else f", qualifier={self.qualifier!r}"
        return f"MetricName(family={self.family!r}, k={self.k!r}{qualifier})"

    def __str__(self) -> str:
        suffix = "" if self.qualifier is None else f".{self.qualifier}"
        if self.k is None:
            return f"{self.family}{suffix}"
        if self.k == DEFAULT_K:
            return f"{self.family}@k{suffix}"
        return f"{self.family}@{self.k}{suffix}"


# family spelling (lower-case) -> canonical family
FAMILY_ALIASES: dict[str, str] = {}
# families that take a ".qualifier" (e.g. latency_p50.retrieval)
QUALIFIED_FAMILIES: set[str] = set()
_QUALIFIER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
# whole-name aliases whose k follows the precedence rule (the seed contract's names)
SEED_ALIASES: dict[str, str] = {
    "retrieval-hit-at-k": "hit",
    "retrieval-recall-at-k": "recall",
    "retrieval-precision-at-k": "precision",
    "retrieval-mrr": "mrr",
    "retrieval-ndcg-at-k": "ndcg",
    "answer-containment-at-k": "containment",
}
_SEED_NO_K = {"retrieval-mrr"}

# trec_eval measure stems (exact case as trec_eval prints them) -> canonical family
TREC_STEMS: dict[str, str] = {
    "P": "precision",
    "recall": "recall",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    "success": "hit",
}
TREC_WHOLE: dict[str, str] = {"recip_rank": "mrr", "Rprec": "r-precision", "map": "map"}

_TREC_CUT = re.compile(r"^(P|recall|ndcg_cut|map_cut|success)[_.](\d+)$")
_AT = re.compile(r"^(?P<family>[^@\s]+)@(?P<k>[^@\s]+)$")


def register_family(canonical: str, aliases: tuple[str, ...], *, qualified: bool = False) -> None:
    """Make ``canonical`` and its aliases parseable (called by the registry).

    A ``qualified`` family also accepts ``FAMILY.QUALIFIER`` (letters, digits, ``_``, ``-``).
    """
    FAMILY_ALIASES[canonical.lower()] = canonical
    for alias in aliases:
        FAMILY_ALIASES[alias.lower()] = canonical
    if qualified:
        QUALIFIED_FAMILIES.add(canonical)


def _parse_qualified(name: str, raw: str) -> MetricName | None:
    """``FAMILY.QUALIFIER`` for a family that takes one; ``None`` when ``raw`` is not of that form."""
    head, _, qualifier = raw.partition(".")
    family = FAMILY_ALIASES.get(head.lower())
    if family is None:
        return None
    if family not in QUALIFIED_FAMILIES:
        raise MetricNameError(f"metric {name!r}: {family} takes no '.qualifier'")
    if not _QUALIFIER.match(qualifier):
        raise MetricNameError(
            f"metric {name!r}: the qualifier after '.' must be letters, digits, '_' or '-', got {qualifier!r}"
        )
    return MetricName(family, None, qualifier)


def _known_spellings() -> list[str]:
    return sorted(set(FAMILY_ALIASES) | set(SEED_ALIASES) | set(TREC_WHOLE) | {f"{s}_10" for s in TREC_STEMS})


def _canonical_spelling(spelling: str) -> str:
    """The canonical family a known spelling stands for (whole-name aliases included)."""
    whole = {k.lower(): v for k, v in TREC_WHOLE.items()} | SEED_ALIASES
    return whole.get(spelling, FAMILY_ALIASES.get(spelling, spelling))


def _unknown(name: str) -> MetricNameError:
    family, at, k = name.partition("@")
    lowered = family.lower()
    if at and (lowered in SEED_ALIASES or lowered in {t.lower() for t in TREC_WHOLE}):
        close = [_canonical_spelling(lowered)]
    else:
        close = difflib.get_close_matches(lowered, _known_spellings(), n=1, cutoff=0.6)
        if at and close:
            close = [_canonical_spelling(close[0])]
    hint = f"; did you mean {close[0] + at + k!r}?" if close else "; run 'ragmeter metrics' for the list"
    return MetricNameError(f"unknown metric {name!r}{hint}")


def _parse_k(name: str, text: str) -> int | str:
    if text.lower() == "k":
        return DEFAULT_K
    if not re.fullmatch(r"[+-]?\d+", text):
        raise MetricNameError(
            f"metric {name!r}: the cutoff after '@' must be a whole number or 'k', got {text!r}"
        )
    k = int(text)
    if k <= 0:
        raise MetricNameError(f"metric {name!r}: the cutoff k must be >= 1, got {k}")
    return k


def parse_metric_name(name: str) -> MetricName:
    """Parse any accepted spelling into a :class:`MetricName`; unknown names get a did-you-mean."""
    raw = name.strip()
    if not raw:
        raise MetricNameError("empty metric name")
    lowered = raw.lower()
    if lowered in SEED_ALIASES:
        return MetricName(SEED_ALIASES[lowered], None if lowered in _SEED_NO_K else DEFAULT_K)
    if raw in TREC_WHOLE:
        return MetricName(TREC_WHOLE[raw], None)
    trec = _TREC_CUT.match(raw)
    if trec:
        return MetricName(TREC_STEMS[trec.group(1)], _parse_k(raw, trec.group(2)))
    if "." in raw and "@" not in raw:
        qualified = _parse_qualified(name, raw)
        if qualified is not None:
            return qualified
    at = _AT.match(raw)
    if at:
        family = FAMILY_ALIASES.get(at.group("family").lower())
        if family is None:
            raise _unknown(raw)
        return MetricName(family, _parse_k(raw, at.group("k")))
    if "@" in raw:
        raise MetricNameError(f"metric {name!r} does not parse: expected NAME or NAME@K")
    family = FAMILY_ALIASES.get(lowered)
    if family is None:
        raise _unknown(raw)
    return MetricName(family, None)
