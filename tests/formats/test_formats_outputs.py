"""What ragmeter writes for the ecosystem: DataFrames per query and aggregate, and trec_eval -q lines."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pytest

from ragmeter import evaluate_trec
from ragmeter.extras import MissingExtraError
from ragmeter.results import EvalResult

ORACLE = Path(__file__).resolve().parents[3] / "shared" / "oracle" / "trec_eval"
if not ORACLE.is_dir():
    ORACLE = Path("/work/shared/oracle/trec_eval")


@pytest.fixture(scope="module")
def result() -> EvalResult:
    return evaluate_trec(
        {"q1": {"a": 1, "b": 2}, "q2": {"c": 0}, "q3": {"d": 1}},
        {"q1": {"a": 0.5, "b": 0.9, "x": 0.7}, "q2": {"c": 1.0}, "q3": {"e": 1.0}},
        metrics=["mrr", "ndcg@2", "precision@2"],
    )


def test_to_pandas_per_query_and_aggregate(result: EvalResult) -> None:
    frame = result.to_pandas()
    assert list(frame.columns) == ["query_id", "mrr", "ndcg@2", "precision@2"]
    assert frame["query_id"].tolist() == ["q1", "q2", "q3"]
    assert frame["mrr"].tolist()[0] == 1.0 and frame["mrr"].tolist()[2] == 0.0
    assert frame["mrr"].isna().tolist() == [False, True, False]  # q2 has no relevant document: unscored
    assert str(frame["mrr"].dtype) == "Float64"  # <NA>, not NaN and not 0
    aggregate = result.to_pandas("aggregate")
    assert aggregate.to_dict("records")[0] == {
        "metric": "mrr",
        "value": 0.5,
        "n_scored": 2,
        "n_skipped": 1,
        "requested": "mrr",
    }
    assert aggregate["value"].tolist() == [result.aggregate[m] for m in aggregate["metric"]]


def test_to_polars_per_query_and_aggregate(result: EvalResult) -> None:
    frame = result.to_polars()
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == ["query_id", "mrr", "ndcg@2", "precision@2"]
    assert frame["mrr"].to_list() == [1.0, None, 0.0]
    assert frame.equals(pl.from_pandas(result.to_pandas()))
    assert result.to_polars("aggregate")["n_skipped"].to_list() == [1, 1, 1]


def test_names_as_typed_beside_the_canonical_ones() -> None:
    typed = evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, metrics=["nDCG@10", "P@2", "RR"])
    aggregate = typed.to_pandas("aggregate")
    assert aggregate["metric"].tolist() == ["ndcg@10", "precision@2", "mrr"]
    assert aggregate["requested"].tolist() == ["nDCG@10", "P@2", "RR"]
    from ragmeter.report.trec_text import per_query_trec_lines

    names = [line.split("\t")[0].rstrip() for line in per_query_trec_lines(typed)]
    assert names == ["nDCG@10", "P@2", "RR"] * 2


def test_to_pandas_without_pandas_says_which_extra(
    result: EvalResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(
        MissingExtraError,
        match=r"EvalResult.to_pandas\(\): needs the 'pandas' package: pip install 'ragmeter\[pandas\]'",
    ):
        result.to_pandas()
    monkeypatch.setitem(sys.modules, "polars", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'ragmeter\[polars\]'"):
        result.to_polars()


def test_trec_format_lines_are_trec_eval_q_lines(cli: Any) -> None:
    """The map lines of ``--format trec --trec-compat`` are trec_eval -q's own, byte for byte."""
    code, out, err = cli(
        [
            "eval",
            "--qrels",
            str(ORACLE / "qrels.test"),
            "--run",
            str(ORACLE / "results.test"),
            "-m",
            "map",
            "--trec-compat",
            "--format",
            "trec",
        ]
    )
    assert code == 0, err
    theirs = [line for line in (ORACLE / "out.test.aq").read_text().splitlines() if line.startswith("map ")]
    assert out.splitlines() == theirs


def test_trec_format_leaves_unscored_values_out(result: EvalResult) -> None:
    from ragmeter.report.trec_text import per_query_trec_lines

    lines = list(per_query_trec_lines(result))
    assert not any("\tq2\t" in line for line in lines)
    assert f"{'mrr':<22}\tall\t0.5000" in lines
    rows = [line.split("\t") for line in lines]
    parsed = pd.DataFrame(rows, columns=["metric", "query", "value"])
    assert len(parsed[parsed["query"] == "q1"]) == 3
