"""Suite files: defaults, resolution of paths, and exact one-line validation errors."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from ragmeter.errors import ConfigError
from ragmeter.harness.suite import load_suite

GOOD = """\
name: demo
dataset: tests.yaml
system:
  type: http
  url: http://127.0.0.1:9/ask
  headers:
    Authorization: "Bearer ${RAG_TEST_KEY}"
k: 5
"""


def _suite(tmp_path: Path, text: str) -> Path:
    (tmp_path / "tests.yaml").write_text("samples:\n  - id: q-1\n    input: hi\n", encoding="utf-8")
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _run_error(path: Path, cli: Any, *args: str) -> str:
    code, _, err = cli(["run", str(path), *args])
    assert code == 2
    err = err.strip()
    assert "\n" not in err, err
    return err


def test_harness_suite_defaults_and_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_TEST_KEY", "k")
    loaded = load_suite(_suite(tmp_path, GOOD))
    suite = loaded.suite
    assert (suite.concurrency, suite.timeout_seconds, suite.retries, suite.k) == (4, 30.0, 2, 5)
    assert suite.system.type == "http"
    assert suite.system.method == "POST"
    assert suite.system.body == {"question": "{{ question }}", "k": "{{ k }}"}
    assert loaded.dataset_path == tmp_path / "tests.yaml"
    assert loaded.results_dir == tmp_path / "results" / "demo"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            GOOD.replace("  url:", "  urll:"),
            "{path}:5: system.urll: unknown key; did you mean 'url'?",
        ),
        (GOOD + "concurency: 3\n", "{path}:9: concurency: unknown key; did you mean 'concurrency'?"),
        (GOOD.replace("k: 5", "k: five"), "{path}:8: k: Input should be a valid integer"),
        (GOOD.replace("k: 5", "k: 0"), "{path}:8: k: Input should be greater than or equal to 1"),
        (GOOD + "timeout_seconds: -1\n", "{path}:9: timeout_seconds: Input should be greater than 0"),
        (
            GOOD.replace("type: http", "type: htp"),
            "{path}:4: system.type: unknown system type 'htp' (expected one of: http, python, builtin, langchain, llamaindex, haystack, dspy)",
        ),
        (
            GOOD.replace("  url: http://127.0.0.1:9/ask\n", ""),
            "{path}:3: system.url: required key is missing",
        ),
        (
            GOOD.replace("http://127.0.0.1:9/ask", "127.0.0.1:9/ask"),
            "{path}:5: system.url: must start with http:// or https://, got '127.0.0.1:9/ask'",
        ),
        (
            GOOD.replace("dataset: tests.yaml", "dataset: missing.yaml"),
            "{path}:2: dataset: file not found: {dir}/missing.yaml",
        ),
        (
            GOOD + "metrics: [mrr, hitt@5]\n",
            "{path}:9: metrics[1]: unknown metric 'hitt@5'; did you mean 'hit@5'?",
        ),
        (
            GOOD.replace("${RAG_TEST_KEY}", "${RAG_TEST_UNSET_KEY}"),
            "{path}:7: system.headers.Authorization: environment variable RAG_TEST_UNSET_KEY is not set",
        ),
        (
            GOOD.replace("k: 5", "  response:\n    answer: 'data..reply'\nk: 5"),
            "{path}:9: system.response.answer: 'data..reply' is not a valid JMESPath expression "
            "(column 6: unexpected '.')",
        ),
        (
            GOOD.replace("name: demo", "name: my demo"),
            "{path}:1: name: String should match pattern '^[A-Za-z0-9][A-Za-z0-9._-]*$'",
        ),
        (
            "name: x\ndataset: tests.yaml\nsystem:\n  type: python\n  function: not-a-function\n",
            "{path}:5: system.function: String should match pattern '^[A-Za-z_][\\w.]*:[A-Za-z_]\\w*$'",
        ),
        (
            "name: x\ndataset: tests.yaml\nsystem:\n  type: python\n  function: no_such_module_xyz:run\n",
            "{path}:5: system.function: cannot import module 'no_such_module_xyz' "
            "(No module named 'no_such_module_xyz')",
        ),
        ("name: x\ndataset: tests.yaml\nsystem: [1]\n", "{path}:3: system: must be a mapping, got list"),
        ("- a\n- b\n", "{path}: a suite must be a mapping, got list"),
        ("name: [unclosed\n", "{path}:2: invalid YAML (expected ',' or ']', but got '<stream end>')"),
    ],
)
def test_harness_suite_errors_are_one_exact_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    expected: str,
    cli: Any,
) -> None:
    monkeypatch.setenv("RAG_TEST_KEY", "k")
    monkeypatch.delenv("RAG_TEST_UNSET_KEY", raising=False)
    path = _suite(tmp_path, text)
    assert _run_error(path, cli) == "Error: " + expected.format(path=path, dir=tmp_path)
    assert not (tmp_path / "results").exists(), "a bad suite must not create the results folder"


def test_harness_suite_missing_file(tmp_path: Path, cli: Any) -> None:
    path = tmp_path / "nope.yaml"
    assert _run_error(path, cli) == f"Error: {path}: file not found"


def test_harness_suite_judge_block_is_kept_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_TEST_KEY", "k")
    block = "judge:\n  base_url: http://127.0.0.1:9/v1\n  model: any\n"
    loaded = load_suite(_suite(tmp_path, GOOD + block))
    assert loaded.suite.judge == {"base_url": "http://127.0.0.1:9/v1", "model": "any"}


def test_harness_suite_judge_block_is_checked_when_the_suite_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A typo in judge: was found only after every question had been asked."""
    monkeypatch.setenv("RAG_TEST_KEY", "k")
    path = _suite(tmp_path, GOOD + "judge:\n  base_url: http://127.0.0.1:9/v1\n  model: any\n  anything: 1\n")
    line = GOOD.count("\n") + 4
    with pytest.raises(
        ConfigError, match=rf"suite.yaml:{line}: judge.anything: unknown setting \(known: base_url"
    ):
        load_suite(path)


def test_harness_suite_get_with_body_is_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_TEST_KEY", "k")
    text = GOOD.replace("  headers:", "  method: get\n  body: {q: x}\n  headers:")
    with pytest.raises(ConfigError, match="a GET request has no body; put the question in 'params'"):
        load_suite(_suite(tmp_path, text))


def test_harness_suite_sample_without_question_is_an_error_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Any
) -> None:
    monkeypatch.setenv("RAG_TEST_KEY", "k")
    path = _suite(tmp_path, GOOD)
    dataset = tmp_path / "tests.yaml"
    dataset.write_text("samples:\n  - id: q-1\n    input: {topic: hi}\n", encoding="utf-8")
    assert _run_error(path, cli) == (
        f"Error: {dataset}: sample 'q-1' has no question (give 'input' as a string, 'input.question' or 'question')"
    )
    # a body template that does not use the question needs none
    text = GOOD.replace("  headers:", "  body: {text: '{{ sample.input.topic }}'}\n  headers:")
    assert load_suite(_suite_again(path, text)).suite.system.uses_question() is False  # type: ignore[union-attr]


def _suite_again(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path
