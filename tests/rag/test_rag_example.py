"""The examples/rag data end to end: every metric of the whole-RAG issue, worked by hand; breakdowns; CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragmeter import evaluate
from ragmeter.cli import main
from ragmeter.results import EvalResult

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rag"
LATENCY = [1.10, 0.90, 1.70, 1.45, 0.70, 1.00, 0.95, 0.75, 1.35, 0.45, 0.92, 0.30, 0.20, 30.0, 0.55]


@pytest.fixture(scope="module")
def result() -> EvalResult:
    return evaluate(EXAMPLE / "tests.yaml", EXAMPLE / "run.jsonl", config=EXAMPLE / "ragmeter.yaml")


def small(prompt: int, completion: int) -> float:
    return prompt / 1000 * 0.0005 + completion / 1000 * 0.0015


def default(prompt: int, completion: int) -> float:
    return prompt / 1000 * 0.003 + completion / 1000 * 0.006


def test_every_metric_worked_by_hand(result: EvalResult) -> None:
    agg = result.aggregate
    # 13 answerable questions with gold supports; q-10 and q-11 are unanswerable (skipped)
    assert agg["hit@5"] == pytest.approx(9 / 13)  # misses: q-05 (scope), q-12, q-13 (error), q-14 (timeout)
    assert agg["mrr"] == pytest.approx(8 / 13)  # q-02 and q-04 at rank 2
    # matching chunks: q-01 2, q-02 1 (the snippet-less chunk does not count), q-03 1, q-04 2,
    # q-06..q-09 2 each, q-15 1 -> 15 of 13 * 5
    assert agg["precision@5"] == pytest.approx(15 / 65)
    assert agg["recall_all@5"] == 0.5  # q-03: one group of two; q-04: both
    assert agg["scope_miss_rate"] == pytest.approx(1 / 7)  # q-05's selection excludes work/
    assert agg["attribution_hit_rate"] == pytest.approx(7 / 13)  # q-02 cites the wrong heading
    # q-06, q-08 pass; q-07 cites older; q-09 (acknowledge_both) is unscored without a judge
    assert agg["recency_rule_pass"] == pytest.approx(2 / 3)
    assert agg["abstention_accuracy"] == 0.5
    assert agg["hallucination_rate_unanswerable"] == 0.5
    assert agg["false_abstention_rate"] == pytest.approx(1 / 11)  # q-12; q-13/q-14 record no 'abstained'
    assert agg["error_rate"] == pytest.approx(2 / 15)
    assert agg["timeout_rate"] == pytest.approx(1 / 15)
    assert agg["empty_response_rate"] == pytest.approx(1 / 15)
    assert agg["latency_p50"] == pytest.approx(float(np.percentile(LATENCY, 50)))
    assert agg["latency_p95"] == pytest.approx(float(np.percentile(LATENCY, 95)))
    judge = result.n_scored["latency_p50.judge"]
    assert judge == 1 and agg["latency_p95.judge"] == pytest.approx(0.3)
    totals = [1.07, 0.84, 1.61, 1.40, 0.64, 0.96, 0.89, 0.71, 1.30, 0.40, 0.89, 0.28, 0.50]
    assert agg["latency_p95.total"] == pytest.approx(float(np.percentile(totals, 95)))
    prompts = [850, 640, 1200, 1500, 500, 900, 800, 700, 950, 300, 600, 250, 400]
    assert agg["tokens_prompt"] == pytest.approx(sum(prompts) / 13)
    costs = [
        small(850, 60), small(640, 25), default(1200, 140), default(1500, 180), small(500, 30),
        small(900, 50), small(800, 45), small(700, 70), default(950, 80), small(300, 20),
        small(600, 40), small(250, 10), small(400, 0),
    ]  # fmt: skip
    assert agg["cost"] == pytest.approx(sum(costs) / 13)
    assert result.operational["cost"]["sum"] == pytest.approx(sum(costs))
    assert result.operational["tokens"]["prompt"]["sum"] == sum(prompts)
    assert result.operational["suite_seconds"] == pytest.approx(sum(LATENCY))


def test_per_query_values(result: EvalResult) -> None:
    q02 = result.per_query["q-02"]
    assert (q02["hit@5"], q02["mrr"], q02["precision@5"], q02["attribution_hit_rate"]) == (1.0, 0.5, 0.2, 0.0)
    q03 = result.per_query["q-03"]
    assert (q03["hit@5"], q03["recall_all@5"]) == (1.0, 0.0)
    assert result.per_query["q-05"]["scope_miss_rate"] == 1.0
    assert result.per_query["q-04"]["scope_miss_rate"] is None  # folder_mode off
    assert result.per_query["q-11"]["hallucination_rate_unanswerable"] == 1.0
    assert result.per_query["q-14"]["timeout_rate"] == 1.0


def test_breakdowns(result: EvalResult) -> None:
    b = result.breakdowns
    assert list(b) == ["tag", "category", "difficulty", "vault", "answerable", "doc_type"]
    assert list(b["category"]) == [
        "factual",
        "multi_hop",
        "reasoning",
        "recency/conflict",
        "adversarial",
        "general",
    ]
    assert b["category"]["multi_hop"]["recall_all@5"] == {"mean": 0.5, "n": 2}
    assert b["category"]["recency/conflict"]["recency_rule_pass"] == {"mean": pytest.approx(2 / 3), "n": 3}
    assert b["answerable"]["false"]["abstention_accuracy"] == {"mean": 0.5, "n": 2}
    assert "hit@5" not in b["answerable"]["false"]  # groups where a metric scored nothing leave it out
    assert b["vault"]["personal"]["hit@5"] == {"mean": 1.0, "n": 2}
    # a question with several tags counts in each: 'work' holds 12 questions, 'policy' 3
    assert b["tag"]["work"]["error_rate"]["n"] == 12
    assert b["tag"]["policy"]["attribution_hit_rate"] == {"mean": 1.0, "n": 3}
    # percentile metrics: 'mean' holds the group's percentile
    hard = [1.70, 1.45, 1.35]
    assert b["difficulty"]["hard"]["latency_p95"]["mean"] == pytest.approx(float(np.percentile(hard, 95)))
    # coverage by doc type: recall_any over the supports of each type
    assert b["doc_type"] == {
        "code": {"hit@5": {"mean": 1.0, "n": 1}},
        "markdown": {"hit@5": {"mean": 9 / 13, "n": 13}},
        "pdf": {"hit@5": {"mean": 0.0, "n": 1}},
    }


def test_json_and_per_query_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    work = tmp_path / "rag"
    shutil.copytree(EXAMPLE, work)
    monkeypatch.chdir(work)  # ragmeter.yaml in the working directory is picked up
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--dataset", "tests.yaml", "--outputs", "run.jsonl", "--json", "--out", "results"])
    assert exit_info.value.code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["breakdowns"]["vault"]["work"]["hit@5"]["n"] == 11
    assert data["operational"]["n_errors"] == 2
    assert data["index_coverage"]["no_chunks_rate"] == 0.025
    assert json.loads((work / "results" / "metrics.json").read_text(encoding="utf-8")) == data
    lines = [
        json.loads(x) for x in (work / "results" / "per_query.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert lines[0]["id"] == "q-01"
    assert {k: lines[0][k] for k in ("tags", "category", "difficulty", "vault", "answerable")} == {
        "tags": ["work", "setup"],
        "category": "factual",
        "difficulty": "easy",
        "vault": "work",
        "answerable": True,
    }
    assert lines[9]["answerable"] is False and lines[9]["metrics"]["abstention_accuracy"] == 1.0
    assert (  # q-13's call failed: neither an answer nor an abstention
        lines[12]["unscored"]["false_abstention_rate"] == "no answer: the call failed"
    )


def test_table_output(capsys: pytest.CaptureFixture[str], monkeypatch: Any) -> None:
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--dataset", "tests.yaml", "--outputs", "run.jsonl", "--breakdowns", "all"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for heading in ["by tag", "by category", "by difficulty", "by vault", "by answerable", "by doc_type",
                    "operational", "index coverage"]:  # fmt: skip
        assert heading in out
    assert "recall_all@5" in out and "latency_p95.generation" in out and "0.6923 (13)" in out
    assert "bge-small-en-v1.5" in out


def test_table_output_shows_category_breakdown_by_default(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    monkeypatch.chdir(EXAMPLE)
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--dataset", "tests.yaml", "--outputs", "run.jsonl"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "by category" in out and "\nby tag" not in out
    assert "more breakdowns (by tag, difficulty, vault, answerable, doc_type)" in out


def test_result_round_trips_through_metrics_json(result: EvalResult, tmp_path: Path) -> None:
    from ragmeter.report.results_dir import load_results

    loaded = load_results(result.write(tmp_path)).result
    assert loaded.breakdowns == result.breakdowns
    assert loaded.operational == result.operational
    assert loaded.index_coverage == result.index_coverage


def test_sample_order_does_not_change_any_number(result: EvalResult) -> None:
    from ragmeter.io.datasets import load_dataset

    shuffled = list(reversed(load_dataset(EXAMPLE / "tests.yaml")))
    again = evaluate(shuffled, EXAMPLE / "run.jsonl", config=EXAMPLE / "ragmeter.yaml")
    assert again.aggregate == pytest.approx(result.aggregate)
    assert again.per_query == result.per_query
    for dimension, by_value in result.breakdowns.items():
        for value, cells in by_value.items():
            for metric, cell in cells.items():
                assert again.breakdowns[dimension][value][metric] == pytest.approx(cell)


def test_id_datasets_get_breakdowns_too(tmp_path: Path) -> None:
    samples = [
        {"id": "a", "expected_output": ["d1"], "tags": ["x"], "difficulty": "easy"},
        {"id": "b", "expected_output": ["d2"], "tags": ["x", "y"]},
    ]
    result = evaluate(samples, {"a": ["d1"], "b": ["d3", "d2"]}, metrics=["mrr"])
    assert result.breakdowns == {
        "tag": {"x": {"mrr": {"mean": 0.75, "n": 2}}, "y": {"mrr": {"mean": 0.5, "n": 1}}},
        "difficulty": {"easy": {"mrr": {"mean": 1.0, "n": 1}}},
    }
    result.write(tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "per_query.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines == [
        {
            "id": "a",
            "metrics": {"mrr": 1.0},
            "tags": ["x"],
            "difficulty": "easy",
            "retrieved": [{"id": "d1", "rank": 1, "gain": 1.0}],
        },
        {
            "id": "b",
            "metrics": {"mrr": 0.5},
            "tags": ["x", "y"],
            "retrieved": [{"id": "d3", "rank": 1, "gain": 0.0}, {"id": "d2", "rank": 2, "gain": 1.0}],
        },
    ]
