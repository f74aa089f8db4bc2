"""``ragmeter synth`` on the command line: the offline example end to end, and one-line errors."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.io.datasets import load_dataset

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of examples/synth and examples/vault; the current folder is its root."""
    for name in ("synth", "vault"):
        shutil.copytree(ROOT / "examples" / name, tmp_path / "examples" / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_offline_example_builds_a_verified_test_set_and_run_scores_it(example: Path, cli: Any) -> None:
    argv = [
        "synth",
        "examples/vault",
        "--config",
        "examples/synth/synth.yaml",
        "--out",
        "results/synth/tests.yaml",
    ]
    code, out, err = cli(argv)
    assert code == 0, err
    assert out.startswith("generated ") and "kept" in out
    assert "wrote results/synth/tests.yaml" in err
    # progress off a terminal (ragmeter.progress): each generation stage ends with its line, and the
    # questions task counts every question verified (also those decided without mining)
    lines = err.splitlines()
    assert sum(line.startswith("generation: ") and line.endswith("(done)") for line in lines) == 2
    to_verify = re.search(r"(\d+) to verify", err)
    assert to_verify is not None
    n = to_verify.group(1)
    assert [line.split(" ")[1] for line in lines if line.startswith("questions: ")][-1] == f"{n}/{n}"
    dataset = example / "results" / "synth" / "tests.yaml"
    samples = load_dataset(dataset)
    assert len(samples) >= 10
    assert {s.category for s in samples} >= {"factual", "recency/conflict", "unanswerable", "paraphrase"}
    for sample in samples:
        for anchor in sample.gold_supports or []:
            assert anchor.evidence is not None and {"verdict", "delta_p", "delta_p_ci95"} <= set(
                anchor.evidence
            )
    report = json.loads((example / "results" / "synth" / "tests.report.json").read_text(encoding="utf-8"))
    reasons = {row["reason"] for row in report["rejected"]}
    assert {"closed_book", "answer_in_question", "answered_from_corpus"} <= reasons
    markdown = (example / "results" / "synth" / "tests.report.md").read_text(encoding="utf-8")
    assert all(f"| {row['id']} |" in markdown for row in report["rejected"])

    code, out, err = cli(["run", "examples/synth/suite.yaml", "--no-report"])
    assert code == 0, err
    metrics = json.loads((example / "results" / "synth" / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["n_samples"] == len(samples) if "n_samples" in metrics else metrics
    assert "hit@5" in out and "abstention_accuracy" in out

    code, out, err = cli([*argv, "--resume", "-q"])
    assert code == 0, err
    assert not any(line.startswith(("generation: ", "questions: ")) for line in err.splitlines())
    assert "calls this run: generator 0" in out and "solver 0 (of" in out
    again = yaml.safe_load(dataset.read_text(encoding="utf-8"))
    assert [s["id"] for s in again["samples"]] == [s.id for s in samples]


def _config(folder: Path, text: str) -> Path:
    path = folder / "synth.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_errors_are_one_line_naming_the_place(example: Path, cli: Any) -> None:
    vault = "examples/vault"
    code, _, err = cli(["synth", vault, "--out", "t.yaml"])
    assert code == 2 and err.strip().splitlines() == [
        "Error: no generator: give --judge-config (a file with a 'judge:' block) or a 'generator:' block in --config"
    ]
    code, _, err = cli(
        ["synth", vault, "--config", "examples/synth/synth.yaml", "--categories", "factual,trivia"]
    )
    assert code == 2 and "unknown category 'trivia'" in err and len(err.strip().splitlines()) == 1
    bad = _config(example, "n: 3\nverification:\n  closed_book_trails: 2\n")
    code, _, err = cli(["synth", vault, "--config", str(bad)])
    assert code == 2 and err.strip() == (
        f"Error: {bad}:3: verification.closed_book_trails: unknown key; did you mean 'closed_book_trials'?"
    )
    judge = _config(example, "judge: {base_url: 'http://127.0.0.1:9/v1', model: m, temperature: 0.5}\n")
    code, _, err = cli(["synth", vault, "--judge-config", str(judge)])
    assert code == 2 and "temperature" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli(
        ["synth", "examples/nowhere", "--config", "examples/synth/synth.yaml", "--out", "t.yaml"]
    )
    assert code == 2 and err.strip() == "Error: examples/nowhere: corpus not found"
    (example / "t.yaml").write_text("samples: []\n", encoding="utf-8")
    code, _, err = cli(["synth", vault, "--config", "examples/synth/synth.yaml", "--out", "t.yaml"])
    assert (
        code == 2 and "exist from an earlier run; pass --resume to continue or --fresh to start over" in err
    )
    code, _, err = cli(["synth", vault, "--config", "examples/synth/synth.yaml", "--resume", "--fresh"])
    assert code == 2 and "choose one of --resume and --fresh" in err


def test_synth_is_listed_with_its_options(cli: Any) -> None:
    code, out, _ = cli(["--help"])
    assert code == 0 and "synth" in out
    code, out, _ = cli(["synth", "--help"])
    assert code == 0
    for option in (
        "--out",
        "--config",
        "--judge-config",
        "--n",
        "--categories",
        "--verify",
        "--resume",
        "--fresh",
    ):
        assert option in out
