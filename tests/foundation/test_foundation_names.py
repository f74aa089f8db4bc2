"""The metric name grammar: every accepted spelling parses to the right canonical name."""

from __future__ import annotations

import pytest

from ragmeter.errors import MetricNameError
from ragmeter.metrics.names import DEFAULT_K, MetricName, parse_metric_name
from ragmeter.metrics.registry import METRICS, resolve_metric

# spelling -> canonical name after resolution ("@k" = k by the precedence rule)
SPELLINGS = {
    # canonical
    "hit@5": "hit@5",
    "hit@1": "hit@1",
    "recall@10": "recall@10",
    "recall": "recall@k",
    "recall@all": "recall@all",
    "ndcg@all": "ndcg@all",
    "precision@10": "precision@10",
    "precision": "precision@k",
    "mrr": "mrr",
    "mrr@10": "mrr@10",
    "ndcg@10": "ndcg@10",
    "ndcg": "ndcg@k",
    "ndcg_harmonic": "ndcg_harmonic",
    "map": "map",
    "map@100": "map@100",
    "r-precision": "r-precision",
    "containment@3": "containment@3",
    "containment": "containment@k",
    "hit": "hit@k",
    # seed aliases (k by the precedence rule; MRR has none)
    "retrieval-hit-at-k": "hit@k",
    "retrieval-recall-at-k": "recall@k",
    "retrieval-precision-at-k": "precision@k",
    "retrieval-mrr": "mrr",
    "retrieval-ndcg-at-k": "ndcg@k",
    "answer-containment-at-k": "containment@k",
    "modified_precision": "modified_precision",  # a metric of its own (the value of recall with no cutoff)
    # trec_eval
    "P_10": "precision@10",
    "P.10": "precision@10",
    "P_5": "precision@5",
    "recall_100": "recall@100",
    "ndcg_cut_10": "ndcg@10",
    "ndcg_cut.10": "ndcg@10",
    "map_cut_100": "map@100",
    "success_1": "hit@1",
    "recip_rank": "mrr",
    "Rprec": "r-precision",
    # ranx / ir-measures
    "success@5": "hit@5",
    "hit_rate@5": "hit@5",
    "P@10": "precision@10",
    "nDCG@10": "ndcg@10",
    "NDCG@10": "ndcg@10",
    "RR": "mrr",
    "RR@10": "mrr@10",
    "AP": "map",
    "AP@100": "map@100",
    "R@100": "recall@100",
    "MAP": "map",
    "P(rel=2)@5": "precision(rel=2)@5",
    "AP(rel=2)": "map(rel=2)",
    "nDCG(dcg=exp-log2)@10": "ndcg_exp@10",
    "nDCG(dcg='exp-log2', cutoff=10)": "ndcg_exp@10",
    "ndcg_exp@10": "ndcg_exp@10",
    "ndcg_burges@10": "ndcg_exp@10",
    "dcg_burges@10": "dcg_exp@10",
    "Judged@10": "judged@10",
    "IPrec@0.1": "iprec_at_recall_0.10",
    "Bpref": "bpref",
    "BPref": "bpref",
    "infAP": "infap",
    "SetP": "set_p",
    "SetR": "set_recall",
    "SetF": "set_f",
    "SetF(beta=0.5)": "set_f(beta=0.5)",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
    "NumRet(rel=1)": "num_rel_ret(rel=1)",
    "Success@5": "hit@5",
    "MRR@10": "mrr@10",
    "hits@10": "hits@10",
    "f1@5": "f1@5",
    "ndcg_burges@5": "ndcg_exp@5",
    "precision@5-l2": "precision(rel=2)@5",
    "map@100-l3": "map(rel=3)@100",
    "hit_rate@10": "hit@10",
    # trec_eval measures new in eval
    "set_P": "set_p",
    "set_recall": "set_recall",
    "set_F": "set_f",
    "set_F.0.5": "set_f(beta=0.5)",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "bpref": "bpref",
    "gm_map": "gm_map",
    "gm_bpref": "gm_bpref",
    "iprec_at_recall_0.10": "iprec_at_recall_0.10",
    "iprec_at_recall.0.1": "iprec_at_recall_0.10",
    "success_10": "hit@10",
    "map_cut_1000": "map@1000",
    "Rprec_mult_0.20": "rprec_mult_0.20",
    "Rprec_mult.2.0": "rprec_mult_2.00",
    # other documented aliases
    "recall_any@5": "hit@5",
    "r_precision": "r-precision",
    "ndcg-harmonic": "ndcg_harmonic",
    " ndcg@10 ": "ndcg@10",
}


@pytest.mark.parametrize(("spelling", "canonical"), list(SPELLINGS.items()))
def test_spelling_resolves_to_canonical_name(spelling: str, canonical: str) -> None:
    assert resolve_metric(spelling).name == canonical


@pytest.mark.parametrize(
    ("spelling", "parsed"),
    [
        ("nDCG@10", MetricName("ndcg", 10)),
        ("P_5", MetricName("precision", 5)),
        ("recip_rank", MetricName("mrr", None)),
        ("retrieval-hit-at-k", MetricName("hit", DEFAULT_K)),
        ("retrieval-mrr", MetricName("mrr", None)),
        ("map", MetricName("map", None)),
        ("ndcg", MetricName("ndcg", None)),  # the registry, not the parser, applies the k rule
    ],
)
def test_parse_metric_name_values(spelling: str, parsed: MetricName) -> None:
    assert parse_metric_name(spelling) == parsed


def test_every_registry_family_and_alias_parses_to_its_family() -> None:
    for metric in METRICS:
        if metric.param is not None and metric.param.default is None:
            continue  # needs its parameter: see test_families_with_a_parameter
        for spelling in (metric.family, *metric.aliases):
            assert resolve_metric(spelling).spec.family == metric.family, spelling
            assert resolve_metric(spelling.upper()).spec.family == metric.family, spelling
            if metric.cutoff != "none":
                assert resolve_metric(f"{spelling}@7").name == f"{metric.family}@7", spelling


def test_every_trec_name_in_the_registry_parses_back() -> None:
    for metric in METRICS:
        if metric.trec_name:
            spelling = metric.trec_name.format(k=12, param="0.30")
            expected = (
                f"{metric.family}@12"
                if "{k}" in metric.trec_name
                else f"{metric.family}_0.30"
                if "{param}" in metric.trec_name
                else metric.family
            )
            assert resolve_metric(spelling).name == expected, spelling


def _round_trip_cases() -> list[object]:
    cases: list[object] = []
    for metric in METRICS:
        if metric.param is not None and metric.param.default is None:
            cases.append(pytest.param(f"{metric.family}_0.25", id=f"{metric.family}_0.25"))
            continue
        if metric.cutoff != "none":
            cases.append(pytest.param(f"{metric.family}@3", id=f"{metric.family}@3"))
            cases.append(pytest.param(f"{metric.family}@all", id=f"{metric.family}@all"))
        cases.append(pytest.param(metric.family, id=metric.family))
        if metric.binary and metric.needs == "relevant":
            cases.append(pytest.param(f"{metric.family}(rel=2)", id=f"{metric.family}(rel=2)"))
    return cases


@pytest.mark.parametrize("spelling", _round_trip_cases())
def test_canonical_name_parses_back_to_the_same_metric(spelling: str) -> None:
    resolved = resolve_metric(spelling)
    assert resolve_metric(resolved.name).spec == resolved.spec


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ndgc@10", "unknown metric 'ndgc@10'; did you mean 'ndcg@10'?"),
        ("precison@10", "unknown metric 'precison@10'; did you mean 'precision@10'?"),
        ("mrrr", "unknown metric 'mrrr'; did you mean 'mrr'?"),
        ("hitt@10", "unknown metric 'hitt@10'; did you mean 'hit@10'?"),
        ("recal@5", "unknown metric 'recal@5'; did you mean 'recall@5'?"),
        ("bleu", "unknown metric 'bleu'; run 'ragmeter metrics' for the list"),
        ("recip_rank@3", "unknown metric 'recip_rank@3'; did you mean 'mrr@3'?"),
    ],
)
def test_unknown_names_suggest_a_close_one(name: str, message: str) -> None:
    with pytest.raises(MetricNameError) as exc:
        resolve_metric(name)
    assert str(exc.value) == message


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ndcg@0", "metric 'ndcg@0': the cutoff k must be >= 1, got 0"),
        ("ndcg@-1", "metric 'ndcg@-1': the cutoff k must be >= 1, got -1"),
        ("P_0", "metric 'P_0': the cutoff k must be >= 1, got 0"),
        ("success_0", "metric 'success_0': the cutoff k must be >= 1, got 0"),
        ("mrr@0", "metric 'mrr@0': the cutoff k must be >= 1, got 0"),
        ("ndcg@x", "metric 'ndcg@x': the cutoff after '@' must be a whole number, 'k' or 'all', got 'x'"),
        (
            "ndcg@1.5",
            "metric 'ndcg@1.5': the cutoff after '@' must be a whole number, 'k' or 'all', got '1.5'",
        ),
        ("ndcg@", "metric 'ndcg@' does not parse: expected NAME or NAME@K"),
        ("ndcg@5@3", "metric 'ndcg@5@3' does not parse: expected NAME or NAME@K"),
        ("r-precision@5", "metric 'r-precision@5': r-precision takes no cutoff"),
        ("Rprec@5", "metric 'Rprec@5': r-precision takes no cutoff"),
        ("", "empty metric name"),
        ("   ", "empty metric name"),
    ],
)
def test_bad_cutoffs_and_names_are_errors(name: str, message: str) -> None:
    with pytest.raises(MetricNameError) as exc:
        resolve_metric(name)
    assert str(exc.value) == message


def test_str_of_a_metric_name() -> None:
    assert str(MetricName("ndcg", 10)) == "ndcg@10"
    assert str(MetricName("mrr")) == "mrr"
    assert str(MetricName("hit", DEFAULT_K)) == "hit@k"


@pytest.mark.parametrize("spelling", ["hit@k", "ndcg@k", "precision@k", "containment@k", "Recall@K"])
def test_at_k_spelled_out_means_k_by_precedence(spelling: str) -> None:
    family = spelling.split("@")[0].lower()
    assert resolve_metric(spelling).spec == MetricName(family, DEFAULT_K)
