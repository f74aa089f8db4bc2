"""Results are shown under the name the user typed, beside the canonical name (round-2 ruling).

A plain name takes k by the precedence rule and says where k came from; ``NAME@all`` is the
whole list; trec_eval's cutoff lists name one metric each; count measures are summed and
gm_map is a geometric mean (round-3 ruling).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import ragmeter

QRELS = "q1 0 a 2\nq1 0 b 1\nq1 0 c 0\nq2 0 d 1\n"
RUN = "q1 Q0 c 1 3 r\nq1 Q0 a 2 2 r\nq1 Q0 b 3 1 r\nq2 Q0 e 1 2 r\nq2 Q0 d 2 1 r\n"


@pytest.fixture
def trec(tmp_path: Path) -> list[str]:
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    return ["--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r")]


def test_the_table_shows_the_typed_name_the_canonical_one_and_where_k_came_from(
    trec: list[str], cli: Any
) -> None:
    code, out, err = cli(["eval", *trec, "-m", "nDCG", "-m", "P(rel=2)@1", "-m", "RR", "-k", "3"])
    assert code == 0, err
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 4}
    assert "ndcg@3" in rows["nDCG"] and "-k / k=" in rows["nDCG"]
    assert "precision(rel=2)@1" in rows["P(rel=2)@1"]
    assert "mrr" in rows["RR"]
    assert "canonical" in out and "k from" in out


def test_json_and_metrics_json_keep_canonical_keys_with_the_typed_name(
    trec: list[str], cli: Any, tmp_path: Path
) -> None:
    code, out, err = cli(
        ["eval", *trec, "-m", "nDCG", "-m", "ndcg@all", "--json", "--out", str(tmp_path / "o")]
    )
    assert code == 0, err
    data = json.loads(out)
    assert list(data["aggregate"]) == ["ndcg@5", "ndcg@all"]
    assert data["provenance"]["metrics"]["ndcg@5"] == {
        "requested": "nDCG",
        "k": 5,
        "k_source": "the default (5)",
    }
    assert data["provenance"]["metrics"]["ndcg@all"] == {"requested": "ndcg@all", "k": None}
    written = json.loads((tmp_path / "o" / "metrics.json").read_text())
    assert written["provenance"]["metrics"] == data["provenance"]["metrics"]


def test_trec_eval_cutoff_lists_name_one_metric_each(trec: list[str], cli: Any) -> None:
    code, out, err = cli(["eval", *trec, "-m", "P.1,3", "--json"])
    assert code == 0, err
    data = json.loads(out)
    assert data["aggregate"] == {"precision@1": 0.0, "precision@3": pytest.approx((2 / 3 + 1 / 3) / 2)}
    assert data["provenance"]["metrics"]["precision@3"]["requested"] == "P_3"


def test_counts_are_summed_and_gm_map_is_geometric(tmp_path: Path) -> None:
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    names = ["num_ret", "num_rel", "num_rel_ret", "gm_map", "map"]
    result = ragmeter.evaluate_trec(tmp_path / "q", tmp_path / "r", metrics=names)
    # q1: c, a, b with a, b relevant: AP = (1/2 + 2/3) / 2; q2: e, d: AP = 1/2
    aps = [(1 / 2 + 2 / 3) / 2, 1 / 2]
    assert result.aggregate["num_ret"] == 5 and result.aggregate["num_rel"] == 3
    assert result.aggregate["num_rel_ret"] == 3
    assert result.aggregate["gm_map"] == pytest.approx(math.sqrt(aps[0] * aps[1]), rel=1e-12)
    assert result.per_query["q1"]["gm_map"] == pytest.approx(aps[0])  # per query: the plain value
    assert result.provenance["metrics"]["num_ret"]["aggregate"] == "sum"
    assert result.provenance["metrics"]["gm_map"]["aggregate"].startswith("geometric mean")


def test_gm_map_floors_a_zero_at_trec_evals_minimum(tmp_path: Path) -> None:
    (tmp_path / "q").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 1 r\nq2 Q0 x 1 1 r\n")
    result = ragmeter.evaluate_trec(tmp_path / "q", tmp_path / "r", metrics=["gm_map"])
    assert result.aggregate["gm_map"] == pytest.approx(math.sqrt(1.0 * 0.00001), rel=1e-12)


def test_ir_measures_names_in_the_python_api() -> None:
    samples = [{"id": "q", "expected_output": {"a": 2, "b": 1, "c": 0}}]
    result = ragmeter.evaluate(
        samples,
        {"q": ["c", "b", "x", "a"]},
        metrics=["P(rel=2)@2", "nDCG(dcg=exp-log2)@4", "Judged@4", "AP", "IPrec@0.5", "Bpref"],
    )
    got = result.aggregate
    assert got["precision(rel=2)@2"] == 0.0
    idcg = 3 + 1 / math.log2(3)
    assert got["ndcg_exp@4"] == pytest.approx((1 / math.log2(3) + 3 / math.log2(5)) / idcg)
    assert got["judged@4"] == 0.75
    assert got["map"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert got["iprec_at_recall_0.50"] == 0.5  # lround(0.5 * 2) = 1: best precision from rank 2 on
    assert got["bpref"] == pytest.approx((0.0 + 0.0) / 2)  # c (judged 0) is above both relevant
