"""The quick ``eval --qrels --run --json`` answers every command line as the full command does.

Same exit code, same stdout (the JSON, times aside) and same stderr, for good runs, bad options and
every input the strict TREC readers refuse; what the quick path does not read goes to the full command.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

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
]


def _answer(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[object, ...]:
    with pytest.raises(SystemExit) as done:
        main(["eval", *args])
    out, err = capsys.readouterr()
    if out:
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
    monkeypatch.chdir(tmp_path)
    quick = _answer(args, capsys)
    monkeypatch.setattr(eval_fast, "fast_eval", lambda _args: False)
    full = _answer(args, capsys)
    assert quick == full


def test_a_cutoff_typer_refuses_goes_to_the_full_command() -> None:
    plain = ["eval", "--qrels", "q", "--run", "r", "--json"]
    assert parse_eval_args([*plain, "-k", str(MAX_K)]) is not None
    for k in ("0", str(MAX_K + 1), "9" * 5000, "+3", "3.0"):
        assert parse_eval_args([*plain, "-k", k]) is None, k
