"""``ragmeter mine`` and ``mine analyze``: bad options are blamed on the option, bad files on the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REGISTRY = """corpora: {c: {packages: [json]}}
solver: {kind: python, function: "robust_mine_solver:solve"}
benchmarks:
  - {name: b, corpus: c, validator: {kind: answer}, questions: [{id: q1, question: "?", answer: "x"}]}
"""
MINED = 'pairs:\n  - {id: "b:q1", query: "How to dump?", candidates: [{fqn: json.dumps, empirical_relevance: "YES"}]}\n'


def _mine(folder: Path, registry: str = REGISTRY) -> list[str]:
    (folder / "r.yaml").write_text(registry, encoding="utf-8")
    return ["mine", "r.yaml", "--out", "mined.yaml", "--quiet"]


OPTIONS = {
    "tau-low": (["--tau", "0.3"], "--tau: ", "greater than 0.5"),
    "tau-one": (["--tau", "1"], "--tau: ", "less than 1"),
    "tau-nan": (["--tau", "nan"], "'--tau'", "finite"),
    "tau-inf": (["--tau", "inf"], "'--tau'", "finite"),
    "trials-one": (["--trials", "1"], "--trials: ", "greater than or equal to 2"),
    "trials-zero": (["--trials", "0"], "'--trials'"),
    "screen-high": (["--screen", "21"], "'--screen'"),
    "design": (["--design", "sequential"], "--design must be bayes or fixed"),
    "tau-with-fixed": (["--design", "fixed", "--tau", "0.9"], "--tau applies to the bayes design only"),
    "resume-and-fresh": (["--resume", "--fresh"], "choose one of --resume, --fresh and --recompute"),
    "out-folder": (["--out", "D"], "'--out'", "D is a directory"),
    "trials-dir-file": (["--trials-dir", "afile"], "'--trials-dir'", "afile is not a folder"),
    "concurrency": (["--concurrency", "0"], "'--concurrency'"),
    "executor": (["--executor", "moon"], "executor"),
}


@pytest.mark.parametrize("case", list(OPTIONS), ids=list(OPTIONS))
def test_a_bad_option_is_blamed_on_the_option(refused: Any, tmp_path: Path, case: str) -> None:
    args, *fragments = OPTIONS[case]
    (tmp_path / "D").mkdir()
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    base = _mine(tmp_path)
    if "--out" in args:  # given once: a second --out would be refused as repeated
        base = base[:2] + base[4:]
    line = refused([*base, *args], *fragments)
    assert "r.yaml" not in line


REGISTRIES = {
    "llm-no-host": (
        REGISTRY.replace(
            '{kind: python, function: "robust_mine_solver:solve"}',
            "{kind: llm, base_url: 'http://', model: m}",
        ),
        "solver.base_url",
        "has no host",
    ),
    "llm-bad-port": (
        REGISTRY.replace(
            '{kind: python, function: "robust_mine_solver:solve"}',
            "{kind: llm, base_url: 'http://h:0x/v1', model: m}",
        ),
        "solver.base_url",
        "invalid port",
    ),
    "design-tau": (REGISTRY + "design: {name: bayes, params: {tau: 0.2}}\n", "r.yaml:design.params.tau"),
    "design-key": (
        REGISTRY + "design: {name: bayes, tau: 0.2}\n",
        "r.yaml:design.tau",
        "known: name, params",
    ),
    "unknown-key": (REGISTRY + "benchmark: []\n", "r.yaml:benchmark", "did you mean 'benchmarks'"),
    "solver-key": (
        REGISTRY.replace("kind: python,", "kind: python, kwarg: {},"),
        "r.yaml:solver.kwarg",
        "did you mean 'kwargs'",
    ),
    "question-key": (
        REGISTRY.replace('answer: "x"', 'answr: "x"'),
        "questions[0].answr",
        "did you mean 'answer'",
    ),
    "not-a-mapping": ("- a\n", "r.yaml"),
}


@pytest.mark.parametrize("case", list(REGISTRIES), ids=list(REGISTRIES))
def test_a_bad_registry_is_blamed_on_the_file(refused: Any, tmp_path: Path, case: str) -> None:
    text, *fragments = REGISTRIES[case]
    refused(_mine(tmp_path, text), *fragments)


@pytest.mark.parametrize("target", ["missing.yaml", "D"])
def test_the_registry_must_be_a_file(refused: Any, tmp_path: Path, target: str) -> None:
    (tmp_path / "D").mkdir()
    refused(["mine", target], target, "directory" if target == "D" else "not found")


def _analyze(folder: Path, outputs_name: str, outputs: str) -> list[str]:
    (folder / "mined.yaml").write_text(MINED, encoding="utf-8")
    (folder / outputs_name).write_text(outputs, encoding="utf-8")
    return ["mine", "analyze", "-d", "mined.yaml", "--outputs", outputs_name]


ANALYZE = {
    "run-with-text-scores": (
        "o.json",
        '{"b:q1": {"json.dumps": "high"}}',
        "o.json: not a shape of outputs",
        "a ranx/pytrec_eval run {qid: {docid: score}}",
    ),
    "jsonl-rows": ("o.jsonl", '{"qid": "b:q1", "docno": "json.dumps"}\n', "o.jsonl: not a shape of outputs"),
    "no-output-field": (
        "o.jsonl",
        '{"id": "b:q1", "output": {"docs": ["json.dumps"]}}\n',
        "o.jsonl:1",
        "none of the output fields",
    ),
}


@pytest.mark.parametrize("case", list(ANALYZE), ids=list(ANALYZE))
def test_analyze_refuses_outputs_in_an_unknown_shape(refused: Any, tmp_path: Path, case: str) -> None:
    name, text, *fragments = ANALYZE[case]
    refused(_analyze(tmp_path, name, text), *fragments)


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (["--vocabulary-threshold", "nan"], "'--vocabulary-threshold'"),
        (["--vocabulary-threshold", "2"], "'--vocabulary-threshold'"),
        (["-k", "0"], "'-k'"),
        (["-d", "D"], "D: is a directory"),
    ],
)
def test_analyze_refuses_bad_options(refused: Any, tmp_path: Path, extra: list[str], fragment: str) -> None:
    (tmp_path / "D").mkdir()
    base = _analyze(tmp_path, "o.jsonl", '{"id": "b:q1", "output": ["json.dumps"]}\n')
    if "-d" in extra:  # given once: a second -d would be refused as repeated
        base = base[:2] + base[4:]
    refused([*base, *extra], fragment)


def test_analyze_reads_good_outputs(accepted: Any, tmp_path: Path) -> None:
    out = json.loads(
        accepted([*_analyze(tmp_path, "o.jsonl", '{"id": "b:q1", "output": ["json.dumps"]}\n'), "--json"])
    )
    assert out["gold_found_in_top_k"] == 1 and out["gold_documents"] == 1
