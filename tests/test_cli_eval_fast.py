"""The quick ``eval --qrels --run [--json]`` answers every command line as the full command does.

Same exit code, same stdout (the JSON, times aside, or the table) and same stderr, for good runs, bad options and
every input the strict TREC readers refuse; what the quick path does not read goes to the full command.
"""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

import ragmeter.cli.eval_fast as eval_fast
from ragmeter.cli import main
from ragmeter.cli.eval_fast import parse_eval_args
from ragmeter.metrics.names import MAX_K

FILES = {
    "q": b"q 0 a 1\nq 0 c 2\nz 0 a 1\n",
    "r": b"q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\nq Q0 c 3 1.0 t\n",
    "q_bom": b"\xef\xbb\xbfq 0 a 1\n",
    "q_frac": b"q 0 a 1.5\n",
    "q_utf16": "q 0 a 1\n".encode("utf-16"),
    "r_latin1": b"q Q0 a 1 1.0 caf\xe9\n",
    "r_nan": b"q Q0 a 1 NaN t\n",
    "r_huge": b"q Q0 a 1 1e999 t\n",
    "r_control": b"q Q0 a\x01 1 1.0 t\n",
    "r_short": b"q Q0 a 1\n",
    "empty": b"",
    "r.json": b'{"q": {"b": 2.0, "a": 1.0, "c": 1.0}}',
    "q.csv": b"q_id,doc_id,rel\nq,a,1\nq,c,2\nz,a,1\n",
    "r.tsv": b"query\tdoc_id\tscore\nq\tb\t2.0\nq\ta\t1.0\n",
    "r.jsonl": b'{"q_id": "q", "doc_id": "b", "score": 2.0}\n',
}
Q, R = ["--qrels", "q"], ["--run", "r"]
CASES = [
    [*Q, *R, "--json"],
    [*Q, *R, "--json", "-m", "map", "--metric=P.5,10", "-k", "3", "-l", "2", "-c", "--trec-compat"],
    [*Q, *R, "--json", "-k", "0"],
    [*Q, *R, "--json", "-k", str(MAX_K + 1)],
    [*Q, *R, "--json", "-k", "9" * 30],
    [*Q, *R, "--json", "-l", "0"],
    [*Q, *R, "--json", "-l", "1e999"],
    [*Q, *R, "--json", "-m", "nosuch"],
    [*Q, *R, "--json", "--out", "out"],
    [*Q, *R, "--json", "-o", "outputs.jsonl"],
    [*Q, "--json"],
    ["--qrels", "q.gz", "--run", "r.gz", "--json"],
    ["--qrels", "q_bom", *R, "--json"],
    ["--qrels", "q_frac", *R, "--json"],
    ["--qrels", "q_frac", *R, "--json", "--trec-compat"],
    ["--qrels", "q_utf16", *R, "--json"],
    ["--qrels", "empty", *R, "--json"],
    ["--qrels", "missing", *R, "--json"],
    ["--qrels", ".", *R, "--json"],
    *([*Q, "--run", bad, "--json"] for bad in ("r_latin1", "r_nan", "r_huge", "r_control", "r_short")),
    # main's formats and conventions: each goes to the full command
    [*Q, "--run", "r.json", "--json"],
    ["--qrels", "q.csv", *R, "--json"],
    [*Q, "--run", "r.tsv", "--json", "--columns", "q_id=query"],
    [*Q, "--run", "r.jsonl", "--json"],
    [*Q, *R, "--json", "--columns", "q_id=query"],
    [*Q, *R, "--json", "--columns", "nosuch=x"],
    [*Q, *R, "--json", "--split", "dev"],
    [*Q, *R, "--json", "--limit", "1"],
    [*Q, *R, "--json", "--limit", "0"],
    [*Q, *R, "--json", "--limit=5"],
    [*Q, *R, "--format", "json"],
    [*Q, *R, "--format", "trec"],
    [*Q, *R, "--json", "--format", "trec"],
    [*Q, *R, "--json", "--format", "xml"],
    [*Q, *R, "--json", "-o", "results"],
    [*Q, *R, "--json", "-o", "a", "--out", "b"],
    [*Q, *R, "--json", "--json"],
    [*Q, *R, "--json", "-c", "--complete"],
    [*Q, *R, "--json", "--trec-compat", "--no-trec-compat"],
    [*Q, *R, "--json", "-k", "3", "-k", "4"],
    [*Q, *R, "--json", "-m", "map", "-m", "map"],
    [*Q, *R, "--qrels", "q_bom", "--json"],
    [*Q, *R, "--json", "--"],
    ["--qrels", "-", *R, "--json"],
    [*Q, "--run", "-", "--json"],
    ["--qrels", "-", "--run", "-", "--json"],
    ["--qrels", ".", "--run", ".", "--json"],
    ["--qrels", "irds:nosuch/dataset", *R, "--json"],
    [*Q, *R, "--json", "-h"],
    [*Q, *R, "--json", "--help"],
    [*Q, *R, "--json", "-V"],
    [*Q, *R, "--json", "--version"],
]
CASES += [[a for a in case if a != "--json"] for case in CASES if case.count("--json") == 1]
"""Each command line again without ``--json``: the table (to stdout) and the warnings (to stderr)."""
STDIN = FILES["r"]
"""What ``-`` reads (the run; the qrels read it too in the cases that name it)."""


def _answer(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[object, ...]:
    monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(STDIN)))
    with pytest.raises(SystemExit) as done:
        main(["eval", *args])
    out, err = capsys.readouterr()
    if out.startswith("{"):
        data = json.loads(out)
        for key in ("created_at", "elapsed_seconds"):
            data["provenance"].pop(key)
        out = json.dumps(data)
    return done.value.code, out, err


@pytest.mark.parametrize("args", CASES, ids=[" ".join(c) for c in CASES])
def test_the_quick_path_answers_as_the_full_command(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    for name in ("q", "r"):
        (tmp_path / f"{name}.gz").write_bytes(gzip.compress(FILES[name]))
    (tmp_path / "results").mkdir()
    monkeypatch.chdir(tmp_path)
    quick = _answer(args, capsys, monkeypatch)
    monkeypatch.setattr(eval_fast, "fast_eval", lambda _args: False)
    full = _answer(args, capsys, monkeypatch)
    assert quick == full


PLAIN = ["eval", "--qrels", "q", "--run", "r", "--json"]


@pytest.fixture
def plain_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("q", "r"):
        (tmp_path / name).write_bytes(FILES[name])
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.usefixtures("plain_files")
def test_the_quick_path_takes_plain_command_lines_only() -> None:
    """The comparison above proves something only if the quick path answers some of its cases."""
    assert parse_eval_args(PLAIN) is not None
    assert parse_eval_args([*PLAIN, "-m", "map", "--metric=P.5", "-k", "3", "-l", "2", "-c", "--trec-compat"])
    for extra in (
        ["--columns", "q_id=query"],
        ["--split", "dev"],
        ["--limit", "1"],
        ["--format", "json"],
        ["-o", "results"],
        ["--out=results"],
        ["-h"],
        ["-V"],
        ["-k", "3", "-k", "3"],
        ["--"],
    ):
        assert parse_eval_args([*PLAIN, *extra]) is None, extra
    for qrels in ("-", "q.gz", "q.json", "q.csv", "q.parquet", "q.TSV", ".", "irds:x", "missing"):
        assert parse_eval_args(["eval", "--qrels", qrels, "--run", "r", "--json"]) is None, qrels


@pytest.mark.usefixtures("plain_files")
def test_a_cutoff_typer_refuses_goes_to_the_full_command() -> None:
    plain = PLAIN
    assert parse_eval_args([*plain, "-k", str(MAX_K)]) is not None
    for k in ("0", str(MAX_K + 1), "9" * 5000, "+3", "3.0"):
        assert parse_eval_args([*plain, "-k", k]) is None, k
