"""A repeated (topic, docno) line against pytrec_eval: the copy keeps its rank slot and earns nothing.

The oracle renames every later copy of a document to a fresh docno nobody judged (that is
what "counted once, at its first rank; the copy keeps its slot" means) and lets pytrec_eval
score the renamed run. Scores within a topic are distinct, so the renaming moves no line.
Hypothesis favours the edges: a run of two lines that are one document, a repeat on the
first line of the last topic, topics interleaved, lines out of score order, every line a repeat.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragmeter.api import evaluate_trec
from ragmeter.io.trec import read_run

pytrec_eval = pytest.importorskip("pytrec_eval")

MEASURES = {
    "map": "map",
    "P_5": "P_5",
    "recall_5": "recall_5",
    "recip_rank": "recip_rank",
    "ndcg_cut_20": "ndcg_cut_20",
}

Line = tuple[str, str]
"""(topic, docno) of one run line, in file order."""


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[Line], list[int], dict[str, dict[str, int]]]:
    lines = draw(
        st.lists(
            st.tuples(st.sampled_from(["1", "2", "3"]), st.sampled_from("abcd")), min_size=1, max_size=12
        )
    )
    scores = draw(st.permutations(range(1, len(lines) + 1)))  # distinct: the renaming moves no line
    qrels = {}
    for topic in sorted({t for t, _ in lines}):
        judged = draw(st.dictionaries(st.sampled_from("abcde"), st.integers(0, 2), min_size=1, max_size=4))
        judged.setdefault("e", 1)  # every topic has a relevant document (none in the run)
        qrels[topic] = judged
    return lines, list(scores), qrels


def _renamed(lines: list[Line], scores: list[int]) -> dict[str, dict[str, float]]:
    """The run as pytrec_eval reads it, every copy of a (topic, docno) but the best-ranked under a fresh name."""
    out: dict[str, dict[str, float]] = {}
    for i in sorted(range(len(lines)), key=lambda i: -scores[i]):  # trec_eval's order: score, descending
        topic, doc = lines[i]
        ranking = out.setdefault(topic, {})
        ranking[doc if doc not in ranking else f"copy{i}"] = float(scores[i])
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(runs())
@example(([("1", "a"), ("1", "a")], [2, 1], {"1": {"a": 1, "e": 1}}))  # two lines, one document
@example(([("1", "a"), ("2", "a"), ("2", "a")], [3, 2, 1], {"1": {"a": 1, "e": 1}, "2": {"a": 1, "e": 1}}))
@example(
    (
        [("2", "b"), ("1", "b"), ("2", "b"), ("1", "b")],
        [1, 4, 3, 2],
        {"1": {"b": 2, "e": 1}, "2": {"b": 1, "e": 1}},
    )
)
def test_a_repeat_scores_like_a_fresh_unjudged_document(
    tmp_path: Path, case: tuple[list[Line], list[int], dict[str, dict[str, int]]]
) -> None:
    lines, scores, qrels = case
    run_path, qrels_path = tmp_path / "run", tmp_path / "qrels"
    run_path.write_text(
        "".join(
            f"{t} Q0 {d} {i + 1} {s} r\n" for i, ((t, d), s) in enumerate(zip(lines, scores, strict=True))
        ),
        encoding="utf-8",
    )
    qrels_path.write_text(
        "".join(f"{t} 0 {d} {g}\n" for t, judged in qrels.items() for d, g in judged.items()),
        encoding="utf-8",
    )
    assert read_run(run_path).reader == "fast"
    result = evaluate_trec(qrels_path, run_path, metrics=list(MEASURES.values()), trec_compat=True)
    want = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES)).evaluate(_renamed(lines, scores))
    names = dict(zip(MEASURES, result.aggregate, strict=True))
    for topic, values in want.items():
        for measure, value in values.items():
            got = result.per_query[topic][names[measure]]
            assert got == pytest.approx(value, abs=1e-12), f"topic {topic}, {measure}"
    copies = len(lines) - len({*lines})
    assert any(f"{copies} repeated (topic, docno)" in w for w in result.warnings) == (copies > 0)
