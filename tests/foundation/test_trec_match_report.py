"""What joining a TREC run with its qrels reports: ignored and missing topics, repeats, trec_eval's order."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragmeter.io.trec import read_qrels, read_run
from ragmeter.matching.trec import concat_ranges, match_trec


def files(tmp_path: Path, qrels: str, run: str) -> tuple[Path, Path]:
    (tmp_path / "qrels").write_text(qrels, encoding="utf-8")
    (tmp_path / "run").write_text(run, encoding="utf-8")
    return tmp_path / "qrels", tmp_path / "run"


QRELS = "q1 0 a 1\nq1 0 b 2\nq2 0 c 1\nq3 0 d 3\nq3 0 e -1\n"
RUN = "q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 a 3 1.0 r\nq9 Q0 z 1 5.0 r\nq2 Q0 x 1 1.0 r\n"


@pytest.mark.parametrize("complete", [False, True])
def test_the_match_reports_every_repair_and_omission(tmp_path: Path, complete: bool) -> None:
    qrels_path, run_path = files(tmp_path, QRELS, RUN)
    m = match_trec(read_qrels(qrels_path), read_run(run_path), complete=complete)
    how = (
        "scored as empty rankings (--complete)"
        if complete
        else "left out (use --complete to count them as 0)"
    )
    assert m.warnings == [
        f"{run_path}: 1 run topic(s) have no judgments in the qrels and were ignored",
        f"{run_path}: 1 repeated (topic, docno) line(s); each document counted once, at its first rank "
        "(a copy keeps its rank slot and scores 0)",
        f"1 qrels topic(s) have no lines in the run: {how}",
    ]
    assert (m.n_run_topics_ignored, m.missing_topics, m.n_duplicates) == (1, ["q3"], 1)
    t = m.table
    assert t.query_ids == (["q1", "q2", "q3"] if complete else ["q1", "q2"])
    assert t.gains.tolist() == [1.0, 2.0, 0.0, 0.0]
    assert t.offsets.tolist() == ([0, 3, 4, 4] if complete else [0, 3, 4])
    # Ideal gains: positive judgments only, descending, per evaluated topic.
    assert t.ideal_gains.tolist() == ([2.0, 1.0, 1.0, 3.0] if complete else [2.0, 1.0, 1.0])
    assert t.ideal_offsets.tolist() == ([0, 2, 3, 4] if complete else [0, 2, 3])


def test_a_clean_match_reports_nothing(tmp_path: Path) -> None:
    qrels_path, run_path = files(tmp_path, "q1 0 a 1\n", "q1 Q0 a 1 1.0 r\nq1 Q0 b 2 0.5 r\n")
    m = match_trec(read_qrels(qrels_path), read_run(run_path))
    assert m.warnings == [] and (m.n_run_topics_ignored, m.missing_topics, m.n_duplicates) == (0, [], 0)


@pytest.mark.parametrize(
    ("run", "order"),
    [
        # score descending, the rank column ignored
        ("q Q0 a 1 1.0 r\nq Q0 b 2 3.0 r\nq Q0 c 3 2.0 r\n", ["b", "c", "a"]),
        # ties: docno descending, byte by byte (so "b" > "ab" > "a" and "Z" < "a")
        ("q Q0 a 1 1.0 r\nq Q0 b 2 1.0 r\nq Q0 ab 3 1.0 r\nq Q0 Z 4 1.0 r\n", ["b", "ab", "a", "Z"]),
        # topics in qrels order, whatever the file order
        ("p Q0 x 1 9.0 r\nq Q0 a 1 1.0 r\n", ["a", "x"]),
        # a topic split in two blocks
        ("q Q0 a 1 1.0 r\np Q0 x 1 9.0 r\nq Q0 b 1 2.0 r\n", ["b", "a", "x"]),
        # equal scores in a block already in order, then one out of order
        ("q Q0 c 1 2.0 r\nq Q0 b 2 2.0 r\nq Q0 a 3 1.0 r\nq Q0 d 4 1.0 r\n", ["c", "b", "d", "a"]),
    ],
)
def test_lines_are_ranked_as_trec_eval_ranks_them(tmp_path: Path, run: str, order: list[str]) -> None:
    gains = {"a": 1, "b": 2, "c": 3, "d": 4, "ab": 5, "Z": 6, "x": 7}
    qrels = "".join(f"q 0 {d} {g}\n" for d, g in gains.items() if d != "x") + "p 0 x 7\n"
    qrels_path, run_path = files(tmp_path, qrels, run)
    m = match_trec(read_qrels(qrels_path), read_run(run_path))
    assert m.table.gains.tolist() == [float(gains[d]) for d in order]


def test_concat_ranges() -> None:
    import numpy as np

    assert concat_ranges(np.array([5, 0, 9]), np.array([7, 0, 10])).tolist() == [5, 6, 9]
    assert concat_ranges(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).tolist() == []
