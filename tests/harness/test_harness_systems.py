"""Several systems in one suite: the same questions, one concurrency limit, per-system folders and resume."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from ragmeter.harness.multi_run import run_systems
from ragmeter.harness.suite import load_suite


def _suite(tmp_path: Path, h: SimpleNamespace, systems: dict[str, Any], n: int = 6, **fields: Any) -> Path:
    h.write_dataset(tmp_path, n)
    path = h.write_suite(tmp_path, {}, **fields)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    del data["system"]
    data["systems"] = systems
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _python(h: SimpleNamespace, function: str) -> dict[str, Any]:
    return {"type": "python", "function": f"harness_fake_rag:{function}", "python_path": [str(h.here)]}


def test_every_system_gets_the_same_questions_under_one_concurrency_limit(
    tmp_path: Path, h: SimpleNamespace, rag_server: Any, cli: Any
) -> None:
    rag_server.delay = 0.02
    systems = {"first": h.http_system(rag_server.url), "second": h.http_system(rag_server.url)}
    suite = _suite(tmp_path, h, systems, n=8, concurrency=2)
    code, out, err = cli(["run", str(suite), "--no-record"])
    assert code == 0, err
    assert rag_server.max_inflight == 2  # two systems, two workers each: still two calls in flight in all
    assert sorted(rag_server.ids()) == sorted([f"q-{i}" for i in range(1, 9)] * 2)
    folder = tmp_path / "out"
    for name in systems:
        assert (folder / name / "metrics.json").is_file() and (folder / name / "report.html").is_file()
        config = json.loads((folder / name / "config.json").read_text(encoding="utf-8"))
        assert config["system_name"] == name and config["suite"]["system"]["type"] == "http"
    comparison = json.loads((folder / "comparison.json").read_text(encoding="utf-8"))
    assert comparison["systems"] == ["first", "second"] and comparison["baseline"] == "first"
    page = (folder / "report.html").read_text(encoding="utf-8")
    assert 'data-view="compare"' in page and 'href="second/report.html"' in page
    assert out.startswith("8 questions, 2 systems\nmetric  a first  b second\nhit@2")
    assert "first: asked 8 question(s)" in err and "second: asked 8 question(s)" in err
    assert f"results: {folder}/ (first, second, comparison.json, report.html)" in err


def test_each_system_resumes_where_it_stopped(tmp_path: Path, h: SimpleNamespace, rag_server: Any) -> None:
    systems = {
        "a": h.http_system(rag_server.url),
        "b": h.http_system(rag_server.url),
        "c": _python(h, "answer"),
    }
    suite = _suite(tmp_path, h, systems, n=5, baseline="b")
    first = run_systems(suite)
    assert first.comparison is not None and first.comparison.baseline == "b"
    assert [(c.baseline, c.candidate) for c in first.comparison.comparisons] == [("b", "a"), ("b", "c")]
    outputs = tmp_path / "out" / "a" / "outputs.jsonl"
    lines = outputs.read_text(encoding="utf-8").splitlines(keepends=True)
    outputs.write_text("".join(lines[:2]), encoding="utf-8")  # a crash after two answers of system a
    asked_before = len(rag_server.ids())
    notes: list[str] = []
    again = run_systems(suite, resume=True, notify=notes.append)
    assert len(rag_server.ids()) - asked_before == 3  # only system a's three missing questions
    assert again.outcomes["a"].summary.n_called == 3 and again.outcomes["a"].summary.n_resumed == 2
    assert again.outcomes["b"].summary.n_called == 0 and again.outcomes["c"].summary.n_called == 0
    assert "a: resuming out/a: 2 of 5 questions already answered" in [
        n.replace(str(tmp_path) + "/", "") for n in notes
    ]
    assert again.outcomes["a"].result.aggregate == first.outcomes["a"].result.aggregate


def test_a_system_that_refuses_stops_only_itself(
    tmp_path: Path, h: SimpleNamespace, closed_port: int, cli: Any
) -> None:
    systems = {"up": _python(h, "answer"), "down": h.http_system(f"http://127.0.0.1:{closed_port}/ask")}
    suite = _suite(tmp_path, h, systems, n=4, retries=0)
    code, _, err = cli(["run", str(suite), "--no-record", "--no-report"])
    assert code == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"Error: {suite}:") and "systems.down.url: cannot reach" in line
    assert line.endswith("(the other systems were scored: up)")
    assert (tmp_path / "out" / "up" / "metrics.json").is_file()
    assert not (tmp_path / "out" / "down" / "metrics.json").exists()


SUITE = """\
name: pair
dataset: tests.yaml
systems:
  one:
    type: http
    url: http://127.0.0.1:9/ask
  two:
    type: python
    function: harness_fake_rag:answer
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            SUITE.replace("    url:", "    urll:"),
            "{path}:6: systems.one.urll: unknown key; did you mean 'url'?",
        ),
        (
            SUITE.replace("http://127.0.0.1:9/ask", "127.0.0.1:9/ask"),
            "{path}:6: systems.one.url: must start with http:// or https://, got '127.0.0.1:9/ask'",
        ),
        (
            SUITE.replace("type: python", "type: pyton"),
            "{path}:8: systems.two.type: unknown system type 'pyton' (expected one of: http, python, builtin, "
            "langchain, llamaindex, haystack, dspy)",
        ),
        (
            SUITE + "baseline: tow\n",
            "{path}:10: baseline: 'tow' is not one of the systems; did you mean 'two'?",
        ),
        (
            SUITE + "system:\n  type: python\n  function: m:f\n",
            "{path}:3: systems: give either 'system' (one) or 'systems' (several by name), not both",
        ),
        (
            "name: x\ndataset: tests.yaml\n",
            "{path}:1: system: required key is missing (or list several under 'systems', each by name)",
        ),
        (
            SUITE.replace("  two:", "  two words:"),
            "{path}:3: systems: system name 'two words' must start with a letter or digit and hold only letters, "
            "digits, '.', '_' and '-' (it names a results folder)",
        ),
        ("name: x\ndataset: tests.yaml\nsystems: {}\n", "{path}:3: systems: must name at least one system"),
        (
            "name: x\ndataset: tests.yaml\nsystem: {type: python, function: m:f}\nbaseline: a\n",
            "{path}:4: baseline: a baseline needs several systems under 'systems'",
        ),
    ],
)
def test_suite_errors_name_the_system(tmp_path: Path, text: str, expected: str, cli: Any) -> None:
    (tmp_path / "tests.yaml").write_text("samples:\n  - id: q-1\n    input: hi\n", encoding="utf-8")
    path = tmp_path / "suite.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    code, _, err = cli(["run", str(path)])
    assert code == 2 and err.strip() == "Error: " + expected.format(path=path)


def test_the_compare_example_is_two_settings_of_the_builtin_pipeline() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "compare.yaml"
    loaded = load_suite(example)
    views = loaded.system_views()
    assert [v.system_name for v in views] == ["bm25-default", "bm25-b0.1"]
    assert {v.system.type for v in views} == {"builtin"}
    assert [v.results_dir.name for v in views] == ["bm25-default", "bm25-b0.1"]
    assert views[1].system.model_extra == {"bm25_b": 0.1}
