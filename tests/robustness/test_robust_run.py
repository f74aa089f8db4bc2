"""``ragmeter run``: every suite error is found when the suite loads, before any question is asked.

A refused run leaves no results folder and changes no file (the ``refused`` fixture checks it):
an unknown response-mapping field, a typo in ``judge:``, a malformed URL, an unreadable
``config.json`` under ``--resume``, a history file of another program.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

DATASET = "- id: q1\n  input: What is one?\n  expected_output: [d1]\n- id: q2\n  input: Two?\n  expected_output: [d2]\n"
HTTP = "name: s\ndataset: d.yaml\nsystem:\n  type: http\n  url: http://127.0.0.1:9/ask\n"
PYTHON = "name: s\ndataset: d.yaml\nsystem:\n  type: python\n  function: robust_run_system:answer\n"
SYSTEM = "def answer(sample):\n    return {'retrieved': ['d1'], 'answer': 'one'}\n"


def _suite(folder: Path, text: str, *, dataset: str = DATASET) -> list[str]:
    (folder / "d.yaml").write_text(dataset, encoding="utf-8")
    (folder / "s.yaml").write_text(text, encoding="utf-8")
    (folder / "robust_run_system.py").write_text(SYSTEM, encoding="utf-8")
    return ["run", "s.yaml", "--quiet", "--no-record", "--no-report"]


# -- the http response mapping ----------------------------------------------------------------------

RESPONSES = {
    "misspelt": (
        "  response:\n    retreived: chunks\n",
        "s.yaml:7: system.response.retreived",
        "did you mean 'retrieved'",
    ),
    "unknown": (
        "  response:\n    chunks: data.chunks\n",
        "s.yaml:7: system.response.chunks",
        "the output fields are",
    ),
    "second-key": (
        "  response:\n    answer: a\n    refrences: refs\n",
        "s.yaml:8: system.response.refrences",
        "did you mean 'references'",
    ),
    "case": ("  response:\n    Answer: a\n", "system.response.Answer", "did you mean 'answer'"),
    "empty": ("  response: {}\n", "s.yaml:6: system.response", "at least one output field"),
    "bad-jmespath": ("  response:\n    answer: 'data.[[['\n", "system.response", "JMESPath"),
    "not-a-mapping": ("  response: [answer]\n", "system.response", "dictionary"),
}


@pytest.mark.parametrize("case", list(RESPONSES), ids=list(RESPONSES))
def test_a_bad_response_mapping_is_an_error_at_load_time(refused: Any, tmp_path: Path, case: str) -> None:
    text, *fragments = RESPONSES[case]
    refused(_suite(tmp_path, HTTP + text), *fragments)


# -- the judge: block --------------------------------------------------------------------------------

JUDGES = {
    "text": ("judge: yes please\n", "s.yaml:6: judge", "must be a mapping of judge settings", "'yes please'"),
    "true": ("judge: true\n", "s.yaml:6: judge", "got true"),
    "typo": (
        "judge:\n  base_url: http://127.0.0.1:9/v1\n  modle: m\n",
        "s.yaml:8: judge.modle",
        "did you mean 'model'",
    ),
    "missing-model": ("judge:\n  base_url: http://127.0.0.1:9/v1\n", "judge.model", "Field required"),
    "no-host": ("judge:\n  base_url: 'http://'\n  model: m\n", "s.yaml:7: judge.base_url", "has no host"),
    "bad-scheme": (
        "judge:\n  base_url: localhost:8000/v1\n  model: m\n",
        "judge.base_url",
        "must start with http://",
    ),
    "temperature": ("judge:\n  base_url: http://h/v1\n  model: m\n  temperature: 1\n", "judge.temperature"),
    "nested-typo": (
        "judge:\n  base_url: http://h/v1\n  model: m\n  reliability:\n    fracton: 0.1\n",
        "s.yaml:10: judge.reliability.fracton",
        "did you mean 'fraction'",
    ),
    "concurrency": ("judge:\n  base_url: http://h/v1\n  model: m\n  concurrency: 0\n", "judge.concurrency"),
    # a block with only bertscore: needs no endpoint, but its settings are still checked
    "bertscore-typo": (
        "judge:\n  bertscore:\n    modle: x\n",
        "s.yaml:8: judge.bertscore.modle",
        "did you mean 'model'",
    ),
    "bertscore-layers": ("judge:\n  bertscore:\n    num_layers: 0\n", "s.yaml:8: judge.bertscore.num_layers"),
    "bertscore-and-a-typo": (
        "judge:\n  bertscore: {}\n  modle: m\n",
        "s.yaml:8: judge.modle",
        "did you mean 'model'",
    ),
    "bertscore-and-a-bad-url": (
        "judge:\n  bertscore: {}\n  base_url: localhost:8000/v1\n  model: m\n",
        "judge.base_url",
        "must start with http://",
    ),
}


@pytest.mark.parametrize("case", list(JUDGES), ids=list(JUDGES))
def test_a_bad_judge_block_is_an_error_before_any_question(refused: Any, tmp_path: Path, case: str) -> None:
    text, *fragments = JUDGES[case]
    refused(_suite(tmp_path, PYTHON + text), *fragments)


def test_a_judge_block_with_only_bertscore_needs_no_endpoint(accepted: Any, tmp_path: Path) -> None:
    block = "judge:\n  bertscore:\n    thresholds: {all-MiniLM-L6-v2: 0.8}\n"
    accepted(_suite(tmp_path, PYTHON + "metrics: [hit@1]\n" + block))


# -- URLs ----------------------------------------------------------------------------------------------

URLS = {
    "scheme-only": ("'http://'", "has no host"),
    "https-only": ("'https://'", "has no host"),
    "no-host-path": ("'http:///ask'", "has no host"),
    "ftp": ("ftp://example.org/ask", "must start with http:// or https://"),
    "no-scheme": ("localhost:8000/ask", "must start with http:// or https://"),
    "bad-port": ("http://127.0.0.1:99999/ask", "has an invalid port"),
    "port-text": ("http://127.0.0.1:port/ask", "has an invalid port"),
    "space": ("'http://exa mple.org/ask'", "must not contain white space"),
}


@pytest.mark.parametrize("case", list(URLS), ids=list(URLS))
def test_a_malformed_url_is_an_error_at_load_time(refused: Any, tmp_path: Path, case: str) -> None:
    url, problem = URLS[case]
    refused(_suite(tmp_path, HTTP.replace("http://127.0.0.1:9/ask", url)), "s.yaml:5: system.url", problem)


def test_a_url_from_the_environment_is_checked_once_expanded(
    refused: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROBUST_BASE", "http://")
    text = HTTP.replace("http://127.0.0.1:9/ask", "${ROBUST_BASE}")
    line = refused(
        _suite(tmp_path, text), "s.yaml:5: system.url", "has no host once its variables are expanded"
    )
    assert "'${ROBUST_BASE}'" in line


def test_an_unset_variable_in_the_url_is_named(refused: Any, tmp_path: Path) -> None:
    text = HTTP.replace("http://127.0.0.1:9/ask", "${ROBUST_UNSET_XYZ}/ask")
    refused(_suite(tmp_path, text), "s.yaml:5: system.url", "ROBUST_UNSET_XYZ is not set")


# -- other suite fields (every mapping field, with did-you-mean) --------------------------------------

SUITES = {
    "top-level-typo": (PYTHON + "concurency: 2\n", "s.yaml:6: concurency", "did you mean 'concurrency'"),
    "system-typo": (HTTP + "  urll: x\n", "s.yaml:6: system.urll", "did you mean 'url'"),
    "python-typo": (PYTHON + "  kwarg: {}\n", "s.yaml:6: system.kwarg", "did you mean 'kwargs'"),
    "no-type": ("name: s\ndataset: d.yaml\nsystem:\n  url: http://h/x\n", "system.type", "one of: http"),
    "unknown-type": (
        "name: s\ndataset: d.yaml\nsystem:\n  type: grpc\n",
        "system.type",
        "unknown system type 'grpc'",
    ),
    "method": (HTTP + "  method: DELETE\n", "s.yaml:6: system.method"),
    "get-with-body": (HTTP + "  method: GET\n  body: {q: x}\n", "a GET request has no body"),
    "header-number": (HTTP + "  headers:\n    X-Id: 7\n", "system.headers.X-Id"),
    "bad-function": (PYTHON.replace("robust_run_system:answer", "not a function"), "system.function"),
    "missing-module": (PYTHON.replace("robust_run_system", "robust_no_such_module"), "robust_no_such_module"),
    "missing-function": (PYTHON.replace(":answer", ":nope"), "nope"),
    "concurrency-zero": (PYTHON + "concurrency: 0\n", "s.yaml:6: concurrency"),
    "timeout-negative": (PYTHON + "timeout_seconds: -1\n", "s.yaml:6: timeout_seconds"),
    "timeout-nan": (
        PYTHON + "timeout_seconds: .nan\n",
        "s.yaml:6: invalid YAML (timeout_seconds: .nan is not",
    ),
    "retries": (PYTHON + "retries: 11\n", "s.yaml:6: retries"),
    "k-zero": (PYTHON + "k: 0\n", "s.yaml:6: k"),
    "k-text": (PYTHON + "k: '5'\n", "s.yaml:6: k"),
    "k-bool": (PYTHON + "k: true\n", "s.yaml:6: k"),
    "metric-unknown": (PYTHON + "metrics: [ndgc@5]\n", "s.yaml:6: metrics[0]", "ndgc"),
    "metrics-empty": (PYTHON + "metrics: []\n", "s.yaml:6: metrics"),
    "name": (PYTHON.replace("name: s", "name: 'a b'"), "s.yaml:1: name"),
    "no-dataset": (
        PYTHON.replace("dataset: d.yaml", "dataset: nope.yaml"),
        "s.yaml:2: dataset",
        "file not found",
    ),
    "dataset-dir": (PYTHON.replace("dataset: d.yaml", "dataset: ."), "s.yaml:2: dataset", "is a directory"),
    "builtin-vault": (
        "name: s\ndataset: d.yaml\nsystem:\n  type: builtin\n  vault: nowhere\n",
        "system.vault",
    ),
    "builtin-setting": (
        "name: s\ndataset: d.yaml\nsystem:\n  type: builtin\n  vault: .\n  max_chunk_token: 3\n",
        "system.max_chunk_token",
        "did you mean 'max_chunk_tokens'",
    ),
    "not-a-mapping": ("- a\n- b\n", "s.yaml", "a suite must be a mapping"),
}


@pytest.mark.parametrize("case", list(SUITES), ids=list(SUITES))
def test_a_bad_suite_field_is_an_error_at_load_time(refused: Any, tmp_path: Path, case: str) -> None:
    text, *fragments = SUITES[case]
    refused(_suite(tmp_path, text), *fragments)


def test_a_dataset_with_embedded_outputs_is_refused_before_any_question(refused: Any, tmp_path: Path) -> None:
    dataset = "- id: q1\n  input: One?\n  expected_output: [d1]\n  actual_output: [d1]\n"
    refused(
        _suite(tmp_path, PYTHON, dataset=dataset), "d.yaml: sample 'q1': actual_output", "system under test"
    )


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--results-dir", "taken"], ("'--results-dir'", "taken is not a folder")),
        (["--resume", "--fresh"], ("--resume and --fresh",)),
        (["--breakdowns", "bogus"], ("--breakdowns",)),
        (["--executor", "mars"], ("executor",)),
    ],
)
def test_bad_run_options_are_refused(
    refused: Any, tmp_path: Path, args: list[str], fragments: tuple[str, ...]
) -> None:
    (tmp_path / "taken").write_text("a file", encoding="utf-8")
    refused([*_suite(tmp_path, PYTHON), *args], *fragments)


@pytest.mark.parametrize("target", ["missing.yaml", "folder"])
def test_the_suite_path_must_be_a_file(refused: Any, tmp_path: Path, target: str) -> None:
    (tmp_path / "folder").mkdir()
    refused(["run", target], target, "directory" if target == "folder" else "not found")


def test_a_history_of_another_program_is_refused_before_any_question(refused: Any, tmp_path: Path) -> None:
    with sqlite3.connect(tmp_path / "h.db") as conn:
        conn.execute("CREATE TABLE orders (id INTEGER)")
    conn.close()
    argv = [*_suite(tmp_path, PYTHON)[:2], "--quiet", "--history", "h.db"]
    refused(argv, "h.db: another program's SQLite database (tables: orders)")


# -- --resume on an unreadable config.json -------------------------------------------------------------

CONFIGS = {
    "truncated": ('{"suite": {"name": "s"}, "sessions": [', "config.json:1", "invalid JSON"),
    "empty": ("", "config.json", "file is empty"),
    "a-list": ("[1, 2]", "config.json", "not the config.json of a ragmeter run"),
    "sessions-text": ('{"suite": {}, "sessions": "many"}', "config.json", "'sessions' list"),
    "duplicate-key": ('{"suite": {}, "suite": {}}', "config.json", "duplicate key"),
}


@pytest.mark.parametrize("case", list(CONFIGS), ids=list(CONFIGS))
def test_resume_refuses_an_unreadable_config_json_and_keeps_it(
    refused: Any, tmp_path: Path, case: str
) -> None:
    text, *fragments = CONFIGS[case]
    argv = _suite(tmp_path, PYTHON)
    folder = tmp_path / "results" / "s"
    folder.mkdir(parents=True)
    (folder / "outputs.jsonl").write_text('{"id": "q1", "output": {"retrieved": ["d1"]}}\n', encoding="utf-8")
    (folder / "config.json").write_text(text, encoding="utf-8")
    line = refused([*argv, "--resume"], *fragments)
    assert "--resume would replace it" in line


@pytest.mark.parametrize(
    ("recorded", "fragment"),
    [
        (
            '{"id": "q1", "output": {"docs": ["d1"]}}\n',
            "outputs.jsonl (sample 'q1'): output has none of the output fields",
        ),
        ('{"id": "q1", "output": {"retreived": ["d1"]}}\n', "did you mean 'retrieved'"),
        ('{"id": "q7", "output": {"retrieved": ["d1"]}}\n', "not in the dataset"),
        ('{"id": "q1", "output": {}}\n{oops\n{"id": "q2", "output": {}}\n', "outputs.jsonl:2: damaged line"),
    ],
)
def test_resume_refuses_recorded_outputs_it_could_not_score_before_asking(
    refused: Any, tmp_path: Path, recorded: str, fragment: str
) -> None:
    argv = _suite(tmp_path, PYTHON)
    folder = tmp_path / "results" / "s"
    folder.mkdir(parents=True)
    (folder / "outputs.jsonl").write_text(recorded, encoding="utf-8")
    refused([*argv, "--resume"], fragment)


def test_resume_refuses_a_config_json_that_is_not_utf8(refused: Any, tmp_path: Path) -> None:
    argv = _suite(tmp_path, PYTHON)
    folder = tmp_path / "results" / "s"
    folder.mkdir(parents=True)
    (folder / "outputs.jsonl").write_text('{"id": "q1", "output": {"retrieved": ["d1"]}}\n', encoding="utf-8")
    (folder / "config.json").write_bytes('{"suite": "é"}'.encode("utf-16"))
    refused([*argv, "--resume"], "config.json: the file is UTF-16 text", "--resume would replace it")


def test_a_suite_runs_and_resumes(accepted: Any, tmp_path: Path) -> None:
    argv = _suite(tmp_path, PYTHON)
    first = json.loads(accepted([*argv, "--json"]))
    assert first["aggregate"]["hit@5"] == 0.5
    again = json.loads(accepted([*argv, "--json", "--resume"]))
    assert again["aggregate"] == first["aggregate"]
    config = json.loads((tmp_path / "results" / "s" / "config.json").read_text(encoding="utf-8"))
    assert len(config["sessions"]) == 2
