"""Qrels and runs in the ecosystem's forms, written by the real libraries, score as their TREC files do."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from tests.formats.conftest import METRICS, IrData, same_numbers

from ragmeter import evaluate_trec
from ragmeter.errors import InputError


def _frame(data: IrData, kind: str, names: tuple[str, str, str]) -> pd.DataFrame:
    return pd.DataFrame(data.rows(kind), columns=list(names))


def test_pytrec_eval_dicts_in_python_and_as_json_files(ir_data: IrData, tmp_path: Path) -> None:
    same_numbers(evaluate_trec(ir_data.qrels, ir_data.run, metrics=METRICS), ir_data.expected)
    (tmp_path / "qrels.json").write_text(json.dumps(ir_data.qrels))
    (tmp_path / "run.json").write_text(json.dumps(ir_data.run))
    result = evaluate_trec(tmp_path / "qrels.json", tmp_path / "run.json", metrics=METRICS)
    same_numbers(result, ir_data.expected)
    assert result.provenance["inputs"]["run"]["format"] == "ranx/pytrec_eval JSON"


def test_a_dicts_order_never_breaks_a_tie(ir_data: IrData) -> None:
    rng = random.Random(3)
    shuffled = {}
    for qid in rng.sample(list(ir_data.run), len(ir_data.run)):
        items = list(ir_data.run[qid].items())
        rng.shuffle(items)
        shuffled[qid] = dict(items)
    same_numbers(evaluate_trec(ir_data.qrels, shuffled, metrics=METRICS), ir_data.expected)


# ranx runs in a child process with numba's JIT off (as in tests/foundation/test_foundation_oracles.py):
# no minutes-long compilation, and this process's numba state is left alone.
_RANX_SCRIPT = """
import json, sys
import polars as pl
import ranx
from ragmeter import evaluate_trec
from ragmeter.errors import InputError

data = json.load(sys.stdin)
metrics, folder = data["metrics"], data["folder"]
qrels, run = ranx.Qrels(data["qrels"]), ranx.Run(data["run"], name="bm25")
out = {}

def keep(name, result):
    out[name] = {"aggregate": result.aggregate, "per_query": result.per_query, "inputs": result.provenance["inputs"]}

keep("objects", evaluate_trec(qrels, run, metrics=metrics))
for suffix in ("trec", "parquet"):  # (ranx writes JSON only with numba on)
    qrels.save(f"{folder}/qrels.{suffix}")
    run.save(f"{folder}/run.{suffix}")
    keep(suffix, evaluate_trec(f"{folder}/qrels.{suffix}", f"{folder}/run.{suffix}", metrics=metrics))
qrels_df, run_df = qrels.to_dataframe(), run.to_dataframe()
keep("pandas", evaluate_trec(qrels_df, run_df, metrics=metrics))
keep("polars", evaluate_trec(pl.from_pandas(qrels_df), pl.from_pandas(run_df), metrics=metrics))
try:
    evaluate_trec(run, run)
except InputError as exc:
    out["wrong kind"] = str(exc)
print(json.dumps(out))
"""


def test_ranx_objects_frames_and_the_files_ranx_saves(ir_data: IrData, tmp_path: Path) -> None:
    pytest.importorskip("ranx")
    payload = {"qrels": ir_data.qrels, "run": ir_data.run, "metrics": METRICS, "folder": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", _RANX_SCRIPT],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "NUMBA_DISABLE_JIT": "1"},
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for name in ("objects", "trec", "parquet", "pandas", "polars"):
        assert out[name]["aggregate"] == ir_data.expected.aggregate, name
        assert out[name]["per_query"] == ir_data.expected.per_query, name
    assert out["objects"]["inputs"]["run"] == {"path": None, "format": "ranx Run", "name": "bm25"}
    assert out["pandas"]["inputs"]["qrels"]["columns"] == {"q_id": "q_id", "doc_id": "doc_id", "rel": "score"}
    assert out["wrong kind"] == "qrels: a ranx Run was given where a ranx Qrels belongs"


def test_ir_measures_tuples_lists_and_generators(ir_data: IrData) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels = [ir_measures.Qrel(q, d, r) for q, d, r in ir_data.rows("qrels")]
    run = [ir_measures.ScoredDoc(q, d, s) for q, d, s in ir_data.rows("run")]
    same_numbers(evaluate_trec(qrels, run, metrics=METRICS), ir_data.expected)
    same_numbers(evaluate_trec(iter(qrels), (x for x in run), metrics=METRICS), ir_data.expected)
    # ir_measures itself agrees on the mean nDCG@10 (it counts topics without relevant documents, or
    # without a run, as 0: trec_compat and complete do the same)
    ours = evaluate_trec(qrels, run, metrics=["ndcg@10"], trec_compat=True, complete=True).aggregate[
        "ndcg@10"
    ]
    theirs = ir_measures.calc_aggregate([ir_measures.nDCG @ 10], qrels, run)[ir_measures.nDCG @ 10]
    assert ours == pytest.approx(theirs, abs=1e-12)


def test_pandas_and_polars_frames_with_other_column_names(ir_data: IrData) -> None:
    qrels_df = _frame(ir_data, "qrels", ("q_id", "doc_id", "rel"))
    run_df = _frame(ir_data, "run", ("q_id", "doc_id", "score"))
    same_numbers(evaluate_trec(qrels_df, run_df, metrics=METRICS), ir_data.expected)
    same_numbers(
        evaluate_trec(pl.from_pandas(qrels_df), pl.from_pandas(run_df), metrics=METRICS), ir_data.expected
    )
    # ir_measures' names are recognised too; others need a mapping, recorded in the provenance
    ir_qrels = _frame(ir_data, "qrels", ("query_id", "doc_id", "relevance"))
    other_run = _frame(ir_data, "run", ("query", "passage", "sim"))
    result = evaluate_trec(
        ir_qrels, other_run, metrics=METRICS, columns={"q_id": "query", "doc_id": "passage", "score": "sim"}
    )
    same_numbers(result, ir_data.expected)
    assert result.provenance["inputs"]["run"]["columns"] == {
        "q_id": "query",
        "doc_id": "passage",
        "score": "sim",
    }
    assert result.provenance["inputs"]["qrels"]["format"] == "pandas DataFrame"
    arrow = pa.Table.from_pandas(other_run.assign(note="x"), preserve_index=False)
    with pytest.raises(
        InputError, match=r"no column for q_id .* the columns are 'query', 'passage', 'sim', 'note'"
    ):
        evaluate_trec(ir_qrels, arrow)
    result = evaluate_trec(
        ir_qrels, arrow, metrics=METRICS, columns={"q_id": "query", "doc_id": "passage", "score": "sim"}
    )
    assert result.provenance["inputs"]["run"]["ignored_columns"] == ["note"]
    assert any("columns left aside: note" in w for w in result.warnings)


def test_csv_tsv_parquet_and_json_lines_files(ir_data: IrData, tmp_path: Path) -> None:
    qrels = pa.Table.from_pandas(_frame(ir_data, "qrels", ("q_id", "doc_id", "rel")), preserve_index=False)
    run = pa.Table.from_pandas(_frame(ir_data, "run", ("q_id", "doc_id", "score")), preserve_index=False)
    pacsv.write_csv(qrels, tmp_path / "qrels.csv")
    pacsv.write_csv(run, tmp_path / "run.csv")
    same_numbers(
        evaluate_trec(tmp_path / "qrels.csv", tmp_path / "run.csv", metrics=METRICS), ir_data.expected
    )
    _frame(ir_data, "qrels", ("query-id", "corpus-id", "score")).to_csv(
        tmp_path / "qrels.tsv", sep="\t", index=False
    )
    with gzip.open(tmp_path / "run.tsv.gz", "wt") as handle:
        _frame(ir_data, "run", ("qid", "docno", "score")).to_csv(handle, sep="\t", index=False)
    same_numbers(
        evaluate_trec(tmp_path / "qrels.tsv", tmp_path / "run.tsv.gz", metrics=METRICS), ir_data.expected
    )
    pq.write_table(qrels, tmp_path / "qrels.parquet")
    pq.write_table(run, tmp_path / "run.parquet")
    result = evaluate_trec(tmp_path / "qrels.parquet", tmp_path / "run.parquet", metrics=METRICS)
    same_numbers(result, ir_data.expected)
    assert result.provenance["inputs"]["run"]["sha256"]
    _frame(ir_data, "run", ("q_id", "doc_id", "score")).to_json(
        tmp_path / "run.jsonl", orient="records", lines=True
    )
    same_numbers(
        evaluate_trec(tmp_path / "qrels.csv", tmp_path / "run.jsonl", metrics=METRICS), ir_data.expected
    )


def test_csv_ids_stay_as_written(tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text("q_id,doc_id,rel\n007,0042,1\n")
    (tmp_path / "r.csv").write_text("q_id,doc_id,score\n007,42,2.0\n007,0042,1.0\n")
    result = evaluate_trec(tmp_path / "q.csv", tmp_path / "r.csv", metrics=["mrr"])
    assert result.per_query == {"007": {"mrr": 0.5}}


def test_hugging_face_datasets_objects_and_saved_folders(ir_data: IrData, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    qrels = datasets.Dataset.from_pandas(_frame(ir_data, "qrels", ("q_id", "doc_id", "rel")))
    run = datasets.Dataset.from_pandas(_frame(ir_data, "run", ("q_id", "doc_id", "score")))
    same_numbers(evaluate_trec(qrels, run, metrics=METRICS), ir_data.expected)
    shuffled = run.shuffle(seed=1).select(range(len(run)))  # an indices mapping over the table
    same_numbers(evaluate_trec(qrels, shuffled, metrics=METRICS), ir_data.expected)
    qrels.save_to_disk(str(tmp_path / "qrels_ds"))
    datasets.DatasetDict({"test": run, "dev": run.select(range(3))}).save_to_disk(str(tmp_path / "run_ds"))
    with pytest.raises(
        InputError, match=r"the dataset has splits test, dev: name one with --split \(split=\)"
    ):
        evaluate_trec(tmp_path / "qrels_ds", tmp_path / "run_ds")
    result = evaluate_trec(tmp_path / "qrels_ds", tmp_path / "run_ds", metrics=METRICS, split="test")
    same_numbers(result, ir_data.expected)
    assert result.provenance["inputs"]["run"]["split"] == "test"


def _write_beir(folder: Path, data: IrData, split: str = "test") -> None:
    """A BEIR folder as BEIR's GenericDataLoader reads it (its documented layout)."""
    (folder / "qrels").mkdir(parents=True)
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{r}" for q, d, r in data.rows("qrels")]
    (folder / "qrels" / f"{split}.tsv").write_text("\n".join(lines) + "\n")
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": f"question {q}", "metadata": {}}) + "\n" for q in data.qrels)
    )
    (folder / "corpus.jsonl").write_text(
        json.dumps({"_id": "D001", "title": "", "text": "a document"}) + "\n"
    )


def test_beir_folders(ir_data: IrData, tmp_path: Path) -> None:
    _write_beir(tmp_path / "beir", ir_data)
    result = evaluate_trec(tmp_path / "beir", ir_data.run_path, metrics=METRICS)
    same_numbers(result, ir_data.expected)
    assert result.provenance["inputs"]["qrels"]["split"] == "test"
    with pytest.raises(InputError, match=r"no split 'dev' \(qrels/dev.tsv\); this folder has: test"):
        evaluate_trec(tmp_path / "beir", ir_data.run_path, split="dev")
    with pytest.raises(InputError, match="a BEIR folder holds qrels, not a run"):
        evaluate_trec(tmp_path / "beir", tmp_path / "beir")
    headless = tmp_path / "beir" / "qrels" / "headless.tsv"
    headless.write_text("q1\td1\t1\n")  # BEIR's loader would skip this judgment as the header
    with pytest.raises(InputError, match=r"headless.tsv:1: the first line must be BEIR's header"):
        evaluate_trec(tmp_path / "beir", ir_data.run_path, split="headless")


def test_ir_datasets_qrels_and_scored_docs(ir_data: IrData, irds_name: str) -> None:
    result = evaluate_trec(irds_name, irds_name, metrics=METRICS)
    same_numbers(result, ir_data.expected)
    assert result.provenance["inputs"]["qrels"] == {
        "path": None,
        "format": "ir_datasets",
        "dataset": "ragmeter-test/local",
    }
    with pytest.raises(InputError, match="irds:nope/nothing: ir_datasets knows no dataset 'nope/nothing'"):
        evaluate_trec("irds:nope/nothing", ir_data.run_path)


def test_compressed_trec_files(ir_data: IrData, tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    raw = ir_data.run_path.read_bytes()
    (tmp_path / "run.gz").write_bytes(gzip.compress(raw))
    (tmp_path / "run.bz2").write_bytes(bz2.compress(raw))
    (tmp_path / "run.zst").write_bytes(zstandard.ZstdCompressor().compress(raw))
    (tmp_path / "qrels.gz").write_bytes(gzip.compress(ir_data.qrels_path.read_bytes()))
    (tmp_path / "run.txt.xz").write_bytes(lzma.compress(b"# a comment line: read line by line\n" + raw))
    (tmp_path / "run.json.gz").write_bytes(gzip.compress(json.dumps(ir_data.run).encode()))
    for name in ("run.gz", "run.bz2", "run.zst", "run.txt.xz", "run.json.gz"):
        result = evaluate_trec(tmp_path / "qrels.gz", tmp_path / name, metrics=METRICS)
        same_numbers(result, ir_data.expected)
    (tmp_path / "broken.gz").write_bytes(raw)  # named .gz, not compressed
    with pytest.raises(InputError, match=r"broken.gz: not a valid gzip file"):
        evaluate_trec(tmp_path / "qrels.gz", tmp_path / "broken.gz", metrics=METRICS)


def _damaged(data: bytes) -> bytes:
    """Compressed data with 16 of its middle bytes inverted (past every header)."""
    middle = bytearray(data)
    for at in range(len(middle) // 3, len(middle) // 3 + 16):
        middle[at] ^= 0xFF
    return bytes(middle)


@pytest.mark.parametrize(
    ("suffix", "codec"),
    [(".gz", "gzip"), (".bz2", "bz2"), (".xz", "xz"), (".zst", "zstd"), (".lz4", "lz4"), (".br", "brotli")],
)
def test_a_corrupt_compressed_file_names_its_codec(
    ir_data: IrData, tmp_path: Path, suffix: str, codec: str
) -> None:
    """Every reader (TREC, JSON, CSV) says in one line which file does not decompress, and as what."""
    raw = ir_data.run_path.read_bytes() * 4
    good = {
        ".gz": gzip.compress,
        ".bz2": bz2.compress,
        ".xz": lzma.compress,
    }.get(suffix, lambda d: bytes(pa.compress(d, codec=codec, asbytes=True)))(raw)
    broken = [("run", b"not compressed at all, not even a header"), ("run.json", good[: len(good) // 2])]
    broken += [("run.csv", good[: len(good) * 2 // 3])]
    if suffix in (".gz", ".bz2", ".xz"):  # checksummed: damage inside is found (zstd and lz4 may decode it)
        broken += [("run", _damaged(good)), ("run.csv", _damaged(good))]
    for name, data in broken:
        path = tmp_path / f"{name}{suffix}"
        path.write_bytes(data)
        with pytest.raises(InputError, match=rf"^{re.escape(str(path))}: not a valid {codec} file \(.+\)$"):
            evaluate_trec(ir_data.qrels_path, path, metrics=METRICS)


def test_standard_input(ir_data: IrData) -> None:
    script = "import sys; from ragmeter.cli import main; main(sys.argv[1:])"
    for data in (ir_data.run_path.read_bytes(), json.dumps(ir_data.run).encode()):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                script,
                "eval",
                "--qrels",
                str(ir_data.qrels_path),
                "--run",
                "-",
                "--json",
                *(a for m in METRICS for a in ("-m", m)),
            ],
            input=data,
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert out["aggregate"] == ir_data.expected.aggregate
        assert out["provenance"]["inputs"]["run"]["path"] == "<stdin>"
    done = subprocess.run(
        [sys.executable, "-c", script, "eval", "--qrels", str(ir_data.qrels_path), "--run", "-"],
        input=b"q1 Q0 d1 1 x tag\n",
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.decode().startswith("Error: <stdin>:1: ")


@pytest.mark.parametrize(
    ("qrels", "run", "message"),
    [
        (
            {"q": {"d": 0.5}},
            {"q": {"d": 1.0}},
            r"qrels\['q'\]\['d'\]: rel: relevance 0.5 is not a whole number",
        ),
        (
            {"q": {"d": 1}},
            {"q": {"d": float("nan")}},
            r"run\['q'\]\['d'\]: score: must be a finite number, got nan",
        ),
        (
            {"q": {"d": True}},
            {"q": {"d": 1.0}},
            r"qrels\['q'\]\['d'\]: rel: expected a number, got bool True",
        ),
        (
            {"q": {"d": 1}},
            {"q": {3.5: 1.0}},
            r"run\['q'\]\[3.5\]: doc_id: an id must be text or a whole number",
        ),
        ({"q": {"d": 1}}, {"q": {"a\x00b": 1.0}}, r"doc_id: the id 'a\\x00b' holds a control character"),
        ({"q": {"d": 1}}, {"q": 1.0}, r"run: expected a ranx/pytrec_eval dict \{qid: \{docid: value\}\}"),
        ({"q": {"d": 1}}, 42, r"run: not a shape of run that ragmeter reads \(got int\); accepted: "),
    ],
)
def test_bad_values_name_the_entry(qrels: Any, run: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        evaluate_trec(qrels, run)


def test_fractional_relevance_is_truncated_only_in_trec_compat() -> None:
    result = evaluate_trec(
        {"q": {"d": 1.5, "e": 0.9}}, {"q": {"e": 2.0, "d": 1.0}}, metrics=["mrr"], trec_compat=True
    )
    assert result.per_query == {"q": {"mrr": 0.5}}  # e (0.9) truncates to 0


def test_tables_name_rows_and_columns(tmp_path: Path) -> None:
    frame = pd.DataFrame({"q_id": ["q", "q"], "doc_id": ["a", "a"], "rel": [1, 2]})
    with pytest.raises(
        InputError,
        match=r"qrels row 1: duplicate judgment for topic 'q' and document 'a' \(first at qrels row 0\)",
    ):
        evaluate_trec(frame, {"q": {"a": 1.0}})
    (tmp_path / "q.csv").write_text("q_id,doc_id,rel\nq,a,1\nq,b,x\n")
    with pytest.raises(InputError, match=r"q.csv:3: rel: 'x' is not a number"):
        evaluate_trec(tmp_path / "q.csv", {"q": {"a": 1.0}})
    (tmp_path / "short.tsv").write_text("q_id\tdoc_id\trel\nq\ta\t1\nq\tb\n")
    with pytest.raises(InputError, match=r"short.tsv:3: expected 3 fields \(as the header line has\), got 2"):
        evaluate_trec(tmp_path / "short.tsv", {"q": {"a": 1.0}})
    (tmp_path / "r.csv").write_text("q_id,doc_id,score,text\nq,a,1,hello\n")
    with pytest.raises(
        InputError, match=r"column 'text' is not read .* --columns \(q_id=q_id, doc_id=doc_id, score=score\)"
    ):
        evaluate_trec({"q": {"a": 1}}, tmp_path / "r.csv")
    (tmp_path / "r2.csv").write_text("q_id,doc_id,score,rank,tag\nq,a,1,1,bm25\n")
    result = evaluate_trec({"q": {"a": 1}}, tmp_path / "r2.csv", metrics=["mrr"])
    assert result.provenance["inputs"]["run"]["ignored_columns"] == ["rank", "tag"]
    both = pd.DataFrame({"q_id": ["q"], "doc_id": ["a"], "rel": [1], "score": [1]})
    with pytest.raises(InputError, match="columns 'rel' and 'score' could both be rel"):
        evaluate_trec(both, {"q": {"a": 1.0}})
    with pytest.raises(
        InputError, match="--columns: unknown field 'scroe' in the column mapping; did you mean 'score'"
    ):
        evaluate_trec({"q": {"a": 1}}, {"q": {"a": 1.0}}, columns={"scroe": "x"})
    floats = pd.DataFrame({"q_id": [1.5], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(
        InputError, match="q_id: ids must be text or whole numbers, this column holds floating-point numbers"
    ):
        evaluate_trec({"q": {"a": 1}}, floats)


def test_a_table_without_rows_is_an_error_as_an_empty_trec_file_is(tmp_path: Path) -> None:
    (tmp_path / "run.csv").write_text("q_id,doc_id,score\n")
    with pytest.raises(InputError, match=r"run\.csv: the run has no rows"):
        evaluate_trec({"q": {"a": 1}}, tmp_path / "run.csv")
    with pytest.raises(InputError, match="qrels: the qrels has no rows"):
        evaluate_trec(pd.DataFrame({"q_id": [], "doc_id": [], "rel": []}), {"q": {"a": 1.0}})


def test_a_folder_nobody_reads_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory, expected a file, a BEIR folder"):
        evaluate_trec(tmp_path, {"q": {"a": 1.0}})


def test_the_cli_reads_every_source_too(ir_data: IrData, tmp_path: Path, cli: Any) -> None:
    (tmp_path / "run.json").write_text(json.dumps(ir_data.run))
    _frame(ir_data, "qrels", ("topic", "docno", "label")).to_parquet(tmp_path / "qrels.parquet")
    code, out, err = cli(
        [
            "eval",
            "--qrels",
            str(tmp_path / "qrels.parquet"),
            "--run",
            str(tmp_path / "run.json"),
            "--columns",
            "rel=label",
            "--json",
            *(a for m in METRICS for a in ("-m", m)),
        ]
    )
    assert code == 0, err
    assert json.loads(out)["aggregate"] == ir_data.expected.aggregate
    code, _, err = cli(["eval", "--qrels", "-", "--run", "-"])
    assert code == 2 and "cannot both read standard input" in err
