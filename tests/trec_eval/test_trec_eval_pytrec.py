"""``ragmeter trec_eval`` and ``ragmeter eval`` against pytrec_eval on random, tie-heavy runs.

pytrec_eval (pytrec-eval-terrier) bundles a 9.x trec_eval: every measure both have must agree
per topic to the last bit, except ``iprec_at_recall`` and ``11pt_avg``, where 10.0 rounds the
recall cutoff with ``lround`` (9.x added 0.9 and truncated); those are checked against a
pytrec_eval-free reference in ``test_foundation_properties.py`` and the oracle files.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

pytrec_eval = pytest.importorskip("pytrec_eval")

from ragmeter.api import evaluate_trec  # noqa: E402
from ragmeter.evaluation.trec_eval import TrecEvalOptions, trec_eval  # noqa: E402

SHARED = tuple(
    [
        "map",
        "P",
        "recall",
        "ndcg",
        "ndcg_cut",
        "map_cut",
        "Rprec",
        "recip_rank",
        "bpref",
        "infAP",
        "set_P",
        "set_recall",
        "set_F",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "success",
        "Rprec_mult",
        "relative_P",
        "binG",
        "G",
        "ndcg_rel",
        "Rndcg",
        "utility",
        "set_map",
        "set_relative_P",
        "num_nonrel_judged_ret",
    ]
)


def random_files(
    seed: int, tmp: Path
) -> tuple[Path, Path, dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded qrels (-1..3, some topics without relevant documents) and a run full of tied scores."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for t in range(25):
        topic = f"q{t:02d}"
        docs = [f"d{i}" for i in range(rng.randint(5, 60))]
        judged = rng.sample(docs, rng.randint(1, len(docs)))
        grades = [-1, 0, 0, 1, 2, 3] if t % 5 else [-1, 0]
        qrels[topic] = {d: rng.choice(grades) for d in judged}
        ranked = rng.sample(docs, rng.randint(1, len(docs)))
        run[topic] = {d: float(rng.choice([1, 2, 2, 3, 3, 3, 4.5])) for d in ranked}
    run["extra"] = {"d1": 1.0}  # a topic without judgments: ignored by both
    q_path, r_path = tmp / f"qrels{seed}", tmp / f"run{seed}"
    q_path.write_text("".join(f"{t} 0 {d} {g}\n" for t, docs in qrels.items() for d, g in docs.items()))
    r_path.write_text(
        "".join(
            f"{t} Q0 {d} {i} {s} tag\n" for t, docs in run.items() for i, (d, s) in enumerate(docs.items())
        )
    )
    return q_path, r_path, qrels, run


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_trec_eval_command_equals_pytrec_eval(seed: int, level: int, tmp_path: Path) -> None:
    q_path, r_path, qrels, run = random_files(seed, tmp_path)
    report = trec_eval(
        q_path, r_path, TrecEvalOptions(measures=SHARED, per_query=True, relevance_level=level)
    )
    theirs = pytrec_eval.RelevanceEvaluator(qrels, set(SHARED), relevance_level=level).evaluate(run)
    compared = 0
    for t, topic in enumerate(report.topics):
        for value in report.values:
            want = theirs[topic][value.name]
            got = float(report.per_topic[value.name][t])
            assert got == want, (topic, value.name, got, want)
            compared += 1
    assert compared >= 25 * 60


@pytest.mark.parametrize("seed", [3, 4])
def test_eval_metrics_equal_pytrec_eval(seed: int, tmp_path: Path) -> None:
    """The same trec_eval measures through ``ragmeter eval``'s names (trec_compat: all topics scored)."""
    q_path, r_path, qrels, run = random_files(seed, tmp_path)
    names = {
        "map": "map",
        "bpref": "bpref",
        "infAP": "infap",
        "set_P": "set_p",
        "set_recall": "set_recall",
        "set_F": "set_f",
        "num_ret": "num_ret",
        "num_rel": "num_rel",
        "num_rel_ret": "num_rel_ret",
        "success_5": "hit@5",
        "map_cut_10": "map@10",
        "Rprec_mult_0.20": "rprec_mult_0.20",
        "Rprec_mult_2.00": "rprec_mult_2.00",
        "ndcg_cut_10": "ndcg@10",
        "ndcg": "ndcg@all",
        "P_5": "precision@5",
        "recall_100": "recall@100",
        "recip_rank": "mrr",
        "Rprec": "r-precision",
    }
    result = evaluate_trec(q_path, r_path, metrics=list(names.values()), trec_compat=True)
    measures = {re.sub(r"_[0-9.]+$", "", name) for name in names}  # success_5 -> success
    theirs = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for trec_name, ours in names.items():
        for topic, values in result.per_query.items():
            assert values[ours] == pytest.approx(theirs[topic][trec_name], abs=1e-12), (topic, trec_name)
        per_topic = [theirs[t][trec_name] for t in result.per_query]
        summed = ours.startswith("num_")
        want = sum(per_topic) if summed else float(np.mean(per_topic))
        assert result.aggregate[ours] == pytest.approx(want, abs=1e-12), trec_name


def test_gm_map_is_a_geometric_mean_with_trec_evals_floor(tmp_path: Path) -> None:
    q_path, r_path, qrels, run = random_files(5, tmp_path)
    result = evaluate_trec(q_path, r_path, metrics=["gm_map", "map"], trec_compat=True)
    aps = [pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)[t]["map"] for t in result.per_query]
    assert [v["gm_map"] for v in result.per_query.values()] == pytest.approx(aps, abs=1e-12)  # plain values
    want = float(np.exp(np.mean(np.log(np.maximum(aps, 0.00001)))))
    assert result.aggregate["gm_map"] == pytest.approx(want, rel=1e-12)
    report = trec_eval(q_path, r_path, TrecEvalOptions(measures=["gm_map"]))
    assert report.summary["gm_map"] == pytest.approx(want, rel=1e-12)
