"""JSON Lines files (outputs, datasets, traces, labels, per-query results): the error names the right line.

Lines end at ``\\n`` only; blank lines are skipped but counted, so line 1 is line 1 and a bad record
after a blank line is named by its own number.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

TRACE = '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"query": "q", "results": [{"url": "https://a.example/x"}]}]}]}]}'

BAD_LINES = {
    "invalid JSON": (
        b"{oops}",
        "invalid JSON (Expecting property name enclosed in double quotes at column 2)",
    ),
    "repeated key": (b'{"id": "q9", "id": "q8"}', "duplicate key 'id' in one object"),
    "NaN": (b'{"id": "q9", "x": NaN}', "x: NaN is not a number JSON allows"),
    "nested 30000 deep": (b"[" * 30_000 + b"]" * 30_000, "invalid JSON (nested too deeply to read)"),
    "5000 digits": (b'{"id": ' + b"7" * 5000 + b"}", "invalid JSON (a number has too many digits)"),
    "not UTF-8": (b'{"id": "caf\xe9"}', "not UTF-8 text: byte 0xe9 (column 12) cannot be decoded"),
    "NUL": (b"\x00", "invalid JSON (Expecting value at column 1)"),
    "truncated last line": (b'{"id": "q9", "out', "invalid JSON (Unterminated string starting at column 14)"),
}


def _outputs(tmp_path: Path, lines: list[bytes]) -> list[str]:
    (tmp_path / "d.yaml").write_text("samples:\n  - {id: q1, expected_output: [d1]}\n", encoding="utf-8")
    (tmp_path / "o.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return ["eval", "--dataset", "d.yaml", "--outputs", "o.jsonl", "-m", "hit@1"]


def _dataset(tmp_path: Path, lines: list[bytes]) -> list[str]:
    (tmp_path / "d.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (tmp_path / "o.jsonl").write_text('{"id": "q1", "output": ["d1"]}\n', encoding="utf-8")
    return ["eval", "--dataset", "d.jsonl", "--outputs", "o.jsonl", "-m", "hit@1"]


def _traces(tmp_path: Path, lines: list[bytes]) -> list[str]:
    (tmp_path / "t.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return ["agentic", "-t", "t.jsonl", "-f", "native"]


def _labels(tmp_path: Path, lines: list[bytes]) -> list[str]:
    (tmp_path / "t.jsonl").write_text(TRACE + "\n", encoding="utf-8")
    (tmp_path / "l.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return ["agentic", "-t", "t.jsonl", "-l", "l.jsonl"]


def _per_query(tmp_path: Path, lines: list[bytes]) -> list[str]:
    (tmp_path / "res" / "per_query.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return ["report", "res", "--out", "r.html"]


READERS: dict[str, tuple[Callable[[Path, list[bytes]], list[str]], str, bytes]] = {
    "outputs": (_outputs, "o.jsonl", b'{"id": "q1", "output": ["d1"]}'),
    "dataset": (_dataset, "d.jsonl", b'{"id": "q1", "expected_output": ["d1"]}'),
    "traces": (_traces, "t.jsonl", TRACE.encode()),
    "labels": (_labels, "l.jsonl", b'{"trace_id": "t1", "url": "https://a.example/x", "gain": 3}'),
    "per-query results": (_per_query, "per_query.jsonl", b'{"id": "q1", "metrics": {"mrr": 0.5}}'),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("case", list(BAD_LINES))
def test_a_bad_line_after_a_blank_one_is_named_by_its_number(
    refused: Any, results_folder: Any, tmp_path: Path, reader: str, case: str
) -> None:
    results_folder(tmp_path / "res")  # for the per-query reader
    make, name, good = READERS[reader]
    bad, message = BAD_LINES[case]
    refused(make(tmp_path, [good, b"", bad]), f"{name}:3: {message}")


@pytest.mark.parametrize("reader", list(READERS))
def test_a_bad_first_line_is_line_1(refused: Any, results_folder: Any, tmp_path: Path, reader: str) -> None:
    results_folder(tmp_path / "res")  # for the per-query reader
    make, name, good = READERS[reader]
    refused(make(tmp_path, [b'{"id": "x",}', good]), f"{name}:1: invalid JSON")


@pytest.mark.parametrize("reader", ["outputs", "dataset", "per-query results"])
def test_a_line_that_is_not_an_object(refused: Any, results_folder: Any, tmp_path: Path, reader: str) -> None:
    results_folder(tmp_path / "res")  # for the per-query reader
    make, name, good = READERS[reader]
    refused(make(tmp_path, [good, b"\r", b"[1, 2]"]), f"{name}:3: ")
