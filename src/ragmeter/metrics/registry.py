"""The metric registry: one entry per metric, read by the parser, CLI, docs and reports.

Each :class:`MetricDef` declares the family name, aliases, how the cutoff works,
what makes a query scorable, the kernel, and its formula. Adding a metric means
one kernel function, one entry here and one test.

>>> resolve_metric("P_10").name
'precision@10'
>>> resolve_metric("ndcg").name       # plain ndcg: k from the precedence rule
'ndcg@k'
>>> resolve_metric("recall").name, resolve_metric("recall@all").name   # NAME@all: the whole list
('recall@k', 'recall@all')
>>> resolve_metric("P(rel=2)@5").name, resolve_metric("set_F.0.5").name
('precision(rel=2)@5', 'set_f(beta=0.5)')
>>> resolve_metric("recall_all").name, resolve_metric("latency_p95.retrieval").name
('recall_all@k', 'latency_p95.retrieval')
>>> get_metric("groundedness").needs, resolve_metric("fuzzy").name
('judge', 'fuzzy_match')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ragmeter.errors import MetricNameError
from ragmeter.metrics import interpolated, judged, judgments, operational, rag, ranking
from ragmeter.metrics.containment import containment
from ragmeter.metrics.inputs import SampleScores, ScoringInput
from ragmeter.metrics.names import (
    ALL_K,
    DEFAULT_K,
    MetricName,
    ParamSpec,
    parse_metric_name,
    register_family,
)
from ragmeter.metrics.relevance import FloatArray, Int64Array, Ranked

Kernel = Callable[[ScoringInput, Int64Array | None], FloatArray]
SampleKernel = Callable[[ScoringInput, Int64Array | None, MetricName], SampleScores]
Cutoff = Literal["default", "optional", "none"]
Needs = Literal["relevant", "answer", "sample", "judge"]
Aggregate = Literal["mean", "sum", "geometric"]


@dataclass(frozen=True)
class PerSample:
    """A per-sample kernel (``needs="sample"`` or ``"judge"``): records or verdicts in, scores out.

    It gets its parsed name and says itself which queries it scored and why it left the others out.
    """

    fn: SampleKernel


@dataclass(frozen=True)
class WithParam:
    """A ranking kernel that also takes the family's own parameter (:class:`ParamSpec`)."""

    fn: Callable[[Ranked, Int64Array | None, float], FloatArray]


@dataclass(frozen=True)
class MetricDef:
    """Everything ragmeter knows about one metric family."""

    family: str
    aliases: tuple[str, ...]
    kernel: Kernel | PerSample | WithParam
    cutoff: Cutoff
    """``default``: a plain name takes k by precedence; ``optional``: a plain name means no
    cutoff; ``none``: the metric takes no cutoff."""
    needs: Needs
    """``relevant``: scorable when the query has a relevant item; ``answer``: when it has an
    expected answer; ``sample``: the kernel (a :class:`PerSample`) decides per query;
    ``judge``: a :class:`PerSample` kernel over verdicts an LLM judge made before scoring
    (:attr:`ScoringInput.judged <ragmeter.metrics.inputs.ScoringInput.judged>`)."""
    formula: str
    description: str
    binary: bool = True
    """True when the metric reads relevance (gain >= level) rather than raw gains."""
    higher_is_better: bool = True
    reference: str = ""
    trec_name: str | None = None
    """trec_eval's measure name, with ``{k}`` for the cutoff."""
    percentile: float | None = None
    """``None``: the aggregate is the mean of the scored values; a number: that percentile
    (numpy's default linear method)."""
    qualified: bool = False
    """True when the name takes a ``.qualifier`` (the timings stage of ``latency_p50.retrieval``)."""
    fields: tuple[str, ...] = ()
    """The sample / ``output.`` fields a per-sample metric reads (for docs and error messages)."""
    aggregate: Aggregate = "mean"
    """How per-query values combine: their mean, their sum (counts, as trec_eval sums them) or
    their geometric mean (each value floored at 0.00001, as trec_eval's gm_map)."""
    param: ParamSpec | None = None
    """The family's own parameter (a :class:`WithParam` kernel reads it)."""
    upper: float | None = 1.0
    """The largest value the metric takes (``None``: unbounded); every metric is >= 0. A gate
    threshold outside the range could never fire, so it is an error."""


def _ranking(fn: Callable[[Ranked, Int64Array | None], FloatArray]) -> Kernel:
    def kernel(inp: ScoringInput, k: Int64Array | None) -> FloatArray:
        return fn(inp.ranked, k)

    kernel.__name__ = fn.__name__
    kernel.__doc__ = fn.__doc__
    return kernel


def _per_item(fn: Callable[[Ranked, Int64Array | None], FloatArray]) -> Kernel:
    """Like :func:`_ranking`, over per-item relevance (every chunk matching an anchor counts)."""

    def kernel(inp: ScoringInput, k: Int64Array | None) -> FloatArray:
        return fn(inp.item_view(), k)

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
        "default",
        "relevant",
        "recall@k = |D_k ∩ Rel| / |Rel|   (recall@all: the whole returned list)",
        "Fraction of all relevant items that made the top k.",
        trec_name="recall_{k}",
    ),
    MetricDef(
        "modified_precision",
        (),
        _ranking(ranking.recall),
        "none",
        "relevant",
        "|D ∩ Rel| / |Rel| over the whole returned list D (the value of recall with no cutoff)",
        "The QA document's 'modified precision' for fixed-size result lists: the share of the relevant "
        "items anywhere in the returned list.",
        reference="qa-retriever-and-answer-metrics.md (Modified Precision)",
    ),
    MetricDef(
        "precision",
        ("p", "prec"),
        _per_item(ranking.precision),
        "default",
        "relevant",
        "precision@k = |D_k ∩ Rel| / k   (k even when fewer than k items were returned)",
        "Fraction of the top k that is relevant (with anchors: every chunk matching a gold support).",
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
        "gm_map",
        ("gmap", "gm_ap"),
        _ranking(ranking.average_precision),
        "optional",
        "relevant",
        "per query AP; aggregate exp(mean(log(max(AP, 0.00001))))",
        "Geometric mean of AP: rewards consistency over topics (trec_eval gm_map).",
        trec_name="gm_map",
        aggregate="geometric",
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
        "ndcg_exp",
        ("ndcg_burges", "ndcg-exp"),
        _ranking(ranking.ndcg_exp),
        "default",
        "relevant",
        "nDCG@k with gains 2^g - 1 (ideal from all ground truth, cut at k); 0 when the ideal DCG is 0",
        "Graded ranking quality with exponential gains (ranx ndcg_burges, ir_measures nDCG(dcg=exp-log2)).",
        binary=False,
    ),
    MetricDef(
        "dcg",
        (),
        _ranking(ranking.dcg),
        "default",
        "relevant",
        "DCG@k = Σ_{i≤k} g_i / log2(i+1)",
        "Discounted cumulative gain, not normalised (ranx dcg).",
        binary=False,
        upper=None,
    ),
    MetricDef(
        "dcg_exp",
        ("dcg_burges", "dcg-exp"),
        _ranking(ranking.dcg_exp),
        "default",
        "relevant",
        "DCG@k = Σ_{i≤k} (2^g_i - 1) / log2(i+1)",
        "Discounted cumulative gain with exponential gains (ranx dcg_burges).",
        binary=False,
        upper=None,
    ),
    MetricDef(
        "hits",
        (),
        _ranking(ranking.num_rel_ret),
        "default",
        "relevant",
        "hits@k = |D_k ∩ Rel| (a count; the aggregate is its mean, as in ranx)",
        "How many relevant items made the top k (ranx hits; not hit@k, which is 0 or 1).",
        upper=None,
    ),
    MetricDef(
        "f1",
        ("f1_score",),
        _ranking(ranking.f1),
        "default",
        "relevant",
        "f1@k = 2 P@k R@k / (P@k + R@k)",
        "Harmonic mean of precision@k and recall@k (ranx f1).",
    ),
    MetricDef(
        "set_p",
        ("setp", "set_precision"),
        _ranking(ranking.set_precision),
        "none",
        "relevant",
        "|D ∩ Rel| / |D| over the whole returned list D (0 for an empty list)",
        "Precision of the returned set (trec_eval set_P, ir_measures SetP).",
        trec_name="set_P",
    ),
    MetricDef(
        "set_recall",
        ("setr", "set_r"),
        _ranking(ranking.set_recall),
        "none",
        "relevant",
        "|D ∩ Rel| / |Rel| over the whole returned list D",
        "Recall of the returned set (trec_eval set_recall, ir_measures SetR).",
        trec_name="set_recall",
    ),
    MetricDef(
        "set_f",
        ("setf",),
        WithParam(ranking.set_f),
        "none",
        "relevant",
        "(β + 1) P R / (β P + R) over the whole returned list (0 with nothing relevant returned)",
        "F-measure of the returned set; set_F.0.5 / SetF(beta=0.5) for β = 0.5 (trec_eval set_F).",
        trec_name="set_F",
        param=ParamSpec("beta", suffix=False, default=1.0),
    ),
    MetricDef(
        "num_ret",
        ("numret",),
        _ranking(ranking.num_ret),
        "none",
        "relevant",
        "|D| per query; aggregate: the sum over queries",
        "Items returned (trec_eval num_ret: the summary is a sum).",
        binary=False,
        trec_name="num_ret",
        aggregate="sum",
        upper=None,
    ),
    MetricDef(
        "num_rel",
        ("numrel",),
        _ranking(ranking.num_rel),
        "none",
        "relevant",
        "|Rel| per query; aggregate: the sum over queries",
        "Relevant items in the ground truth (trec_eval num_rel: the summary is a sum).",
        trec_name="num_rel",
        aggregate="sum",
        upper=None,
    ),
    MetricDef(
        "num_rel_ret",
        ("numrelret",),
        _ranking(ranking.num_rel_ret),
        "none",
        "relevant",
        "|D ∩ Rel| per query; aggregate: the sum over queries",
        "Relevant items returned (trec_eval num_rel_ret: the summary is a sum).",
        trec_name="num_rel_ret",
        aggregate="sum",
        upper=None,
    ),
    MetricDef(
        "bpref",
        (),
        _ranking(judgments.bpref),
        "none",
        "relevant",
        "Σ_{r ∈ Rel ∩ D} (1 - min(|N above r|, R) / min(N, R)) / R, N = judged non-relevant",
        "Binary preference: ranks relevant items above judged non-relevant ones; ignores unjudged items.",
        trec_name="bpref",
    ),
    MetricDef(
        "gm_bpref",
        (),
        _ranking(judgments.bpref),
        "none",
        "relevant",
        "per query bpref; aggregate exp(mean(log(max(bpref, 0.00001))))",
        "Geometric mean of bpref (trec_eval gm_bpref).",
        trec_name="gm_bpref",
        aggregate="geometric",
    ),
    MetricDef(
        "infap",
        ("inf_ap",),
        _ranking(judgments.infap),
        "none",
        "relevant",
        "inferred AP (Yilmaz & Aslam 2006) from a sampled pool; judgments < 0 are pooled but unjudged",
        "AP estimated from incomplete, sampled judgments (trec_eval infAP).",
        trec_name="infAP",
    ),
    MetricDef(
        "judged",
        ("judged_rate",),
        _ranking(judgments.judged),
        "default",
        "relevant",
        "|D_k ∩ Judged| / min(k, |D|)",
        "Share of the top k with a judgment of any value (ir_measures Judged@k).",
        binary=False,
    ),
    MetricDef(
        "iprec_at_recall",
        ("iprec",),
        WithParam(lambda r, k, level: interpolated.iprec_at_recall(r, k, level)),
        "none",
        "relevant",
        "max precision at or after the rank of the lround(level · R)-th relevant item",
        "Interpolated precision at a recall level: iprec_at_recall_0.10 or IPrec@0.1 (trec_eval 10.0).",
        trec_name="iprec_at_recall_{param}",
        param=ParamSpec("recall", suffix=True, default=None, at=True),
    ),
    MetricDef(
        "rprec_mult",
        (),
        WithParam(interpolated.rprec_mult),
        "none",
        "relevant",
        "precision at (long)(m · R + 0.9)",
        "Precision at a multiple m of R: rprec_mult_0.20 (trec_eval Rprec_mult).",
        trec_name="Rprec_mult_{param}",
        param=ParamSpec("multiple", suffix=True, default=None),
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
    # -- whole-RAG metrics (metrics/rag.py; docs/rag.md) --
    MetricDef(
        "recall_all",
        ("recall-all",),
        PerSample(rag.recall_all),
        "default",
        "sample",
        "recall_all@k = 1 if every required support group has a chunk matching it in the top k",
        "Multi-hop: was all the required evidence retrieved? (answerable samples with groups)",
        binary=False,
        fields=("required_support_groups", "output.retrieved"),
    ),
    MetricDef(
        "scope_miss_rate",
        ("scope_miss",),
        PerSample(rag.scope_miss),
        "none",
        "sample",
        "1 if folder_mode is on/on_with_fallback and no selected folder holds a gold support",
        "Did folder selection exclude every gold support? (outputs with folder selection on)",
        binary=False,
        higher_is_better=False,
        fields=("gold_supports", "output.folder_mode", "output.selected_folders"),
    ),
    MetricDef(
        "attribution_hit_rate",
        ("attribution_hit", "attribution"),
        PerSample(rag.attribution_hit),
        "none",
        "sample",
        "1 if a cited reference matches a gold support (same anchor rule, no snippets)",
        "Did the answer cite the right note? (answerable samples)",
        binary=False,
        fields=("gold_supports", "output.references"),
    ),
    MetricDef(
        "recency_rule_pass",
        ("recency_pass", "recency_conflict_pass"),
        PerSample(rag.recency_rule),
        "none",
        "sample",
        "cite_newer: a reference matches a newer support, none only an older; *_both: newer and older cited",
        "Do the references follow the sample's recency_conflict_rule? (citations only, no judge)",
        binary=False,
        fields=("recency_conflict_rule", "gold_supports[].newer", "output.references"),
    ),
    MetricDef(
        "abstention_accuracy",
        ("abstention",),
        PerSample(judged.with_judged_abstention(rag.abstention_accuracy)),
        "none",
        "sample",
        "1 if the system abstained (answerable: false samples)",
        "Does the system refuse when the notes cannot answer?",
        binary=False,
        fields=("answerable", "output.abstained", "judge: abstention (fallback)"),
    ),
    MetricDef(
        "hallucination_rate_unanswerable",
        ("hallucination_rate", "hallucination_unanswerable"),
        PerSample(judged.with_judged_abstention(rag.hallucination_unanswerable)),
        "none",
        "sample",
        "1 if the system did not abstain (answerable: false samples) = 1 - abstention_accuracy",
        "How often does the system answer a question the notes cannot answer?",
        binary=False,
        higher_is_better=False,
        fields=("answerable", "output.abstained", "judge: abstention (fallback)"),
    ),
    MetricDef(
        "false_abstention_rate",
        ("false_abstention",),
        PerSample(judged.with_judged_abstention(rag.false_abstention)),
        "none",
        "sample",
        "1 if the system abstained (answerable samples)",
        "How often does the system refuse a question it should answer?",
        binary=False,
        higher_is_better=False,
        fields=("answerable", "output.abstained", "judge: abstention (fallback)"),
    ),
    # -- answer quality from LLM judges (metrics/judged.py; docs/judges.md) --
    MetricDef(
        "groundedness",
        (),
        PerSample(judged.groundedness),
        "none",
        "judge",
        "judge score 0-5 over the top-k chunk texts: 5 every claim supported and the major ones cited; "
        "3 mixed; 1 contradicts the context; 0 unrelated",
        "Are the answer's claims supported by the retrieved context? (LLM judge; answerable questions)",
        binary=False,
        reference="rag-core-evaluation-metrics.md §6",
        fields=("output.answer", "output.retrieved[].text"),
        upper=5.0,
    ),
    MetricDef(
        "correctness",
        ("answer_correctness",),
        PerSample(judged.correctness),
        "none",
        "judge",
        "judge score 0-5 from question, answer, context and metadata.expected_answer: 5 fully correct "
        "and complete … 0 completely wrong",
        "Does the answer correctly address the question? (LLM judge; answerable questions)",
        binary=False,
        reference="rag-core-evaluation-metrics.md §7",
        fields=("input.question", "output.answer", "output.retrieved[].text", "metadata.expected_answer"),
        upper=5.0,
    ),
    MetricDef(
        "factual_match",
        ("factual", "gptscore"),
        PerSample(judged.factual_match),
        "none",
        "judge",
        "1 if fuzzy match and the factual-match judge agree on a match; when they disagree, the "
        "verification pass decides",
        "Does the answer state the expected answer's facts? (LLM judge + fuzzy match; needs an expected answer)",
        binary=False,
        reference="qa-retriever-and-answer-metrics.md (GPTScore)",
        fields=("input.question", "output.answer", "metadata.expected_answer"),
    ),
    MetricDef(
        "fuzzy_match",
        ("fuzzy",),
        PerSample(judged.fuzzy_match),
        "none",
        "judge",
        "1 if an expected answer scores >= judge.fuzzy_threshold (default 90) in rapidfuzz "
        "partial_ratio against the answer (NFKC, case-fold, punctuation removed)",
        "Is the expected answer (fuzzily) in the answer? (no LLM; needs an expected answer)",
        binary=False,
        reference="qa-retriever-and-answer-metrics.md (Fuzzy Match)",
        fields=("output.answer", "metadata.expected_answer"),
    ),
    MetricDef(
        "bertscore_coverage",
        ("bertscore", "bert_score"),
        PerSample(judged.bertscore_coverage),
        "none",
        "judge",
        "min over the expected answer's sentences of max over the answer's sentences of BERTScore "
        "(the best-covered of several acceptable expected answers)",
        "Is every sentence of the expected answer represented in the answer? (offline BERTScore model, "
        "judge.bertscore; answerable questions with an expected answer)",
        binary=False,
        reference="qa-retriever-and-answer-metrics.md (BERTScore)",
        fields=("output.answer", "metadata.expected_answer"),
    ),
    MetricDef(
        "bertscore_pass",
        ("bertscore_pass_rate",),
        PerSample(judged.bertscore_pass),
        "none",
        "judge",
        "1 if bertscore_coverage >= judge.bertscore.thresholds[model] (from 'ragmeter calibrate bertscore')",
        "Share of answers whose BERTScore coverage reaches the calibrated threshold (unscored without one)",
        binary=False,
        reference="qa-retriever-and-answer-metrics.md (BERTScore, threshold)",
        fields=("output.answer", "metadata.expected_answer", "judge.bertscore.thresholds"),
    ),
    # -- operational metrics (metrics/operational.py; docs/rag.md) --
    MetricDef(
        "error_rate",
        ("errors",),
        PerSample(operational.error_rate),
        "none",
        "sample",
        "1 if the call failed: non-blank output.error, timed_out true, or no recorded output",
        "How often did the system fail?",
        binary=False,
        higher_is_better=False,
        fields=("output.error", "output.timed_out"),
    ),
    MetricDef(
        "timeout_rate",
        ("timeouts",),
        PerSample(operational.timeout_rate),
        "none",
        "sample",
        "1 if output.timed_out is true",
        "How often did the system time out?",
        binary=False,
        higher_is_better=False,
        fields=("output.timed_out",),
    ),
    MetricDef(
        "empty_response_rate",
        ("empty_rate", "empty_responses"),
        PerSample(operational.empty_response_rate),
        "none",
        "sample",
        "1 if the call did not fail or abstain but the answer is missing or blank",
        "How often did the system return no answer?",
        binary=False,
        higher_is_better=False,
        fields=("output.answer",),
    ),
    MetricDef(
        "latency_p50",
        ("latency_median",),
        PerSample(operational.latency),
        "none",
        "sample",
        "median of output.latency (or of output.timings[STAGE] for latency_p50.STAGE), seconds",
        "Typical latency (numpy linear percentile).",
        binary=False,
        higher_is_better=False,
        percentile=50.0,
        qualified=True,
        fields=("output.latency", "output.timings"),
        upper=None,
    ),
    MetricDef(
        "latency_p95",
        (),
        PerSample(operational.latency),
        "none",
        "sample",
        "95th percentile of output.latency (or of output.timings[STAGE] for latency_p95.STAGE), seconds",
        "Tail latency (numpy linear percentile).",
        binary=False,
        higher_is_better=False,
        percentile=95.0,
        qualified=True,
        fields=("output.latency", "output.timings"),
        upper=None,
    ),
    MetricDef(
        "tokens_prompt",
        ("prompt_tokens",),
        PerSample(operational.tokens_prompt),
        "none",
        "sample",
        "mean of output.tokens.prompt (the sum is in the 'operational' section)",
        "Prompt tokens per question.",
        binary=False,
        higher_is_better=False,
        fields=("output.tokens.prompt",),
        upper=None,
    ),
    MetricDef(
        "tokens_completion",
        ("completion_tokens",),
        PerSample(operational.tokens_completion),
        "none",
        "sample",
        "mean of output.tokens.completion (the sum is in the 'operational' section)",
        "Completion tokens per question.",
        binary=False,
        higher_is_better=False,
        fields=("output.tokens.completion",),
        upper=None,
    ),
    MetricDef(
        "cost",
        ("estimated_cost",),
        PerSample(operational.cost),
        "none",
        "sample",
        "prompt/1000 · prompt_per_1k + completion/1000 · completion_per_1k, priced by output.model",
        "Estimated cost per question from the config's pricing table (the sum is in 'operational').",
        binary=False,
        higher_is_better=False,
        fields=("output.tokens", "output.model"),
        upper=None,
    ),
)

_BY_FAMILY = {m.family: m for m in METRICS}
for _m in METRICS:
    register_family(
        _m.family, _m.aliases, qualified=_m.qualified, default_k=_m.cutoff == "default", param=_m.param
    )


@dataclass(frozen=True)
class ResolvedMetric:
    """A parsed name bound to its definition, and the name as the user typed it."""

    spec: MetricName
    definition: MetricDef
    requested: str = ""
    """The spelling asked for (``nDCG@10``, ``recip_rank``), as given; results are shown under it
    beside :attr:`name`, and provenance keeps it."""

    @property
    def name(self) -> str:
        """The canonical name (``ndcg@10``, ``mrr``, ``hit@k`` for a precedence-rule k)."""
        return str(self.spec)


def get_metric(family: str) -> MetricDef:
    """Return the definition of a canonical family name."""
    return _BY_FAMILY[family]


def resolve_metric(name: str) -> ResolvedMetric:
    """Parse ``name`` and check the cutoff and parameters against the metric's rules.

    >>> metric = resolve_metric("recip_rank")
    >>> metric.name, metric.requested
    ('mrr', 'recip_rank')
    """
    spec = parse_metric_name(name)
    definition = _BY_FAMILY[spec.family]
    if definition.cutoff == "none" and spec.k not in (None, ALL_K):
        raise MetricNameError(f"metric {name!r}: {definition.family} takes no cutoff")
    if spec.k == ALL_K:
        spec = dataclasses.replace(spec, k=None)
    elif definition.cutoff == "default" and spec.k is None:
        spec = dataclasses.replace(spec, k=DEFAULT_K)
    if spec.rel is not None and not (definition.binary and definition.needs == "relevant"):
        raise MetricNameError(
            f"metric {name!r}: {definition.family} takes no rel= (it does not read relevance levels)"
        )
    if spec.rel is not None and spec.rel < 1:
        raise MetricNameError(f"metric {name!r}: rel must be >= 1, got {spec.rel}")
    param = definition.param
    if param is not None and spec.param is None:
        if param.default is None:
            example = (
                f"{definition.family}_0.10" if param.suffix else f"{definition.family}({param.name}=0.5)"
            )
            raise MetricNameError(
                f"metric {name!r}: {definition.family} needs its {param.name}, e.g. {example}"
            )
        spec = dataclasses.replace(spec, param=param.default)
    return ResolvedMetric(spec, definition, name.strip())
