"""Ecosystem formats (BEIR folders, ranx JSON, CSV/TSV/parquet tables, compressed files) and options.

Every bad input is one line naming the file, line and field; each reader reads its file the one
way every ragmeter reader does (:mod:`ragmeter.io.text_files`, :mod:`ragmeter.io.jsonyaml`), so
an encoding, a compression, a repeated key, ``NaN`` and a lone surrogate are refused alike.
An option given twice with two values is an error, never a silent choice of the last one.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n"
RUN_JSON = '{"q1": {"d1": 2.0, "d9": 1.0}, "q2": {"d9": 2.0, "d2": 1.0}}'
GOOD_QUERIES = '{"_id": "q1", "text": "first"}\n{"_id": "q2", "text": "second"}\n'


def _beir(folder: Path, queries: str) -> list[str]:
    (folder / "beir" / "qrels").mkdir(parents=True)
    (folder / "beir" / "qrels" / "test.tsv").write_text(QRELS, encoding="utf-8")
    (folder / "beir" / "queries.jsonl").write_text(queries, encoding="utf-8")
    (folder / "run.json").write_text(RUN_JSON, encoding="utf-8")
    return ["eval", "-d", "beir", "--outputs", "run.json", "-m", "mrr"]


BEIR_QUERIES = {
    "no text": ('{"_id": "q1", "text": "first"}\n{"_id": "q2"}\n', "queries.jsonl:2: text: missing"),
    "null text": (
        '{"_id": "q1", "text": "first"}\n\n{"_id": "q2", "text": null}\n',
        "queries.jsonl:3: text: expected the query's text, got NoneType",
    ),
    "list text": ('{"_id": "q1", "text": ["a"]}\n' + GOOD_QUERIES[31:], "queries.jsonl:1: text:", "got list"),
    "number text": ('{"_id": "q1", "text": 7}\n' + GOOD_QUERIES[31:], "queries.jsonl:1: text:", "got int"),
    "blank text": ('{"_id": "q1", "text": "  "}\n' + GOOD_QUERIES[31:], "queries.jsonl:1: text:", "'  '"),
    "no _id": ('{"text": "first"}\n' + GOOD_QUERIES, "queries.jsonl:1: _id: missing"),
    "float _id": ('{"_id": 1.5, "text": "x"}\n' + GOOD_QUERIES, "queries.jsonl:1: _id:", "1.5"),
    "bool _id": ('{"_id": true, "text": "x"}\n' + GOOD_QUERIES, "queries.jsonl:1: _id:", "True"),
    "blank _id": ('{"_id": " ", "text": "x"}\n' + GOOD_QUERIES, "queries.jsonl:1: _id:"),
    "repeated _id": (
        GOOD_QUERIES + '{"_id": "q1", "text": "other"}\n',
        "queries.jsonl:3: _id: query 'q1' again (first at ",
        "queries.jsonl:1)",
    ),
    "not an object": ('["q1", "first"]\n' + GOOD_QUERIES, "queries.jsonl:1: each line must be an object"),
    "duplicate key": ('{"_id": "q1", "text": "a", "text": "b"}\n', "queries.jsonl:1: duplicate key 'text'"),
    "lone surrogate": ('{"_id": "q1", "text": "a\\ud800"}\n', "queries.jsonl:1: text:", "surrogate"),
    "judged query missing": ('{"_id": "q1", "text": "first"}\n', "queries.jsonl: 1 judged", "'q2'"),
}


@pytest.mark.parametrize("case", list(BEIR_QUERIES), ids=list(BEIR_QUERIES))
def test_a_beir_query_without_a_usable_text_or_id(refused: Any, tmp_path: Path, case: str) -> None:
    queries, *fragments = BEIR_QUERIES[case]
    refused(_beir(tmp_path, queries), *fragments)


def test_beir_queries_not_judged_in_the_split_need_no_text(accepted: Any, tmp_path: Path) -> None:
    argv = _beir(tmp_path, GOOD_QUERIES + '{"_id": "q3", "text": null}\n')
    out = json.loads(accepted([*argv, "--json"]))
    assert out["aggregate"]["mrr"] == pytest.approx(0.75)  # q1: 1, q2: 1/2


RUN_FILES = {
    "ranx JSON, NaN": (
        "run.json",
        b'{"q1": {"d1": NaN}}',
        "run.json:1: q1.d1: NaN is not a number JSON allows",
    ),
    "ranx JSON, repeated doc": (
        "run.json",
        b'{"q1": {"d1": 1,\n "d1": 2}}',
        "run.json:2: duplicate key 'd1' in one object",
    ),
    "ranx JSON, lone surrogate": (
        "run.json",
        b'{"q1": {"d1": 1.0,\n "d\\udc00": 2.0}}',
        "run.json:2: q1['d\\udc00']: \\udc00 is half of a UTF-16 surrogate pair",
    ),
    "ranx JSON, Latin-1": ("run.json", '{"q1": {"\xe9": 1}}'.encode("latin-1"), "run.json:1: not UTF-8 text"),
    "ranx JSON, UTF-16": ("run.json", RUN_JSON.encode("utf-16"), "run.json: the file is UTF-16 text"),
    "ranx JSON, gzip not gzip": ("run.json.gz", RUN_JSON.encode(), "run.json.gz: not a valid gzip file"),
    "CSV, Latin-1 on line 3": (
        "run.csv",
        "q_id,doc_id,score\nq1,d1,1\nq1,\xe9,2\n".encode("latin-1"),
        "run.csv:3: not UTF-8 text: byte 0xe9",
    ),
    "CSV, UTF-16": (
        "run.csv",
        "q_id,doc_id,score\nq1,d1,1\n".encode("utf-16"),
        "run.csv: the file is UTF-16",
    ),
    "CSV, UTF-16 without a BOM": (
        "run.csv",
        "q_id,doc_id,score\nq1,d1,1\n".encode("utf-16-le"),
        "run.csv: the file looks like UTF-16",
    ),
    "TSV, truncated gzip": (
        "run.tsv.gz",
        gzip.compress(b"q_id\tdoc_id\tscore\nq1\td1\t1\n")[:-5],
        "run.tsv.gz: not a valid gzip file",
    ),
    "CSV, short row": ("run.csv", b"q_id,doc_id,score\nq1,d1,1\nq1,d2\n", "run.csv:3: expected 3 fields"),
    "parquet, not parquet": ("run.parquet", b"q_id,doc_id,score\n", "run.parquet: not a parquet file"),
}


@pytest.mark.parametrize("case", list(RUN_FILES), ids=list(RUN_FILES))
def test_a_bad_run_file_in_an_ecosystem_format(refused: Any, tmp_path: Path, case: str) -> None:
    name, data, *fragments = RUN_FILES[case]
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / name).write_bytes(data)
    refused(["eval", "--qrels", "qrels.txt", "--run", name, "-m", "mrr"], *fragments)


def test_a_folder_given_as_a_parquet_or_csv_file(refused: Any, tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    for name in ("run.parquet", "run.csv"):
        (tmp_path / name).mkdir()
        refused(["eval", "--qrels", "qrels.txt", "--run", name], f"{name}: is a directory")


def test_odd_but_valid_tables_score_as_their_trec_twin(accepted: Any, tmp_path: Path) -> None:
    """A CSV with a byte-order mark and CRLF lines, a gzip TSV and a gzip parquet file read as plain ones."""
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    rows = [("q1", "d9", 2.0), ("q1", "d1", 1.0), ("q2", "d2", 3.0)]
    (tmp_path / "bom.csv").write_bytes(
        b"\xef\xbb\xbfq_id,doc_id,score\r\n" + b"".join(f"{q},{d},{s}\r\n".encode() for q, d, s in rows)
    )
    (tmp_path / "run.tsv.gz").write_bytes(
        gzip.compress(b"q_id\tdoc_id\tscore\n" + b"".join(f"{q}\t{d}\t{s}\n".encode() for q, d, s in rows))
    )
    table = pa.table(
        {"q_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], "score": [r[2] for r in rows]}
    )
    pq.write_table(table, tmp_path / "plain.parquet")
    (tmp_path / "run.parquet.gz").write_bytes(gzip.compress((tmp_path / "plain.parquet").read_bytes()))
    for name in ("bom.csv", "run.tsv.gz", "run.parquet.gz"):
        out = json.loads(accepted(["eval", "--qrels", "qrels.txt", "--run", name, "-m", "mrr", "--json"]))
        assert out["aggregate"]["mrr"] == pytest.approx(0.75), name


CELLS = {
    "repeated key": ('"{""d1"": 1, ""d1"": 2}"', "d.csv:2: expected_output: duplicate key 'd1'"),
    "NaN": ('"{""d1"": NaN}"', "d.csv:2: expected_output: d1: NaN is not a number JSON allows"),
}


@pytest.mark.parametrize("case", list(CELLS), ids=list(CELLS))
def test_a_csv_dataset_cell_that_is_json_ragmeter_refuses(refused: Any, tmp_path: Path, case: str) -> None:
    cell, *fragments = CELLS[case]
    (tmp_path / "d.csv").write_text(f"id,input,expected_output\nq1,why?,{cell}\n", encoding="utf-8")
    (tmp_path / "o.jsonl").write_text('{"id": "q1", "output": ["d1"]}\n', encoding="utf-8")
    refused(["eval", "-d", "d.csv", "--outputs", "o.jsonl", "-m", "mrr"], *fragments)


def test_a_lone_surrogate_in_a_yaml_dataset(refused: Any, tmp_path: Path) -> None:
    (tmp_path / "d.yaml").write_text(
        '- id: q1\n  input: "a\\ud800"\n  expected_output: [d1]\n', encoding="utf-8"
    )
    (tmp_path / "o.jsonl").write_text('{"id": "q1", "output": ["d1"]}\n', encoding="utf-8")
    refused(["eval", "-d", "d.yaml", "--outputs", "o.jsonl"], "d.yaml:2: [0].input: \\ud800 is half")


def test_lone_surrogates_in_python_ids_are_refused() -> None:
    from ragmeter import evaluate_trec
    from ragmeter.errors import InputError

    with pytest.raises(InputError, match=r"q_id: the id 'q\\ud800' holds half of a UTF-16 surrogate pair"):
        evaluate_trec({"q\ud800": {"d1": 1}}, {"q\ud800": {"d1": 1.0}}, metrics=["mrr"])


def _eval(folder: Path) -> list[str]:
    (folder / "qrels.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (folder / "run.txt").write_text("q1 Q0 d1 1 2.0 r\n", encoding="utf-8")
    (folder / "outputs.jsonl").write_text('{"id": "q1", "output": ["d1"]}\n', encoding="utf-8")
    return ["eval", "--qrels", "qrels.txt", "--run", "run.txt"]


REPEATED = {
    "eval -o (old meaning) then --out": (
        ["-o", "outputs.jsonl", "--out", "res"],
        "--out/-o is given more than once ('outputs.jsonl', then 'res')",
        "give recorded outputs with --outputs outputs.jsonl",
    ),
    "eval --out then -o": (
        ["--out", "res", "-o", "res2"],
        "--out/-o is given more than once ('res', then 'res2')",
    ),
    "eval -oX --out=Y": (["-ores", "--out=res2"], "('res', then 'res2')"),
    "eval -k twice": (["-k", "3", "-k", "5"], "-k is given more than once ('3', then '5')"),
    "eval --config twice": (["--config", "a.yaml", "--config", "b.yaml"], "--config"),
    "a flag both ways": (
        ["--snippet-matching", "--no-snippet-matching"],
        "--snippet-matching/--no-snippet-matching",
    ),
}


@pytest.mark.parametrize("case", list(REPEATED), ids=list(REPEATED))
def test_an_option_given_twice_is_refused(refused: Any, tmp_path: Path, case: str) -> None:
    extra, *fragments = REPEATED[case]
    line = refused([*_eval(tmp_path), *extra], *fragments)
    assert "give" in line


def test_options_given_twice_in_other_commands(refused: Any, tmp_path: Path) -> None:
    refused(["cache", "stats", "--path", "a.sqlite", "--path", "b.sqlite"], "--path is given more than once")
    refused(["compare", "a", "b", "--format", "json", "-f", "text"], "--format/-f is given more than once")


def test_repeats_that_lose_nothing_are_accepted(accepted: Any, tmp_path: Path) -> None:
    """Options that collect values, the same value twice and a flag twice keep working."""
    argv = _eval(tmp_path)
    out = json.loads(accepted([*argv, "-m", "mrr", "-m", "P@1", "-k", "3", "-k", "3", "--json", "--json"]))
    assert out["aggregate"] == {"mrr": 1.0, "precision@1": 1.0}
