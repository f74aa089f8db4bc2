"""``ragmeter compare``: nothing to compare, malformed saved results and bad options are one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

W = "is not a number JSON allows"


@pytest.fixture
def runs(saved_results: Any, tmp_path: Path) -> None:
    saved_results(tmp_path / "base", {"q1": {"mrr": 0.5, "map": 0.5}, "q2": {"mrr": 1.0, "map": 1.0}})
    saved_results(tmp_path / "cand", {"q1": {"mrr": 1.0, "map": 0.5}, "q2": {"mrr": 1.0, "map": 0.5}})


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (("--confidence", "nan"), "'--confidence'"),
        (("--confidence", "0.2"), "'--confidence'"),
        (("--confidence", "1"), "'--confidence'"),
        (("--correction", "bonferroni"), "--correction must be holm, bh or none"),
        (("--metric", "ndgc@10"), "--metric 'ndgc@10': no such metric in either run"),
        (("--resamples", "0"), "'--resamples'"),
        (("--top", "-1"), "'--top'"),
    ],
)
def test_bad_compare_options_are_refused(
    refused: Any, runs: None, extra: tuple[str, ...], fragment: str
) -> None:
    refused(["compare", "base", "cand", *extra], fragment)


def test_no_shared_query_is_refused(saved_results: Any, refused: Any, tmp_path: Path) -> None:
    saved_results(tmp_path / "base", {"q1": {"mrr": 1.0}, "q2": {"mrr": 1.0}})
    saved_results(tmp_path / "cand", {"x1": {"mrr": 0.0}})
    refused(
        ["compare", "base", "cand"],
        "base (2 queries) and cand (1 queries) share no query: nothing to compare",
    )


def test_no_shared_metric_is_refused(saved_results: Any, refused: Any, tmp_path: Path) -> None:
    saved_results(tmp_path / "base", {"q1": {"mrr": 1.0}})
    saved_results(tmp_path / "cand", {"q1": {"ndcg@10": 0.0}})
    refused(["compare", "base", "cand"], "base (mrr) and cand (ndcg@10) share no metric")


@pytest.mark.parametrize(
    ("token", "fragment"),
    [
        ("NaN", f"1: per_query.q2.map: NaN {W} (numbers must be finite; write null for no value)"),
        ("Infinity", f"1: per_query.q2.map: Infinity {W}"),
        ('"high"', " per_query.q2.map: Input should be a valid number"),
        ("[0.5]", " per_query.q2.map: Input should be a valid number"),
    ],
    ids=["nan", "inf", "text", "list"],
)
@pytest.mark.parametrize("side", ["base", "cand"])
def test_a_bad_value_in_saved_results_is_one_line(
    refused: Any, runs: None, tmp_path: Path, token: str, fragment: str, side: str
) -> None:
    path = tmp_path / side / "metrics.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["per_query"]["q2"]["map"] = "@X@"
    path.write_text(json.dumps(data).replace('"@X@"', token), encoding="utf-8")
    refused(["compare", "base", "cand"], f"{side}/metrics.json:{fragment}")


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("metrics.json", '{"aggregate": {}', "metrics.json:1: invalid JSON"),
        ("metrics.json", '{"aggregate": {}, "aggregate": {}}', "metrics.json:1: duplicate key 'aggregate'"),
        ("per_query.jsonl", "{}\n", "per_query.jsonl:1: id: expected a query id"),
        ("per_query.jsonl", '{"id": "q1", "metrics": {"mrr": NaN}}\n', "per_query.jsonl:1: metrics.mrr"),
        ("config.json", '["not", "an", "object"]', "config.json: expected a JSON object, got list"),
    ],
)
def test_a_malformed_results_file_is_refused(
    refused: Any, runs: None, tmp_path: Path, name: str, text: str, fragment: str
) -> None:
    (tmp_path / "cand" / name).write_text(text, encoding="utf-8")
    refused(["compare", "base", "cand"], f"cand/{fragment}")


@pytest.mark.parametrize("target", ["nowhere", "empty"])
def test_a_folder_that_is_not_a_results_folder(refused: Any, runs: None, tmp_path: Path, target: str) -> None:
    (tmp_path / "empty").mkdir()
    refused(["compare", "base", target], target)


def test_compare_on_good_results_prints_the_delta(accepted: Any, runs: None) -> None:
    data = json.loads(accepted(["compare", "base", "cand", "--json", "--resamples", "200"]))
    (pair,) = data["comparisons"]
    deltas = {m["metric"]: m["delta"] for m in pair["metrics"]}
    assert deltas == {"mrr": 0.25, "map": -0.25}


def test_a_metric_no_query_has_in_both_runs_is_refused(
    saved_results: Any, refused: Any, tmp_path: Path
) -> None:
    saved_results(tmp_path / "base", {"q1": {"mrr": 1.0, "map": None}, "q2": {"mrr": None, "map": 1.0}})
    saved_results(tmp_path / "cand", {"q1": {"mrr": None, "map": 1.0}, "q2": {"mrr": 1.0, "map": None}})
    refused(["compare", "base", "cand"], "no query has a value for mrr, map in both base and cand")
    refused(["compare", "base", "cand", "-m", "mrr"], "no query has a value for mrr in both")
