"""The `ragmeter mine` command line: errors and exit codes, the docs, the offline example."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from ragmeter.io.datasets import load_dataset
from ragmeter.mining import registry as reg
from ragmeter.mining.designs import BayesDesign, FixedDesign

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "mining.md"
EXAMPLE = ROOT / "examples" / "mining"


@pytest.fixture
def small_registry(tmp_path: Path, registry_writer: Any, corpus_writer: Any, solvers_path: str) -> Path:
    corpus_writer(tmp_path, n=5)
    return registry_writer(
        tmp_path,
        {
            "corpora": {"docs": {"file": "docs.jsonl"}},
            "solver": {
                "kind": "python",
                "function": "mining_test_solvers:planted",
                "python_path": [solvers_path],
            },
            "benchmarks": [
                {
                    "name": "b",
                    "corpus": "docs",
                    "validator": {"kind": "answer"},
                    "candidates": {"distractors": 4},
                    "questions": [
                        {"id": "q", "question": "Secret?", "answer": "4417", "seeds": ["zz.planted"]}
                    ],
                }
            ],
        },
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["mine", "missing.yaml"], "missing.yaml: file not found"),
        (["mine", "{registry}", "--design", "greedy"], "--design must be bayes or fixed"),
        (
            ["mine", "{registry}", "--recompute", "--design", "fixed"],
            "--recompute takes the design from each trial log",
        ),
        (["mine", "{registry}", "--only", "nope"], "--only 'nope' names no benchmark or question"),
        (
            ["mine", "{registry}", "--design", "fixed", "--strict"],
            "--strict applies to the bayes design only",
        ),
        (["mine", "{registry}", "--resume", "--fresh"], "choose one of --resume, --fresh and --recompute"),
        (["mine", "analyze", "--dataset", "{registry}", "--outputs", "{registry}"], "not a mined dataset"),
    ],
)
def test_errors_exit_2_with_one_line(args: list[str], message: str, small_registry: Path, cli: Any) -> None:
    args = [a.replace("{registry}", str(small_registry)) for a in args]
    code, _, err = cli(
        [*args, "--out", str(small_registry.parent / "o.yaml")] if args[1] != "analyze" else args
    )
    assert code == 2
    assert err.startswith("Error: ") and message in err and len(err.strip().splitlines()) == 1


def test_mine_then_refuse_to_overwrite_then_fresh(small_registry: Path, cli: Any) -> None:
    out = small_registry.parent / "out.yaml"
    code, _, err = cli(["mine", str(small_registry), "--out", str(out), "-q"])
    assert code == 0 and "b:q: IDENTIFIED after" in err and "(zz.planted)" in err
    code, _, err = cli(["mine", str(small_registry), "--out", str(out)])
    assert code == 2 and "pass --resume to continue or --fresh to start over" in err
    code, _, err = cli(["mine", "run", str(small_registry), "--out", str(out), "--fresh", "-q"])
    assert code == 0
    assert [s.expected_output for s in load_dataset(out)] == [["zz.planted"]]


def test_failed_solver_calls_leave_the_question_incomplete(small_registry: Path, cli: Any) -> None:
    text = small_registry.read_text().replace("mining_test_solvers:planted", "mining_test_solvers:broken")
    small_registry.write_text(text)
    out = small_registry.parent / "out.yaml"
    code, _, err = cli(["mine", str(small_registry), "--out", str(out), "-q"])
    assert code == 2 and "1 question(s) not decided (b:q); continue with --resume" in err
    pair = yaml.safe_load(out.read_text())["pairs"][0]
    assert pair["verification"]["status"] == "INCOMPLETE"
    assert "model unavailable" in pair["verification"]["stop_reason"]


def test_rich_progress_renders(small_registry: Path) -> None:
    import io

    from rich.console import Console

    from ragmeter.cli.mine_cmd import MiningView
    from ragmeter.mining.session import mine
    from ragmeter.progress import make_progress

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, width=120)
    progress = make_progress(console=console)
    assert progress.mode == "bar"
    mine(small_registry, small_registry.parent / "p.yaml", progress=lambda total: MiningView(progress, total))
    progress.stop()
    text = buffer.getvalue()
    assert "b:q: IDENTIFIED after" in text and "cost unknown" in text


def test_help_lists_the_subcommands(cli: Any) -> None:
    code, out, _ = cli(["mine", "--help"])
    assert code == 0 and "run" in out and "analyze" in out


REGISTRY_MODELS: list[type[BaseModel]] = [
    reg.Registry,
    reg.CorpusSpec,
    reg.LLMSolverSpec,
    reg.PythonSolverSpec,
    reg.AnswerValidatorSpec,
    reg.PytestValidatorSpec,
    reg.CandidatesSpec,
    reg.QuestionSpec,
    reg.BenchmarkSpec,
    reg.DesignSpec,
    BayesDesign,
    FixedDesign,
]


@pytest.mark.parametrize("model", REGISTRY_MODELS, ids=lambda m: m.__name__)
def test_docs_name_every_registry_key(model: type[BaseModel]) -> None:
    text = DOC.read_text(encoding="utf-8")
    missing = [name for name in model.model_fields if f"`{name}`" not in text]
    assert not missing, f"docs/mining.md does not document {model.__name__} keys {missing}"


def test_docs_name_every_option() -> None:
    from ragmeter.cli import mine_cmd

    text = DOC.read_text(encoding="utf-8")
    missing = []
    for command, skip in ((mine_cmd.mine_run, {"registry"}), (mine_cmd.mine_analyze, set())):
        for parameter in inspect.signature(command).parameters.values():
            flag = (
                "--json"
                if parameter.name == "as_json"
                else "-k"
                if parameter.name == "k"
                else "--" + parameter.name.replace("_", "-")
            )
            if parameter.name not in skip and not parameter.name.startswith("_") and f"`{flag}`" not in text:
                missing.append(flag)
    assert not missing, f"docs/mining.md does not mention {missing}"


def test_offline_example_runs_and_scores(tmp_path: Path, cli: Any) -> None:
    example = tmp_path / "example"
    shutil.copytree(EXAMPLE, example)
    out = tmp_path / "mined" / "retrieval_dataset.yaml"
    code, _, err = cli(
        ["mine", str(example / "registry.yaml"), "--out", str(out), "--only", "stdlib_api", "-q"]
    )
    assert code == 0, err
    samples = {s.id: s.expected_output for s in load_dataset(out)}
    assert samples["stdlib_api:fill_width"] == ["textwrap.fill"]
    assert samples["stdlib_api:json_acronym"] == []  # the solver knows it: NO_RELEVANT_DOC (TRIVIAL)
    outputs = tmp_path / "outputs.jsonl"  # the example's outputs, without the pytest benchmark left out here
    lines = (example / "search_outputs.jsonl").read_text().splitlines()
    outputs.write_text("\n".join(line for line in lines if '"stdlib_api:' in line) + "\n")
    code, out_text, _ = cli(["eval", "--dataset", str(out), "--outputs", str(outputs), "--json"])
    assert code == 0 and '"hit@5"' in out_text
    code, out_text, _ = cli(["mine", "analyze", "--dataset", str(out), "--outputs", str(outputs)])
    assert code == 0 and "vocabulary_mismatch" in out_text
