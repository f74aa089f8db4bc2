"""The metric registry: one entry per metric, read by the parser, CLI, docs and reports.

Each :class:`MetricDef` declares the family name, aliases, how the cutoff works,
what makes a query scorable, the kernel, and its formula. Adding a metric means
one kernel function, one entry here and one test.

>>> resolve_metric("P_10").name
'precision@10'
>>> resolve_metric("ndcg").name       # plain ndcg: k from the precedence rule
'ndcg@k'
>>> resolve_metric("recall").name     # plain recall: the whole returned list
'recall'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ragmeter.errors import MetricNameError
from ragmeter.metrics import ranking
from ragmeter.metrics.containment import containment
from ragmeter.metrics.inputs import ScoringInput
from ragmeter.metrics.names import DEFAULT_K, MetricName, parse_metric_name, register_family
from ragmeter.metrics.relevance import FloatArray, Int64Array, Ranked

Kernel = Callable[[ScoringInput, Int64Array | None], FloatArray]
Cutoff = Literal["default", "optional", "none"]
Needs = Literal["relevant", "answer"]


@dataclass(frozen=True)
class MetricDef:
    """Everything ragmeter knows about one metric family."""

    family: str
    aliases: tuple[str, ...]
    kernel: Kernel
    cutoff: Cutoff
    """``default``: a plain name takes k by precedence; ``optional``: a plain name means no
    cutoff; ``none``: the metric takes no cutoff."""
    needs: Needs
    """``relevant``: scorable when the query has a relevant item; ``answer``: when it has an
    expected answer."""
    formula: str
    description: str
    binary: bool = True
    """True when the metric reads relevance (gain >= level) rather than raw gains."""
    higher_is_better: bool = True
    reference: str = ""
    trec_name: str | None = None
    """trec_eval's measure name, with ``{k}`` for the cutoff."""


def _ranking(fn: Callable[[Ranked, Int64Array | None], FloatArray]) -> Kernel:
    def kernel(inp: ScoringInput, k: Int64Array | None) -> FloatArray:
        return fn(inp.ranked, k)

    kernel.__name__ = fn.__name__
    kernel.__doc__ = fn.__doc__
    return kernel


METRICS: tuple[MetricDef, ...] = (
    MetricDef(
        "hit",
        ("hit_rate", "success", "recall_any", "hitrate"),
        _ranking(ranking.hit),
        "default",
        "relevant",
        "hit@k = 1 if |D_k ∩ Rel| > 0 else 0",
        "Did any relevant item make the top k? (trec_eval success, RAG Recall_any@K)",
        trec_name="success_{k}",
    ),
    MetricDef(
        "recall",
        ("r",),
        _ranking(ranking.recall),
        "optional",
        "relevant",
        "recall@k = |D_k ∩ Rel| / |Rel|   (no cutoff: the whole returned list)",
        "Fraction of all relevant items that made the top k.",
        trec_name="recall_{k}",
    ),
    MetricDef(
        "precision",
        ("p", "prec"),
        _ranking(ranking.precision),
        "default",
        "relevant",
        "precision@k = |D_k ∩ Rel| / k   (k even when fewer than k items were returned)",
        "Fraction of the top k that is relevant.",
        trec_name="P_{k}",
    ),
    MetricDef(
        "mrr",
        ("rr", "reciprocal_rank"),
        _ranking(ranking.reciprocal_rank),
        "optional",
        "relevant",
        "RR = 1 / rank of the first relevant item (0 if none within k); MRR = mean RR",
        "How high the first relevant item ranks.",
        trec_name="recip_rank",
    ),
    MetricDef(
        "ndcg",
        ("ndcg_cut",),
        _ranking(ranking.ndcg),
        "default",
        "relevant",
        "nDCG@k = Σ_{i≤k} g_i / log2(i+1)  ÷  the same over all ground-truth gains sorted, cut at k",
        "Graded ranking quality with linear gains; 0 when the ideal DCG is 0.",
        binary=False,
        trec_name="ndcg_cut_{k}",
    ),
    MetricDef(
        "ndcg_harmonic",
        ("ndcg-harmonic",),
        _ranking(ranking.ndcg_harmonic),
        "optional",
        "relevant",
        "Σ_i f(d_i) / i  ÷  Σ_{i=1..m} 1/i   (binary f; ideal over all m relevant items, not cut)",
        "The QA document's nDCG for fixed-size result lists: harmonic discount.",
    ),
    MetricDef(
        "map",
        ("ap", "average_precision"),
        _ranking(ranking.average_precision),
        "optional",
        "relevant",
        "AP@k = Σ_{i≤k, d_i ∈ Rel} P@i / |Rel|; MAP = mean AP",
        "Average of precision at each relevant rank.",
        trec_name="map_cut_{k}",
    ),
    MetricDef(
        "r-precision",
        ("rprec", "r_precision", "r-prec"),
        _ranking(ranking.r_precision),
        "none",
        "relevant",
        "R-precision = |D_R ∩ Rel| / R,  R = |Rel|",
        "Precision at rank R, the number of relevant items.",
        trec_name="Rprec",
    ),
    MetricDef(
        "containment",
        ("answer_containment", "answer-containment"),
        containment,
        "default",
        "answer",
        "containment@k = 1 if an expected answer ⊆ text(d_i) for some i ≤ k (NFKC, case-fold, spaces)",
        "Does the expected answer appear in a top-k item's text?",
    ),
)

_BY_FAMILY = {m.family: m for m in METRICS}
for _m in METRICS:
    register_family(_m.family, _m.aliases)


@dataclass(frozen=True)
class ResolvedMetric:
    """A parsed name bound to its definition."""

    spec: MetricName
    definition: MetricDef

    @property
    def name(self) -> str:
        """The canonical name (``ndcg@10``, ``mrr``, ``hit@k`` for a precedence-rule k)."""
        return str(self.spec)


def get_metric(family: str) -> MetricDef:
    """Return the definition of a canonical family name."""
    return _BY_FAMILY[family]


def resolve_metric(name: str) -> ResolvedMetric:
    """Parse ``name`` and check the cutoff against the metric's rules."""
    spec = parse_metric_name(name)
    definition = _BY_FAMILY[spec.family]
    if definition.cutoff == "none" and spec.k is not None:
        raise MetricNameError(f"metric {name!r}: {definition.family} takes no cutoff")
    if definition.cutoff == "default" and spec.k is None:
        spec = MetricName(spec.family, DEFAULT_K)
    return ResolvedMetric(spec, definition)
