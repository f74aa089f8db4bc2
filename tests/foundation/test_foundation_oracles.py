"""Agreement with external oracles on random, tie-heavy TREC data.

pytrec_eval (pytrec-eval-terrier: a trec_eval 9.x build) on runs whose scores come from a few
values, so ties are everywhere and trec_eval's tie-breaking (score descending, then docno in
descending byte order) decides the ranking; qrels graded 0..3 with some -1 judgments; topics
without relevant documents; run topics without judgments and judged topics without run lines.
None of the 9.x/10.0 differences listed in ``shared/oracle/trec_eval/README.md`` touch the
measures compared here.

ranx breaks ties by insertion order, so it is compared only on runs whose scores are distinct
within each query (a tied run does disagree with it). It runs in a child process with numba's JIT
off (see ``ranx_results``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

import ragmeter
from ragmeter.metrics.registry import resolve_metric

TOL = 1e-12
CUTOFFS = (1, 3, 5, 10)
TREC_MEASURES = {
    "P": [f"P_{k}" for k in CUTOFFS],
    "recall": [f"recall_{k}" for k in CUTOFFS],
    "recip_rank": ["recip_rank"],
    "ndcg_cut": [f"ndcg_cut_{k}" for k in CUTOFFS],
    "map": ["map"],
    "map_cut": [f"map_cut_{k}" for k in CUTOFFS],
    "Rprec": ["Rprec"],
    "success": [f"success_{k}" for k in CUTOFFS],
}
PYTREC_REQUEST = {
    f"{stem}.{','.join(map(str, CUTOFFS))}" if len(names) > 1 else stem
    for stem, names in TREC_MEASURES.items()
}
TREC_NAMES = [name for names in TREC_MEASURES.values() for name in names]
# docnos whose byte order differs from their "natural" order: ties are broken on these
POOL = [f"d{i}" for i in range(24)] + ["D7", "doc-10", "d1x", "Z", "a", "é5", "d-1"]
# one score value, several spellings: ties are between doubles, not strings
SCORE_SPELLINGS = {
    0.0: ["0", "0.0", "-0", "0e5"],
    0.5: ["0.5", ".5", "5e-1", "0.50"],
    1.0: ["1", "1.0", "1.00", "1e0"],
    2.25: ["2.25", "2.250", "225e-2"],
    -1.5: ["-1.5", "-1.50", "-15e-1"],
    0.1: ["0.1", "0.10", "1e-1"],
}


def tie_heavy_data(
    seed: int,
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]], list[str], list[str]]:
    """qrels and run as dicts, and the qrels and run files' lines (shuffled, spellings varied)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    run_lines: list[str] = []
    for t in range(14):
        topic = str(300 + t)
        docs = rng.choice(POOL, size=int(rng.integers(1, 16)), replace=False)
        no_relevant = rng.random() < 0.2
        values = [-1, 0] if no_relevant else [-1, 0, 0, 1, 1, 2, 3]
        qrels[topic] = {str(d): int(rng.choice(values)) for d in docs}
    for t in range(16):  # topics 314, 315 are not judged
        topic = str(300 + t)
        if rng.random() < 0.15:
            continue  # a judged topic without run lines
        docs = rng.choice(POOL, size=int(rng.integers(1, 25)), replace=False)
        run[topic] = {}
        for rank, d in enumerate(docs, start=1):
            value = float(rng.choice(list(SCORE_SPELLINGS)))
            run[topic][str(d)] = value
            spelling = str(rng.choice(SCORE_SPELLINGS[value]))
            run_lines.append(f"{topic} Q0 {d} {rank} {spelling} run-{seed}")
    qrels_lines = [f"{q} 0 {d} {rel}" for q, judged in qrels.items() for d, rel in judged.items()]
    rng.shuffle(qrels_lines)
    rng.shuffle(run_lines)
    return qrels, run, qrels_lines, run_lines


def write_trec(
    tmp_path: Path, qrels_lines: list[str], run_lines: list[str], *, tabs: bool
) -> tuple[Path, Path]:
    sep = "\t" if tabs else " "
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("\n".join(line.replace(" ", sep) for line in qrels_lines) + "\n", encoding="utf-8")
    run_path.write_text("\n".join(line.replace(" ", sep) for line in run_lines) + "\n", encoding="utf-8")
    return qrels_path, run_path


def pytrec(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], level: int | None
) -> dict[str, dict[str, float]]:
    options = {} if level is None else {"relevance_level": level}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_REQUEST, **options)
    result: dict[str, dict[str, float]] = evaluator.evaluate(run)
    return result


CANONICAL = {name: resolve_metric(name).name for name in TREC_NAMES}


def test_the_trec_names_map_to_distinct_ragmeter_metrics() -> None:
    assert len(set(CANONICAL.values())) == len(TREC_NAMES)
    assert CANONICAL["P_5"] == "precision@5"
    assert CANONICAL["success_10"] == "hit@10"
    assert CANONICAL["Rprec"] == "r-precision"


@pytest.mark.parametrize("level", [None, 2])
@pytest.mark.parametrize("seed", range(8))
def test_trec_compat_agrees_with_pytrec_eval(seed: int, level: int | None, tmp_path: Path) -> None:
    qrels, run, qrels_lines, run_lines = tie_heavy_data(seed)
    qrels_path, run_path = write_trec(tmp_path, qrels_lines, run_lines, tabs=seed % 2 == 1)
    want = pytrec(qrels, run, level)
    got = ragmeter.evaluate_trec(
        qrels_path, run_path, metrics=TREC_NAMES, relevance_level=level, trec_compat=True
    )
    assert set(got.per_query) == set(want)
    assert len(want) >= 8
    for trec_name, name in CANONICAL.items():
        for topic, measures in want.items():
            value = got.per_query[topic][name]
            assert value is not None
            assert abs(value - measures[trec_name]) <= TOL, (topic, trec_name, value, measures[trec_name])
        mean = sum(m[trec_name] for m in want.values()) / len(want)
        aggregate = got.aggregate[name]
        assert aggregate is not None
        assert abs(aggregate - mean) <= TOL, (trec_name, aggregate, mean)
        assert got.n_scored[name] == len(want)


@pytest.mark.parametrize("seed", range(8))
def test_without_trec_compat_queries_with_no_relevant_documents_are_skipped(
    seed: int, tmp_path: Path
) -> None:
    qrels, run, qrels_lines, run_lines = tie_heavy_data(seed)
    qrels_path, run_path = write_trec(tmp_path, qrels_lines, run_lines, tabs=False)
    want = pytrec(qrels, run, None)
    no_relevant = {t for t in want if not any(rel > 0 for rel in qrels[t].values())}
    got = ragmeter.evaluate_trec(qrels_path, run_path, metrics=TREC_NAMES)
    for trec_name, name in CANONICAL.items():
        assert got.n_skipped[name] == len(no_relevant)
        assert got.n_scored[name] == len(want) - len(no_relevant)
        for topic in want:
            value = got.per_query[topic][name]
            if topic in no_relevant:
                assert value is None
            else:
                assert value is not None and abs(value - want[topic][trec_name]) <= TOL
        kept = [m[trec_name] for t, m in want.items() if t not in no_relevant]
        aggregate = got.aggregate[name]
        assert aggregate is not None
        assert abs(aggregate - sum(kept) / len(kept)) <= TOL


def test_the_random_data_has_the_hard_cases(tmp_path: Path) -> None:
    """Guard for the generator: every case the comparison is meant to exercise really occurs."""
    ties = no_relevant = unjudged_run_topics = missing_run_topics = negatives = 0
    for seed in range(8):
        qrels, run, _, _ = tie_heavy_data(seed)
        ties += sum(len(set(scores.values())) < len(scores) for scores in run.values())
        no_relevant += sum(not any(r > 0 for r in judged.values()) for t, judged in qrels.items() if t in run)
        unjudged_run_topics += len(set(run) - set(qrels))
        missing_run_topics += len(set(qrels) - set(run))
        negatives += sum(r < 0 for judged in qrels.values() for r in judged.values())
    assert min(ties, no_relevant, unjudged_run_topics, missing_run_topics, negatives) > 0


@pytest.mark.parametrize("seed", range(4))
def test_complete_emulates_trec_eval_c(seed: int, tmp_path: Path) -> None:
    # pytrec_eval has no -c: divide by the number of qrels topics, missing topics counting 0
    qrels, run, qrels_lines, run_lines = tie_heavy_data(seed)
    qrels_path, run_path = write_trec(tmp_path, qrels_lines, run_lines, tabs=False)
    want = pytrec(qrels, run, None)
    got = ragmeter.evaluate_trec(qrels_path, run_path, metrics=TREC_NAMES, complete=True, trec_compat=True)
    assert set(got.per_query) == set(qrels)
    assert got.n_missing_output == len(set(qrels) - set(run))
    for trec_name, name in CANONICAL.items():
        aggregate = got.aggregate[name]
        assert aggregate is not None
        assert abs(aggregate - sum(m[trec_name] for m in want.values()) / len(qrels)) <= TOL
        for topic in set(qrels) - set(run):
            assert got.per_query[topic][name] == 0.0


# --- ranx, on tie-free runs -------------------------------------------------------------------------

RANX_METRICS = {
    **{f"ndcg@{k}": f"ndcg@{k}" for k in CUTOFFS},
    **{f"precision@{k}": f"precision@{k}" for k in CUTOFFS},
    **{f"recall@{k}": f"recall@{k}" for k in CUTOFFS},
    **{f"hit_rate@{k}": f"hit@{k}" for k in CUTOFFS},
    "mrr": "mrr",
    "map": "map",
}


# ranx runs in a child process with numba's JIT off: its kernels are plain Python then, so there
# is no minutes-long compilation, no JIT cache written into site-packages and no numba warnings,
# and this process's numba state is left alone.
RANX_SCRIPT = """
import json, sys
import ranx
cases = json.load(sys.stdin)
out = []
for case in cases:
    run = ranx.Run(case["run"])
    ranx.evaluate(ranx.Qrels(case["qrels"]), run, case["metrics"])
    out.append({m: {q: float(v) for q, v in run.scores[m].items()} for m in case["metrics"]})
json.dump(out, sys.stdout)
"""
RANX_SEEDS = range(2)


@pytest.fixture(scope="module")
def ranx_results() -> list[dict[str, dict[str, float]]]:
    cases = [
        {"qrels": qrels, "run": run, "metrics": list(RANX_METRICS)}
        for qrels, run in (tie_free_data(seed) for seed in RANX_SEEDS)
    ]
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run(
        [sys.executable, "-c", RANX_SCRIPT],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results: list[dict[str, dict[str, float]]] = json.loads(done.stdout)
    return results


def tie_free_data(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(1000 + seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for t in range(30):
        topic = f"q{t}"
        docs = [str(d) for d in rng.choice(POOL, size=int(rng.integers(1, 12)), replace=False)]
        judged = {d: int(rng.choice([-1, 0, 0, 1, 2, 3])) for d in docs}
        judged[docs[0]] = int(rng.integers(1, 4))  # at least one relevant document
        qrels[topic] = judged
        retrieved = [str(d) for d in rng.choice(POOL, size=int(rng.integers(1, 20)), replace=False)]
        scores = rng.permutation(len(retrieved)) * 0.25 + 0.125  # distinct within the query
        run[topic] = {d: float(s) for d, s in zip(retrieved, scores, strict=True)}
    return qrels, run


@pytest.mark.parametrize("seed", RANX_SEEDS)
def test_agrees_with_ranx_on_tie_free_runs(
    seed: int, ranx_results: list[dict[str, dict[str, float]]], tmp_path: Path
) -> None:
    qrels, run = tie_free_data(seed)
    want = ranx_results[seed]
    assert set(want) == set(RANX_METRICS)
    assert all(set(scores) == set(qrels) for scores in want.values())
    qrels_path = tmp_path / "qrels"
    qrels_path.write_text(
        "".join(f"{q} 0 {d} {r}\n" for q, judged in qrels.items() for d, r in judged.items())
    )
    run_path = tmp_path / "run"
    run_path.write_text(
        "".join(f"{q} Q0 {d} 0 {s!r} r\n" for q, scored in run.items() for d, s in scored.items())
    )
    from_trec = ragmeter.evaluate_trec(qrels_path, run_path, metrics=list(RANX_METRICS.values()))
    # the same data as samples and ranked outputs
    samples = [{"id": q, "expected_output": judged} for q, judged in qrels.items()]
    outputs = {q: sorted(scored, key=lambda d: -scored[d]) for q, scored in run.items()}
    from_samples = ragmeter.evaluate(samples, outputs, metrics=list(RANX_METRICS.values()))
    for result in (from_trec, from_samples):
        assert set(result.per_query) == set(qrels)
        for ranx_name, name in RANX_METRICS.items():
            for topic, value in want[ranx_name].items():
                got = result.per_query[topic][name]
                assert got is not None and abs(got - value) <= TOL, (topic, ranx_name, got, value)
            aggregate = result.aggregate[name]
            assert aggregate is not None
            assert abs(aggregate - float(np.mean(list(want[ranx_name].values())))) <= TOL
