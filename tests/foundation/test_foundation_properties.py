"""Invariants over the registry's ranking and text metrics, with hypothesis.

The metrics covered are every registry entry whose kernel reads gains per rank or retrieved
texts (``needs`` "relevant" or "answer"); a new one is picked up automatically and must get a
reference implementation below. Per-sample whole-RAG and operational metrics
(``needs="sample"``) read other fields and are tested with their own modules.

For each covered metric:
- values lie in [0, 1];
- the ideal ranking (ground truth by gain descending, then the rest) scores at least as well as
  any permutation of it;
- permuting the samples, the keys of an ``expected_output`` map, and swapping container types
  gives identical per-query numbers;
- the vectorised kernels equal the plain per-query Python references written here (the
  independent oracle for ``ndcg_harmonic`` and ``containment``).
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragmeter
from ragmeter.config import RagmeterConfig
from ragmeter.errors import InputError
from ragmeter.metrics.registry import METRICS, MetricDef, resolve_metric
from ragmeter.results import EvalResult

TOL = 1e-12
FALLBACK_K = 5
COVERED: tuple[MetricDef, ...] = tuple(m for m in METRICS if m.needs in ("relevant", "answer"))
SETTINGS = settings(
    max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)


# --- reference implementations: one plain function per metric family -------------------------------


@dataclass
class Query:
    """One query as the references see it: unique ranked ids, graded truth, texts, answers."""

    ranked: list[str]
    gains: dict[str, float]
    texts: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)

    def relevant(self, level: float | None) -> set[str]:
        return {d for d, g in self.gains.items() if (g >= level if level is not None else g > 0)}


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def ref_hit(q: Query, k: int | None, level: float | None) -> float:
    rel = q.relevant(level)
    return 1.0 if any(d in rel for d in q.ranked[:k]) else 0.0


def ref_recall(q: Query, k: int | None, level: float | None) -> float:
    rel = q.relevant(level)
    return sum(d in rel for d in q.ranked[:k]) / len(rel) if rel else 0.0


def ref_modified_precision(q: Query, k: int | None, level: float | None) -> float:
    """The QA document's modified precision: relevant items anywhere in the returned list, over all relevant."""
    rel = q.relevant(level)
    return len(set(rel) & set(q.ranked)) / len(rel) if rel else 0.0


def ref_precision(q: Query, k: int | None, level: float | None) -> float:
    rel = q.relevant(level)
    depth = k if k is not None else len(q.ranked)
    return sum(d in rel for d in q.ranked[:k]) / depth if depth else 0.0


def ref_mrr(q: Query, k: int | None, level: float | None) -> float:
    rel = q.relevant(level)
    for rank, d in enumerate(q.ranked[:k], start=1):
        if d in rel:
            return 1.0 / rank
    return 0.0


def ref_ndcg(q: Query, k: int | None, level: float | None) -> float:
    dcg = sum(max(q.gains.get(d, 0.0), 0.0) / math.log2(i + 1) for i, d in enumerate(q.ranked[:k], start=1))
    ideal = sorted((g for g in q.gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def ref_ndcg_harmonic(q: Query, k: int | None, level: float | None) -> float:
    rel = q.relevant(level)
    dcg = sum(1.0 / i for i, d in enumerate(q.ranked[:k], start=1) if d in rel)
    ideal = sum(1.0 / i for i in range(1, len(rel) + 1))
    return dcg / ideal if ideal > 0 else 0.0


def ref_map(q: Query, k: int | None, level: float | None) -> float:
    rel = q.relevant(level)
    found, total = 0, 0.0
    for rank, d in enumerate(q.ranked[:k], start=1):
        if d in rel:
            found += 1
            total += found / rank
    return total / len(rel) if rel else 0.0


def ref_r_precision(q: Query, k: int | None, level: float | None) -> float:
    rel = q.relevant(level)
    return sum(d in rel for d in q.ranked[: len(rel)]) / len(rel) if rel else 0.0


def ref_containment(q: Query, k: int | None, level: float | None) -> float:
    wanted = [_norm(a) for a in q.answers if _norm(a)]
    return 1.0 if any(a in _norm(t) for t in q.texts[:k] for a in wanted) else 0.0


def ref_hits(q: Query, k: int | None, level: float | None) -> float:
    rel = q.relevant(level)
    return float(sum(d in rel for d in q.ranked[:k]))


def ref_f1(q: Query, k: int | None, level: float | None) -> float:
    p, r = ref_precision(q, k, level), ref_recall(q, k, level)
    return 2 * p * r / (p + r) if p + r > 0 else 0.0


def _dcg(gains: list[float]) -> float:
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1) if g > 0)


def ref_dcg(q: Query, k: int | None, level: float | None) -> float:
    return _dcg([q.gains.get(d, 0.0) for d in q.ranked[:k]])


def ref_dcg_exp(q: Query, k: int | None, level: float | None) -> float:
    return _dcg([2 ** q.gains.get(d, 0.0) - 1 for d in q.ranked[:k]])


def ref_ndcg_exp(q: Query, k: int | None, level: float | None) -> float:
    ideal = sorted((2**g - 1 for g in q.gains.values() if g > 0), reverse=True)[:k]
    idcg = _dcg(ideal)
    return ref_dcg_exp(q, k, level) / idcg if idcg > 0 else 0.0


def ref_set_p(q: Query, k: int | None, level: float | None) -> float:
    return ref_hits(q, None, level) / len(q.ranked) if q.ranked else 0.0


def ref_set_recall(q: Query, k: int | None, level: float | None) -> float:
    return ref_recall(q, None, level)


def ref_set_f(q: Query, k: int | None, level: float | None, beta: float = 1.0) -> float:
    p, r = ref_set_p(q, k, level), ref_set_recall(q, k, level)
    return (beta + 1) * p * r / (beta * p + r) if ref_hits(q, None, level) else 0.0


def ref_num_ret(q: Query, k: int | None, level: float | None) -> float:
    return float(len(q.ranked))


def ref_num_rel(q: Query, k: int | None, level: float | None) -> float:
    return float(len(q.relevant(level)))


def ref_num_rel_ret(q: Query, k: int | None, level: float | None) -> float:
    return ref_hits(q, None, level)


def ref_bpref(q: Query, k: int | None, level: float | None) -> float:
    """Buckley & Voorhees; judged non-relevant = listed with a gain >= 0 below the level."""
    rel = q.relevant(level)
    nonrel = {d for d, g in q.gains.items() if g >= 0 and d not in rel}
    above, total = 0, 0.0
    for d in q.ranked:
        if d in nonrel:
            above += 1
        elif d in rel:
            total += 1 - min(above, len(rel)) / min(len(nonrel), len(rel)) if above else 1.0
    return total / len(rel) if rel else 0.0


def ref_infap(q: Query, k: int | None, level: float | None) -> float:
    """Yilmaz & Aslam's inferred AP as trec_eval computes it (gain < 0: pooled, not judged)."""
    rel = q.relevant(level)
    eps = 0.00001
    found = nonrel = pooled = 0
    total = 0.0
    for j, d in enumerate(q.ranked):
        if d not in q.gains:
            continue
        if q.gains[d] < 0:
            pooled += 1
        elif d not in rel:
            nonrel += 1
        else:
            found += 1
            if j == 0:
                total += 1.0
            else:
                before = found - 1
                total += 1 / (j + 1) + (j / (j + 1)) * ((before + nonrel + pooled) / j) * (
                    (before + eps) / (before + nonrel + 2 * eps)
                )
    return total / len(rel) if rel else 0.0


def ref_judged(q: Query, k: int | None, level: float | None) -> float:
    top = q.ranked[:k]
    return sum(d in q.gains for d in top) / len(top) if top else 0.0


def _lround(x: float) -> int:
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def ref_iprec_at_recall(q: Query, k: int | None, level: float | None, recall: float = 0.4) -> float:
    """The best precision at or after the rank where lround(recall * R) relevant items are found."""
    rel = q.relevant(level)
    ranks = [i for i, d in enumerate(q.ranked, start=1) if d in rel]
    precisions = [n / rank for n, rank in enumerate(ranks, start=1)]
    cut = _lround(recall * len(rel))
    if cut > len(ranks) or not ranks:
        return 0.0
    return max(precisions[max(cut, 1) - 1 :])


def ref_rprec_mult(q: Query, k: int | None, level: float | None, multiple: float = 1.5) -> float:
    rel = q.relevant(level)
    cut = int(multiple * len(rel) + 0.9)
    return sum(d in rel for d in q.ranked[:cut]) / cut if cut else 0.0


REFERENCE: dict[str, Callable[[Query, int | None, float | None], float]] = {
    "hit": ref_hit,
    "recall": ref_recall,
    "modified_precision": ref_modified_precision,
    "precision": ref_precision,
    "mrr": ref_mrr,
    "ndcg": ref_ndcg,
    "ndcg_harmonic": ref_ndcg_harmonic,
    "map": ref_map,
    "gm_map": ref_map,
    "r-precision": ref_r_precision,
    "ndcg_exp": ref_ndcg_exp,
    "dcg": ref_dcg,
    "dcg_exp": ref_dcg_exp,
    "hits": ref_hits,
    "f1": ref_f1,
    "set_p": ref_set_p,
    "set_recall": ref_set_recall,
    "set_f": ref_set_f,
    "num_ret": ref_num_ret,
    "num_rel": ref_num_rel,
    "num_rel_ret": ref_num_rel_ret,
    "bpref": ref_bpref,
    "gm_bpref": ref_bpref,
    "infap": ref_infap,
    "judged": ref_judged,
    "iprec_at_recall": ref_iprec_at_recall,
    "rprec_mult": ref_rprec_mult,
    "containment": ref_containment,
}
PLAIN_NAME = {"iprec_at_recall": "iprec_at_recall_0.40", "rprec_mult": "rprec_mult_1.50"}
"""How the tests name a family whose own parameter must be given (the references' defaults)."""
UNBOUNDED = {m.family for m in COVERED if m.upper is None}
"""Families whose values are not shares (counts, unnormalised DCG): the registry says so."""


def reference_aggregate(family: str, scored: list[float]) -> float | None:
    """The aggregate the registry declares: a mean, a sum, or a floored geometric mean."""
    if not scored:
        return None
    kind = next(m.aggregate for m in COVERED if m.family == family)
    if kind == "sum":
        return sum(scored)
    if kind == "geometric":
        return math.exp(sum(math.log(max(v, 0.00001)) for v in scored) / len(scored))
    return sum(scored) / len(scored)


def test_every_covered_metric_has_a_reference_implementation() -> None:
    missing = [m.family for m in COVERED if m.family not in REFERENCE]
    assert not missing, f"add a reference implementation to this file for: {missing}"
    # "judge" metrics read precomputed verdicts; their properties: tests/judge_eval/test_judge_eval_metrics.py
    assert {m.needs for m in METRICS} <= {"relevant", "answer", "sample", "judge"}, (
        "a new kind of metric input: extend the property tests"
    )
    assert len(COVERED) >= 27


# --- strategies -------------------------------------------------------------------------------------

POOL = [f"d{i}" for i in range(7)]
GAINS = [-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]
ANSWERS = ["30 days", "straße", "the file", "refund", "  30   DAYS "]
TEXT_PIECES = [
    "Refund\u00a0policy",
    "30\n days",
    "STRASSE 5",
    "Ｔｈｅ ﬁle",
    "nothing here",
    "30days",
    "the\tfile",
]


@dataclass
class Case:
    """A generated dataset: sample dicts, outputs by id (None = missing) and options."""

    samples: list[dict[str, Any]]
    outputs: dict[str, list[dict[str, Any]] | None]
    k: int | None
    level: float | None
    trec_compat: bool
    cutoffs: dict[str, int]

    def metric_names(self) -> list[str]:
        names: list[str] = []
        for m in COVERED:
            names.append(PLAIN_NAME.get(m.family, m.family))
            if m.cutoff != "none":
                names.append(f"{m.family}@{self.cutoffs[m.family]}")
        return names

    def evaluate(self, samples: list[dict[str, Any]] | None = None, outputs: Any = None) -> EvalResult:
        outs = outputs if outputs is not None else {q: o for q, o in self.outputs.items() if o is not None}
        return ragmeter.evaluate(
            samples if samples is not None else self.samples,
            outs,
            metrics=self.metric_names(),
            k=self.k,
            relevance_level=self.level,
            trec_compat=self.trec_compat,
            config=RagmeterConfig(),
        )


@st.composite
def truths(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["none", "empty", "list", "map", "map"]))
    if kind == "none":
        return None
    if kind == "empty":
        return draw(st.sampled_from([[], {}]))
    ids = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=5, unique=True))
    if kind == "list":
        return ids
    return {d: draw(st.sampled_from(GAINS)) for d in ids}


@st.composite
def cases(draw: st.DrawFn, *, ideal_texts: bool = False) -> Case:
    n = draw(st.integers(1, 5))
    samples: list[dict[str, Any]] = []
    outputs: dict[str, list[dict[str, Any]] | None] = {}
    for i in range(n):
        qid = f"q{i}"
        sample: dict[str, Any] = {"id": qid}
        truth = draw(truths())
        if truth is not None:
            sample["expected_output"] = truth
        metadata: dict[str, Any] = {}
        if draw(st.booleans()):
            metadata["k"] = draw(st.integers(1, 6))
        if draw(st.booleans()):
            metadata["expected_answer"] = draw(
                st.one_of(
                    st.sampled_from(ANSWERS), st.lists(st.sampled_from(ANSWERS), min_size=1, max_size=2)
                )
            )
        if metadata:
            sample["metadata"] = metadata
        samples.append(sample)
        if draw(st.integers(0, 5)) == 0:
            outputs[qid] = None  # no recorded output
            continue
        ranked = draw(st.lists(st.sampled_from(POOL), max_size=7, unique=True))
        outputs[qid] = [{"id": d, "text": draw(st.sampled_from(TEXT_PIECES))} for d in ranked]
    return Case(
        samples=samples,
        outputs=outputs,
        k=draw(st.one_of(st.none(), st.integers(1, 6))),
        level=draw(st.sampled_from([None, None, 0.5, 1.0, 2.0])),
        trec_compat=draw(st.booleans()),
        cutoffs={m.family: draw(st.integers(1, 7)) for m in COVERED if m.cutoff != "none"},
    )


def _query(sample: dict[str, Any], output: list[dict[str, Any]] | None) -> Query:
    truth = sample.get("expected_output")
    gains = dict.fromkeys(truth, 1.0) if isinstance(truth, (list, tuple)) else dict(truth or {})
    items = output or []
    answer = sample.get("metadata", {}).get("expected_answer")
    answers = [] if answer is None else [answer] if isinstance(answer, str) else list(answer)
    return Query([it["id"] for it in items], gains, [it["text"] for it in items], answers)


def expected_values(case: Case) -> dict[str, dict[str, float | None]]:
    """Per query, per result name: what the references say (None = unscored)."""
    sample_k = [s.get("metadata", {}).get("k") for s in case.samples]
    default_k = case.k if case.k is not None else FALLBACK_K
    ks = [sk if sk is not None else default_k for sk in sample_k]
    out: dict[str, dict[str, float | None]] = {s["id"]: {} for s in case.samples}
    for m in COVERED:
        requests: list[tuple[str, list[int | None]]] = []
        if m.cutoff == "none":
            requests.append((str(resolve_metric(PLAIN_NAME.get(m.family, m.family)).spec), [None] * len(ks)))
        else:
            explicit = case.cutoffs[m.family]
            requests.append((f"{m.family}@{explicit}", [explicit] * len(ks)))
            if m.cutoff == "optional":
                requests.append((m.family, [None] * len(ks)))
            elif any(sk is not None for sk in sample_k) and len(set(ks)) > 1:
                requests.append((f"{m.family}@k", list(ks)))
            else:
                requests.append((f"{m.family}@{ks[0]}", list(ks)))
        for name, per_query_k in requests:
            for sample, k in zip(case.samples, per_query_k, strict=True):
                q = _query(sample, case.outputs[sample["id"]])
                if m.needs == "answer":
                    scorable = bool(q.answers)
                else:
                    scorable = case.trec_compat or bool(q.relevant(case.level))
                value = REFERENCE[m.family](q, k, case.level) if scorable else None
                previous = out[sample["id"]].get(name)
                assert previous is None or value is None or abs(previous - value) <= TOL
                out[sample["id"]][name] = value
    return out


# --- the properties ---------------------------------------------------------------------------------


@SETTINGS
@given(cases())
def test_vectorised_kernels_equal_the_reference_implementations(case: Case) -> None:
    result = case.evaluate()
    want = expected_values(case)
    assert set(result.per_query) == set(want)
    for qid, values in want.items():
        got = result.per_query[qid]
        assert set(got) == set(values), qid
        for name, value in values.items():
            if value is None:
                assert got[name] is None, (qid, name, got[name])
            else:
                assert got[name] is not None, (qid, name)
                assert abs(got[name] - value) <= TOL, (qid, name, got[name], value)
    for name in result.aggregate:
        scored = [v[name] for v in want.values() if v[name] is not None]
        mean = reference_aggregate(resolve_metric(name).spec.family, scored)
        assert result.n_scored[name] == len(scored)
        assert result.n_skipped[name] == len(want) - len(scored)
        assert (result.aggregate[name] is None) == (mean is None)
        if mean is not None:
            assert result.aggregate[name] == pytest.approx(mean, abs=TOL)
    assert result.n_missing_output == sum(o is None for o in case.outputs.values())


@SETTINGS
@given(cases())
def test_values_lie_in_the_unit_interval(case: Case) -> None:
    assert {"dcg", "dcg_exp", "hits", "num_ret", "num_rel", "num_rel_ret"} == UNBOUNDED
    result = case.evaluate()
    for values in result.per_query.values():
        for name, value in values.items():
            if resolve_metric(name).spec.family not in UNBOUNDED:
                assert value is None or 0.0 <= value <= 1.0, (name, value)
    for name, value in result.aggregate.items():
        if resolve_metric(name).spec.family not in UNBOUNDED:
            assert value is None or 0.0 <= value <= 1.0, (name, value)


@st.composite
def ideal_and_permuted(draw: st.DrawFn) -> tuple[Case, Case]:
    """The same queries twice: ranked ideally, and ranked by a random permutation of that list."""
    n = draw(st.integers(1, 4))
    samples: list[dict[str, Any]] = []
    ideal: dict[str, list[dict[str, Any]] | None] = {}
    permuted: dict[str, list[dict[str, Any]] | None] = {}
    for i in range(n):
        qid = f"q{i}"
        truth_ids = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=5, unique=True))
        truth = {d: draw(st.sampled_from(GAINS)) for d in truth_ids}
        extras = draw(st.lists(st.sampled_from([d for d in POOL if d not in truth]), unique=True))
        order = sorted(truth, key=lambda d: -truth[d]) + extras
        # texts agree with relevance: relevant items hold the answer, the others do not
        items = [{"id": d, "text": "it is 30 days" if truth.get(d, 0) > 0 else "nothing here"} for d in order]
        sample: dict[str, Any] = {
            "id": qid,
            "expected_output": truth,
            "metadata": {"expected_answer": "30 DAYS"},
        }
        if draw(st.booleans()):
            sample["metadata"]["k"] = draw(st.integers(1, 6))
        samples.append(sample)
        ideal[qid] = items
        permuted[qid] = draw(st.permutations(items))
    common = {
        "k": draw(st.one_of(st.none(), st.integers(1, 6))),
        "level": draw(st.sampled_from([None, 0.5, 1.0, 2.0])),
        "trec_compat": draw(st.booleans()),
        "cutoffs": {m.family: draw(st.integers(1, 7)) for m in COVERED if m.cutoff != "none"},
    }
    return Case(samples, ideal, **common), Case(samples, permuted, **common)


@SETTINGS
@given(ideal_and_permuted())
def test_the_ideal_ranking_scores_at_least_as_well_as_any_permutation(pair: tuple[Case, Case]) -> None:
    ideal_case, permuted_case = pair
    best, other = ideal_case.evaluate(), permuted_case.evaluate()
    better = {m.family: m.higher_is_better for m in COVERED}
    for qid, values in best.per_query.items():
        for name, value in values.items():
            family = resolve_metric(name).spec.family
            compared = other.per_query[qid][name]
            assert (value is None) == (compared is None)
            if value is None or compared is None:
                continue
            if better[family]:
                assert value >= compared - TOL, (qid, name, value, compared)
            else:
                assert value <= compared + TOL, (qid, name, value, compared)


def _as_json_string(items: list[dict[str, Any]]) -> Any:
    return json.dumps({"retrieved": items})


@SETTINGS
@given(cases(), st.data())
def test_input_order_and_container_types_do_not_change_the_numbers(case: Case, data: st.DataObject) -> None:
    base = case.evaluate()
    # 1. the order of the samples and of the outputs
    order = data.draw(st.permutations(range(len(case.samples))))
    samples = [case.samples[i] for i in order]
    # 2. the key order of graded maps; 3. binary truth as list, tuple or {id: 1} map
    rewritten: list[dict[str, Any]] = []
    for sample in samples:
        truth = sample.get("expected_output")
        new = dict(sample)
        if isinstance(truth, dict):
            keys = data.draw(st.permutations(list(truth)))
            new["expected_output"] = {d: truth[d] for d in keys}
        elif isinstance(truth, list) and truth:
            form = data.draw(st.sampled_from(["tuple", "map", "reversed"]))
            new["expected_output"] = (
                tuple(truth) if form == "tuple" else dict.fromkeys(truth, 1) if form == "map" else truth[::-1]
            )
        rewritten.append(new)
    # 4. output containers: {"retrieved": list}, {"retrieved": tuple}, the JSON string form
    outputs: dict[str, Any] = {}
    for sample in reversed(samples):
        items = case.outputs[sample["id"]]
        if items is None:
            continue
        form = data.draw(st.sampled_from(["list", "tuple", "json"]))
        outputs[sample["id"]] = (
            {"retrieved": list(items)}
            if form == "list"
            else {"retrieved": tuple(items)}
            if form == "tuple"
            else _as_json_string(items)
        )
    other = case.evaluate(rewritten, outputs)
    assert other.per_query == base.per_query
    assert other.n_scored == base.n_scored and other.n_skipped == base.n_skipped
    assert set(other.aggregate) == set(base.aggregate)
    for name, value in base.aggregate.items():
        assert other.aggregate[name] == (value if value is None else pytest.approx(value, abs=TOL))


def test_a_tuple_of_ids_is_an_output_like_a_list() -> None:
    sample = [{"id": "q", "expected_output": ["b"]}]
    as_list = ragmeter.evaluate(sample, {"q": ["a", "b"]}, metrics=["mrr"], config=RagmeterConfig())
    try:
        as_tuple = ragmeter.evaluate(sample, {"q": ("a", "b")}, metrics=["mrr"], config=RagmeterConfig())
    except InputError as exc:
        pytest.fail(f"tuple output rejected: {exc}")
    assert as_tuple.per_query == as_list.per_query
