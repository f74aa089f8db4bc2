"""The peers' side of the benchmark: what a user of pytrec_eval or ranx writes.

    python bench/peers.py pytrec_eval QRELS RUN OUT.json
    python bench/peers.py ranx QRELS RUN OUT.json

Each prints one JSON line of timings on stdout (``parse``, ``evaluate``, ``dump``,
and for ranx ``evaluate_warm``, a second call with numba's code compiled) and
writes per-query values to OUT.json under ragmeter's metric names, so the
harness can compare numbers. ``dump`` (writing OUT.json) is not part of the
user's work: the harness subtracts it from the wall time.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

METRICS = ("ndcg@10", "recall@100", "precision@10", "mrr", "map")
PYTREC_MEASURES = {
    "ndcg@10": ("ndcg_cut.10", "ndcg_cut_10"),
    "recall@100": ("recall.100", "recall_100"),
    "precision@10": ("P.10", "P_10"),
    "mrr": ("recip_rank", "recip_rank"),
    "map": ("map", "map"),
}


def read_trec_dicts(
    qrels_path: str, run_path: str
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """The usual pytrec_eval user code: read both TREC files into nested dicts."""
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as handle:
        for line in handle:
            qid, _, docid, rel = line.split()
            qrels.setdefault(qid, {})[docid] = int(rel)
    run: dict[str, dict[str, float]] = {}
    with open(run_path) as handle:
        for line in handle:
            qid, _, docid, _, score, _ = line.split()
            run.setdefault(qid, {})[docid] = float(score)
    return qrels, run


def _pytrec_eval(qrels_path: str, run_path: str) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    started = time.perf_counter()
    import pytrec_eval

    qrels, run = read_trec_dicts(qrels_path, run_path)
    parsed = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {m for m, _ in PYTREC_MEASURES.values()})
    results = evaluator.evaluate(run)
    done = time.perf_counter()
    per_query = {
        qid: {name: values[key] for name, (_, key) in PYTREC_MEASURES.items()}
        for qid, values in results.items()
    }
    return per_query, {"parse": parsed - started, "evaluate": done - parsed}


def _ranx(qrels_path: str, run_path: str) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    started = time.perf_counter()
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    parsed = time.perf_counter()
    evaluate(qrels, run, list(METRICS), save_results_in_run=True)
    done = time.perf_counter()
    per_query: dict[str, dict[str, float]] = {}
    for name in METRICS:
        for qid, value in run.scores[name].items():
            per_query.setdefault(qid, {})[name] = float(value)
    warm = time.perf_counter()
    evaluate(qrels, run, list(METRICS))
    timings = {"parse": parsed - started, "evaluate": done - parsed}
    timings["evaluate_warm"] = time.perf_counter() - warm
    timings["untimed"] = time.perf_counter() - done  # collecting per-query values + the warm call
    return per_query, timings


def main() -> None:
    tool, qrels_path, run_path, out_path = sys.argv[1:5]
    runners = {"pytrec_eval": _pytrec_eval, "ranx": _ranx}
    per_query, timings = runners[tool](qrels_path, run_path)
    dump_started = time.perf_counter()
    with open(out_path, "w") as handle:
        json.dump(per_query, handle)
    dumped = time.perf_counter() - dump_started
    report: dict[str, Any] = {**timings, "dump": dumped + timings.pop("untimed", 0.0)}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
