"""Agreement with trec_eval 10.0 on its own test suite (../shared/oracle/trec_eval).

Every measure ragmeter shares with trec_eval is compared per query and for
``all`` within 5e-5 (trec_eval prints 4 decimals). trec_eval averages topics
without relevant documents in as 0, so the comparison runs with
``trec_compat=True``; ``-c`` maps to ``complete=True`` and ``-l`` to
``relevance_level``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from ragmeter.api import evaluate_trec
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.matching.trec import match_trec
from ragmeter.metrics import ranking
from ragmeter.metrics.relevance import Ranked

ORACLE = Path(__file__).resolve().parents[2] / "shared" / "oracle" / "trec_eval"
if not ORACLE.is_dir():  # a fresh clone has shared/ beside it; a working tree at /work/main too
    ORACLE = Path("/work/shared/oracle/trec_eval")

pytestmark = pytest.mark.skipif(not ORACLE.is_dir(), reason=f"trec_eval oracle data not found at {ORACLE}")

TOL = 5e-5
SHARED = re.compile(
    r"^(P_\d+|recall_\d+|ndcg_cut_\d+|map_cut_\d+|success_\d+|map|recip_rank|Rprec|set_recall|set_P|set_F"
    r"|bpref|infAP|gm_map|gm_bpref|num_ret|num_rel|num_rel_ret|iprec_at_recall_[0-9.]+|Rprec_mult_[0-9.]+)$"
)


def trec_to_ragmeter(measure: str) -> str:
    """trec_eval's measure name → the ragmeter name it is compared with (ragmeter reads trec_eval's)."""
    return measure


def expected(name: str) -> dict[str, dict[str, float]]:
    """measure → topic (or 'all') → value, for the shared measures."""
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for line in (ORACLE / name).read_text().splitlines():
        measure, topic, value = line.split()
        if SHARED.match(measure):
            out[measure][topic] = float(value)
    return out


CASES = [
    # (expected output, qrels, run, options) — the quicktest lines of trec_eval 10.0
    ("out.test", "qrels.test", "results.test", {}),
    ("out.test", "qrels.test.with-comments", "results.test", {}),
    ("out.test.a", "qrels.test", "results.test", {}),
    ("out.test.aq", "qrels.test", "results.test", {}),
    ("out.test.aqc", "qrels.test", "results.trunc", {"complete": True}),
    ("out.test.aql", "qrels.rel_level", "results.test", {"relevance_level": 2}),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", {}),
    ("out.test.meas_params", "qrels.test", "results.test", {}),
]


@pytest.mark.parametrize(
    ("out_file", "qrels", "run", "options"), CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES]
)
def test_shared_measures_match_trec_eval(
    out_file: str, qrels: str, run: str, options: dict[str, object]
) -> None:
    want = expected(out_file)
    assert want, f"no shared measures found in {out_file}"
    names = [trec_to_ragmeter(m) for m in want]
    result = evaluate_trec(ORACLE / qrels, ORACLE / run, metrics=names, trec_compat=True, **options)  # type: ignore[arg-type]
    canonical = dict(zip(want, result.aggregate, strict=True))
    assert len(canonical) == len(want)
    compared = 0
    for measure, by_topic in want.items():
        name = canonical[measure]
        for topic, value in by_topic.items():
            got = result.aggregate[name] if topic == "all" else result.per_query[topic][name]
            assert got is not None, (measure, topic)
            assert abs(got - value) <= TOL, f"{measure} {topic}: ragmeter {got:.6f} vs trec_eval {value:.4f}"
            compared += 1
    assert compared >= len(want)
    num_q = [
        line.split()[2] for line in (ORACLE / out_file).read_text().splitlines() if line.startswith("num_q")
    ]
    if num_q:
        assert result.n_queries == int(num_q[0])


def test_full_depth_ndcg_matches_trec_eval() -> None:
    """trec_eval's plain `ndcg` is nDCG over the whole ranking: the kernel with no cutoff."""
    want = {
        line.split()[1]: float(line.split()[2])
        for line in (ORACLE / "out.test.aq").read_text().splitlines()
        if line.split()[0] == "ndcg"
    }
    matched = match_trec(read_qrels(ORACLE / "qrels.test"), read_run(ORACLE / "results.test"))
    values = ranking.ndcg(Ranked(matched.table), None)
    got = dict(zip(matched.table.query_ids, values.tolist(), strict=True))
    for topic, value in want.items():
        mean = float(np.mean(values)) if topic == "all" else got[topic]
        assert abs(mean - value) <= TOL, topic


def test_complete_flag_changes_the_query_count() -> None:
    """Without -c, a qrels topic missing from the run is left out and reported."""
    result = evaluate_trec(ORACLE / "qrels.test", ORACLE / "results.trunc", metrics=["map"], trec_compat=True)
    assert result.n_queries == 2
    assert any("no lines in the run" in w for w in result.warnings)
    complete = evaluate_trec(
        ORACLE / "qrels.test", ORACLE / "results.trunc", metrics=["map"], trec_compat=True, complete=True
    )
    assert complete.n_queries == 3
    assert complete.per_query["302"]["map"] == 0.0


def test_unjudged_run_topics_are_ignored() -> None:
    """results.comment.test has 301 topics, 31 judged: the rest are ignored, as trec_eval does."""
    result = evaluate_trec(ORACLE / "qrels.comment.test", ORACLE / "results.comment.test", metrics=["map"])
    assert result.n_queries == 31
    assert any("270 run topic(s) have no judgments" in w for w in result.warnings)
