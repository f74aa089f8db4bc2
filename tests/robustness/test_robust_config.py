"""The config file (``ragmeter.yaml`` or ``--config``): every key checked, for every command that reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

CONFIGS = {
    "a-list": ("- metrics\n", "config must be a mapping"),
    "a-text": ("just text\n", "config must be a mapping"),
    "section-typo": ("metrcs: {}\n", "metrcs: unknown setting; did you mean 'metrics'?"),
    "nested-typo": (
        "metrics:\n  retrieval:\n    defualt_k: 5\n",
        "metrics.retrieval.defualt_k: unknown setting; did you mean 'default_k'?",
    ),
    "rag-typo": ("metrics:\n  rag:\n    snipet_matching: true\n", "did you mean 'snippet_matching'"),
    "k-zero": ("metrics:\n  retrieval:\n    default_k: 0\n", "metrics.retrieval.default_k"),
    "level-negative": (
        "metrics:\n  retrieval:\n    relevance_level: -1\n",
        "metrics.retrieval.relevance_level",
    ),
    "metrics-not-list": ("metrics:\n  retrieval:\n    metrics: 5\n", "metrics.retrieval.metrics"),
    "pricing-typo": (
        "pricing:\n  default: {prompt_per_1k: 1, completion_per1k: 2}\n",
        "pricing.default.completion_per1k",
    ),
    "judge-text": ("judge: please\n", "judge: must be a mapping of judge settings", "got the text 'please'"),
    "judge-typo": (
        "judge:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  cache_pth: x\n",
        "did you mean 'cache_path'",
    ),
    "judge-url": ("judge:\n  base_url: 'http://:80'\n  model: m\n", "judge: base_url: has no host"),
}

COMMANDS = {
    "eval-trec": ["eval", "--qrels", "q.txt", "--run", "r.txt", "-m", "map"],
    "eval-dataset": ["eval", "-d", "d.yaml", "--outputs", "o.jsonl", "--no-judge"],
    "cache": ["cache", "stats"],
}


@pytest.mark.parametrize("case", list(CONFIGS), ids=list(CONFIGS))
@pytest.mark.parametrize("command", list(COMMANDS), ids=list(COMMANDS))
def test_a_bad_config_file_is_one_line_naming_it(
    refused: Any, tmp_path: Path, case: str, command: str
) -> None:
    text, *fragments = CONFIGS[case]
    files = {
        "ragmeter.yaml": text,
        "q.txt": "q1 0 d1 1\n",
        "r.txt": "q1 Q0 d1 1 1.0 t\n",
        "d.yaml": "- id: q1\n  expected_output: [d1]\n",
        "o.jsonl": '{"id": "q1", "output": ["d1"]}\n',
    }
    for name, body in files.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    refused(COMMANDS[command], "ragmeter.yaml", *fragments)


@pytest.mark.parametrize(
    ("target", "fragment"),
    [("nope.yaml", "nope.yaml: config file not found"), ("D", "D: is a directory, expected a config file")],
)
def test_the_config_option_names_a_file(refused: Any, tmp_path: Path, target: str, fragment: str) -> None:
    (tmp_path / "D").mkdir()
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 1.0 t\n", encoding="utf-8")
    refused(["eval", "--qrels", "q.txt", "--run", "r.txt", "--config", target], fragment)
