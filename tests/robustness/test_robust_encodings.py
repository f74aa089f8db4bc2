"""Files that are not UTF-8 text, folders given for files, broken archives: one line naming the file.

Every reader decodes through one function, so a UTF-16 results file given to ``report`` is refused
the same way as a Latin-1 dataset or a UTF-32 suite: naming the file, the encoding and (for a bad
byte) the line. A UTF-8 byte-order mark is fine (see ``test_robust_valid.py``).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATASET = "samples:\n  - id: q1\n    expected_output: [d1]\n"
OUTPUTS = '{"id": "q1", "output": ["d1"]}\n'
SUITE = (
    "name: s\ndataset: d.yaml\nsystem: {type: http, url: 'http://127.0.0.1:9/', response: {retrieved: ids}}\n"
)
REGISTRY = "version: 1\ncorpora: {}\nsolver: {kind: python, function: 'm:f'}\nbenchmarks: []\n"
CONFIG = "metrics:\n  retrieval:\n    default_k: 3\n"
TRACE = '{"trace_id": "t1", "turns": []}\n'


def _write(tmp_path: Path, files: dict[str, str], bad: str, data: bytes) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / bad).write_bytes(data)


# reader → (files to write, the file made bad, its good text, argv)
READERS: dict[str, tuple[dict[str, str], str, str, list[str]]] = {
    "dataset": ({"o.jsonl": OUTPUTS}, "d.yaml", DATASET, ["eval", "-d", "d.yaml", "--outputs", "o.jsonl"]),
    "outputs": ({"d.yaml": DATASET}, "o.jsonl", OUTPUTS, ["eval", "-d", "d.yaml", "--outputs", "o.jsonl"]),
    "config": (
        {"d.yaml": DATASET, "o.jsonl": OUTPUTS},
        "c.yaml",
        CONFIG,
        ["eval", "-d", "d.yaml", "--outputs", "o.jsonl", "--config", "c.yaml"],
    ),
    "suite": ({"d.yaml": DATASET}, "s.yaml", SUITE, ["run", "s.yaml", "--no-record", "--no-report"]),
    "registry": ({}, "r.yaml", REGISTRY, ["mine", "run", "r.yaml", "--out", "m.yaml"]),
    "traces": ({}, "t.jsonl", TRACE, ["agentic", "-t", "t.jsonl"]),
    "report metrics.json": ({}, "res/metrics.json", "", ["report", "res", "--out", "r.html"]),
    "report per_query.jsonl": ({}, "res/per_query.jsonl", "", ["report", "res", "--out", "r.html"]),
    "compare metrics.json": ({}, "res/metrics.json", "", ["compare", "res", "other", "--resamples", "100"]),
    "gate metrics.json": (
        {},
        "res/metrics.json",
        "",
        ["gate", "other", "res", "--fail-on", "mrr<-1", "--resamples", "100"],
    ),
}

ENCODINGS: dict[str, tuple[Callable[[str], bytes], str]] = {
    "UTF-16 with a BOM": (lambda t: t.encode("utf-16"), "the file is UTF-16 text (byte-order mark FF FE)"),
    "UTF-16 big-endian with a BOM": (
        lambda t: b"\xfe\xff" + t.encode("utf-16-be"),
        "the file is UTF-16 text",
    ),
    "UTF-16 without a BOM": (lambda t: t.encode("utf-16-le"), "the file looks like UTF-16 or UTF-32 text"),
    "UTF-32": (lambda t: t.encode("utf-32"), "the file is UTF-32 text"),
    "Latin-1": (lambda t: ("\n\xe9 " + t).encode("latin-1"), ":2: not UTF-8 text: byte 0xe9 (column 1)"),
}


def _setup(tmp_path: Path, reader: str, data: Callable[[str], bytes], results: Any) -> list[str]:
    files, bad, good, argv = READERS[reader]
    if bad.startswith("res/"):
        results(tmp_path / "res")
        results(tmp_path / "other")
        good = (tmp_path / bad).read_text(encoding="utf-8")
    _write(tmp_path, files, bad, data(good))
    return argv


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_a_file_in_another_encoding_is_named(
    refused: Any, results_folder: Any, tmp_path: Path, reader: str, encoding: str
) -> None:
    data, message = ENCODINGS[encoding]
    argv = _setup(tmp_path, reader, data, results_folder)
    refused(argv, Path(READERS[reader][1]).name, message)


@pytest.mark.parametrize("reader", list(READERS))
def test_a_folder_given_for_a_file_says_so(
    refused: Any, results_folder: Any, tmp_path: Path, reader: str
) -> None:
    argv = _setup(tmp_path, reader, str.encode, results_folder)
    bad = tmp_path / READERS[reader][1]
    bad.unlink()
    bad.mkdir()
    refused(argv, Path(READERS[reader][1]).name, "is a directory")


@pytest.mark.parametrize("name", ["d.yaml.gz", "o.jsonl.gz"])
def test_a_broken_gzip_input_names_its_file(refused: Any, tmp_path: Path, name: str) -> None:
    (tmp_path / "d.yaml").write_text(DATASET, encoding="utf-8")
    (tmp_path / "o.jsonl").write_text(OUTPUTS, encoding="utf-8")
    (tmp_path / name).write_bytes(gzip.compress(b"whatever")[:-5])
    argv = ["eval", "-d", "d.yaml", "--outputs", "o.jsonl"]
    argv[argv.index(name.removesuffix(".gz"))] = name
    refused(argv, f"{name}: not a valid gzip file")
