"""JSON files (datasets, outputs, configs, suites, registries, traces, saved results): one line naming file and line.

A repeated key, ``NaN``/``Infinity``, nesting 30,000 deep, a number of 5,000 digits and plain
syntax errors are refused by every JSON reader, with the line where the problem is.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

BROKEN = {
    "repeated key": ('{"a": 1,\n "b": 2,\n "a": 3}\n', ":3: duplicate key 'a' in one object"),
    "repeated nested key": (
        '{"x": [\n  {"id": "q1",\n   "id": "q2"}]}\n',
        ":3: duplicate key 'id' in one object",
    ),
    "NaN": ('{"a": 1,\n "score": NaN}\n', ":2: score: NaN is not a number JSON allows"),
    "Infinity": ("[1,\n Infinity]\n", ":2: [1]: Infinity is not a number JSON allows"),
    "-Infinity": ('{"k": -Infinity}\n', ":1: k: -Infinity is not a number JSON allows"),
    "nested 30000 deep": ("[" * 30_000 + "]" * 30_000 + "\n", ": invalid JSON (nested too deeply to read)"),
    "5000 digits": ('{"a": ' + "7" * 5000 + "}\n", ": invalid JSON (a number has too many digits)"),
    "trailing comma": (
        '{"a": 1,\n}\n',
        ":2: invalid JSON (Expecting property name enclosed in double quotes)",
    ),
    "truncated": ('{"a": [1, 2\n', ":2: invalid JSON (Expecting ',' delimiter)"),
    "extra data": ('{"a": 1}\n{"b": 2}\n', ":2: invalid JSON (Extra data)"),
    "single quotes": ("{'a': 1}\n", ":1: invalid JSON (Expecting property name enclosed in double quotes)"),
    "comment": ('{"a": 1 // one\n}\n', ":1: invalid JSON (Expecting ',' delimiter)"),
    "raw control character": ('{"a": "x\ty"}\n', ":1: invalid JSON (Invalid control character at)"),
    # A surrogate pair is one character; half of one is not (no UTF-8 file can hold it).
    "lone surrogate": (
        '{"a": "\\ud83d\\ude00",\n "t": ["x\\ud800y"]}\n',
        ":2: t[0]: \\ud800 is half of a UTF-16 surrogate pair",
    ),
    "lone low surrogate in a key": (
        '{"k\\udc00": 1}\n',
        ":1: ['k\\udc00']: \\udc00 is half of a UTF-16 surrogate pair",
    ),
}


def _put(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text, encoding="utf-8")


def _dataset(tmp_path: Path, text: str) -> list[str]:
    _put(tmp_path, "d.json", text)
    _put(tmp_path, "o.jsonl", '{"id": "q1", "output": ["d1"]}\n')
    return ["eval", "--dataset", "d.json", "--outputs", "o.jsonl", "-m", "hit@1"]


def _outputs(tmp_path: Path, text: str) -> list[str]:
    _put(tmp_path, "d.yaml", "samples:\n  - {id: q1, expected_output: [d1]}\n")
    _put(tmp_path, "o.json", text)
    return ["eval", "--dataset", "d.yaml", "--outputs", "o.json", "-m", "hit@1"]


def _config(tmp_path: Path, text: str) -> list[str]:
    _put(tmp_path, "c.json", text)
    return [*_outputs(tmp_path, '{"q1": ["d1"]}'), "--config", "c.json"]


def _suite(tmp_path: Path, text: str) -> list[str]:
    _put(tmp_path, "s.json", text)
    return ["run", "s.json", "--no-record", "--no-report"]


def _registry(tmp_path: Path, text: str) -> list[str]:
    _put(tmp_path, "r.json", text)
    return ["mine", "run", "r.json", "--out", "mined.yaml"]


def _traces(tmp_path: Path, text: str) -> list[str]:
    _put(tmp_path, "t.json", text)
    return ["agentic", "-t", "t.json"]


def _report(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "res" / "metrics.json").write_text(text, encoding="utf-8")
    return ["report", "res", "--out", "r.html"]


def _report_config(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "res" / "config.json").write_text(text, encoding="utf-8")
    return ["report", "res", "--out", "r.html"]


def _compare(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "b" / "metrics.json").write_text(text, encoding="utf-8")
    return ["compare", "a", "b", "--resamples", "100"]


def _gate(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "a" / "metrics.json").write_text(text, encoding="utf-8")
    return ["gate", "a", "b", "--fail-on", "mrr<-0.1", "--resamples", "100"]


READERS: dict[str, tuple[Callable[[Path, str], list[str]], str]] = {
    "dataset": (_dataset, "d.json"),
    "outputs": (_outputs, "o.json"),
    "config": (_config, "c.json"),
    "suite": (_suite, "s.json"),
    "registry": (_registry, "r.json"),
    "traces": (_traces, "t.json"),
    "report": (_report, "metrics.json"),
    "report config.json": (_report_config, "config.json"),
    "compare": (_compare, "metrics.json"),
    "gate": (_gate, "metrics.json"),
}


@pytest.mark.parametrize(
    ("reader", "case"),
    # A trace file may be JSON Lines whatever its name: two objects on two lines are two traces.
    [(r, c) for r in READERS for c in BROKEN if (r, c) != ("traces", "extra data")],
)
def test_broken_json_is_one_line_naming_file_and_line(
    refused: Any, results_folder: Any, tmp_path: Path, reader: str, case: str
) -> None:
    make, name = READERS[reader]
    text, fragment = BROKEN[case]
    for folder in ("res", "a", "b"):  # saved results, for report, compare and gate to read
        results_folder(tmp_path / folder)
    refused(make(tmp_path, text), f"{name}{fragment}")
