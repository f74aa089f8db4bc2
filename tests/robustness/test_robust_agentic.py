"""``ragmeter agentic``: unknown trace shapes, misspelt fields, bad labels, options and paths are one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

RESULT = {"url": "https://a.org/x", "gain": 3}


def _trace(result: dict[str, Any] | None = None, **changes: Any) -> str:
    turn = {"user": "q", "iterations": [{"searches": [{"query": "q", "results": [result or RESULT]}]}]}
    return json.dumps({"trace_id": "t1", "turns": [turn], **changes}) + "\n"


def _agentic(folder: Path, traces: str, *extra: str, name: str = "t.jsonl") -> list[str]:
    (folder / name).write_text(traces, encoding="utf-8")
    return ["agentic", "-t", name, "-o", "out.json", *extra]


TRACES = {
    "unknown-format": ('{"spans": []}\n', "t.jsonl:1", "cannot tell the trace format"),
    "run-dict": ('{"t1": {"https://a.org/x": 1.0}}\n', "t.jsonl:1", "cannot tell the trace format"),
    "result-typo": (_trace({"url": "https://a.org/x", "gian": 3}), "results[0]", "did you mean 'gain'"),
    "turn-typo": (
        json.dumps({"trace_id": "t1", "turns": [{"usr": "q", "iterations": []}]}) + "\n",
        "turns[0].usr",
        "did you mean 'user'",
    ),
    "trace-typo": (_trace(task_="x").replace('"task_"', '"tsk"'), "tsk", "did you mean 'task'"),
    "gain-high": (_trace({"url": "https://a.org/x", "gain": 5}), "results[0].gain"),
    "gain-text": (_trace({"url": "https://a.org/x", "gain": "3"}), "results[0].gain"),
    "no-turns": ('{"trace_id": "t1", "turns": []}\n', "turns"),
    "duplicate-trace": (_trace() + _trace(), "t.jsonl:2", "duplicate trace_id 't1'"),
    "not-an-object": ("[1, 2]\n", "t.jsonl:1"),
}


@pytest.mark.parametrize("case", list(TRACES), ids=list(TRACES))
def test_a_bad_trace_file_is_one_line(refused: Any, tmp_path: Path, case: str) -> None:
    text, *fragments = TRACES[case]
    refused(_agentic(tmp_path, text), *fragments)


LABELS = {
    "typo": (
        '{"trace_id": "t1", "url": "https://a.org/x", "gian": 3}\n',
        "l.jsonl:1: gian: unknown field; did you mean 'gain'?",
    ),
    "no-gain": ('{"trace_id": "t1", "url": "https://a.org/x"}\n', "l.jsonl:1: gain: Field required"),
    "two-references": (
        '{"trace_id": "t1", "url": "u", "id": "i", "gain": 1}\n',
        "exactly one of key, domain_id, id or url",
    ),
    "gain-negative": ('{"trace_id": "t1", "url": "u", "gain": -1}\n', "l.jsonl:1: gain"),
    "gain-infinite": ('{"trace_id": "t1", "url": "u", "gain": 1e999}\n', "l.jsonl:1: gain"),
    "bad-key": ('{"trace_id": "t1", "key": "doi:1", "gain": 1}\n', "l.jsonl:1: key: expected"),
    "conflict": (
        '{"trace_id": "t1", "url": "https://a.org/x", "gain": 1}\n{"trace_id": "t1", "url": "https://a.org/x", "gain": 2}\n',
        "l.jsonl:2",
    ),
}


@pytest.mark.parametrize("case", list(LABELS), ids=list(LABELS))
def test_a_bad_labels_file_is_one_line(refused: Any, tmp_path: Path, case: str) -> None:
    text, fragment = LABELS[case]
    (tmp_path / "l.jsonl").write_text(text, encoding="utf-8")
    refused(_agentic(tmp_path, _trace(), "-l", "l.jsonl"), fragment)


@pytest.mark.parametrize(
    ("extra", "fragments"),
    [
        (("-f", "jaeger"), ("--format must be one of",)),
        (("-l", "D"), ("D: is a directory",)),
        (("--judge-config", "D"), ("D: is a directory",)),
        (
            ("--judge-config", "j.yaml"),
            ("j.yaml: judge: must be a mapping of judge settings", "'yes please'"),
        ),
        (
            ("--judge-config", "typo.yaml"),
            ("typo.yaml: judge: modle: unknown setting", "did you mean 'model'"),
        ),
        (("--judge-config", "url.yaml"), ("url.yaml: judge: base_url: has no host",)),
    ],
)
def test_bad_agentic_options_are_refused(
    refused: Any, tmp_path: Path, extra: tuple[str, ...], fragments: tuple[str, ...]
) -> None:
    (tmp_path / "D").mkdir()
    (tmp_path / "j.yaml").write_text("judge: yes please\n", encoding="utf-8")
    (tmp_path / "typo.yaml").write_text(
        "judge: {base_url: 'http://127.0.0.1:9/v1', modle: m}\n", encoding="utf-8"
    )
    (tmp_path / "url.yaml").write_text("judge: {base_url: 'http://', model: m}\n", encoding="utf-8")
    refused(_agentic(tmp_path, _trace(), *extra), *fragments)


@pytest.mark.parametrize(
    ("out", "fragment"),
    [("D", "D: is a directory; expected a file name"), ("afile/out.json", "afile is a file, not a folder")],
)
def test_a_bad_out_path_is_refused_before_any_work(
    refused: Any, tmp_path: Path, out: str, fragment: str
) -> None:
    (tmp_path / "D").mkdir()
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    argv = _agentic(tmp_path, _trace())
    argv[argv.index("-o") + 1] = out
    refused(argv, fragment)


@pytest.mark.parametrize("target", ["missing.jsonl", "D"])
def test_the_traces_path_must_be_a_file(refused: Any, tmp_path: Path, target: str) -> None:
    (tmp_path / "D").mkdir()
    refused(["agentic", "-t", target], target)


def test_extra_result_fields_are_still_allowed(accepted: Any, tmp_path: Path) -> None:
    result = {"url": "https://a.org/x", "gain": 3, "score": 0.5, "published": "2024"}
    out = json.loads(accepted([*_agentic(tmp_path, _trace(result)), "--json"]))
    assert out["aggregate"]["averages_at_n"]["CG"] == 3.0
