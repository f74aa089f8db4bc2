"""TREC inputs of ``ragmeter eval``: every bad run or qrels file is one line naming the file, line and field.

Fields are separated by runs of ASCII whitespace as trec_eval reads them; numbers are plain ASCII
decimals; ids hold no control character; relevance is a whole number; a judgment is given once.
"""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path
from typing import Any

import pytest

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"


def _eval(tmp_path: Path, *, qrels: bytes | str = QRELS, run: bytes | str = RUN, **names: str) -> list[str]:
    qname, rname = names.get("qname", "qrels.txt"), names.get("rname", "run.txt")
    for name, data in ((qname, qrels), (rname, run)):
        (tmp_path / name).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return ["eval", "--qrels", qname, "--run", rname, "-m", "map", "-m", "P@1"]


BAD_SCORES = {
    "underscore": ("1_0", "score '1_0' is not a plain decimal number"),
    "full-width digit": ("\uff11", "score '１' is not a plain decimal number"),
    "arabic-indic digit": ("\u0663", "score '٣' is not a plain decimal number"),
    "nan": ("nan", "score must be a finite number, got 'nan'"),
    "NaN": ("NaN", "score must be a finite number, got 'NaN'"),
    "inf": ("inf", "score must be a finite number, got 'inf'"),
    "-Infinity": ("-Infinity", "score must be a finite number, got '-Infinity'"),
    "overflow": ("1e400", "score '1e400' is too large for a finite number"),
    "hex": ("0x10", "score '0x10' is not a plain decimal number"),
    "comma": ("1,5", "score '1,5' is not a plain decimal number"),
    "word": ("high", "score 'high' is not a plain decimal number"),
    "two dots": ("1.2.3", "score '1.2.3' is not a plain decimal number"),
    "bare exponent": ("e5", "score 'e5' is not a plain decimal number"),
    "sign only": ("-", "score '-' is not a plain decimal number"),
}


@pytest.mark.parametrize("score", list(BAD_SCORES), ids=list(BAD_SCORES))
def test_a_score_that_is_not_a_plain_decimal(refused: Any, tmp_path: Path, score: str) -> None:
    text, message = BAD_SCORES[score]
    argv = _eval(tmp_path, run=f"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 {text} r\n")
    refused(argv, "run.txt:2: ", message)


BAD_RELEVANCE = {
    "half": ("0.5", "relevance '0.5' is not a whole number (trec_eval would read it as 0;"),
    "one and a half": ("1.5", "relevance '1.5' is not a whole number (trec_eval would read it as 1;"),
    "negative fraction": ("-0.5", "relevance '-0.5' is not a whole number"),
    "exponent": ("1e0", "relevance '1e0' is not a whole number"),
    "hex": ("0x1", "relevance '0x1' is not a whole number"),
    "word": ("one", "relevance 'one' is not a whole number"),
    "full-width digit": ("\uff12", "relevance '２' is not a whole number"),
    "nan": ("nan", "relevance 'nan' is not a whole number"),
    "underscore": ("1_0", "relevance '1_0' is not a whole number"),
}


@pytest.mark.parametrize("rel", list(BAD_RELEVANCE), ids=list(BAD_RELEVANCE))
def test_a_relevance_that_is_not_a_whole_number(refused: Any, tmp_path: Path, rel: str) -> None:
    text, message = BAD_RELEVANCE[rel]
    refused(_eval(tmp_path, qrels=f"q1 0 d1 1\n\nq1 0 d2 {text}\n"), "qrels.txt:3: ", message)


CONTROL_IDS = {
    "NUL in a docno": (
        "run",
        "q1 Q0 d\x001 1 2.0 r\n",
        "docid 'd\\x001' contains the control character U+0000",
    ),
    "BEL in a docno": (
        "run",
        "q1 Q0 d\x071 1 2.0 r\n",
        "docid 'd\\x071' contains the control character U+0007",
    ),
    "ESC in a topic": (
        "run",
        "q\x1b1 Q0 d1 1 2.0 r\n",
        "qid 'q\\x1b1' contains the control character U+001B",
    ),
    "DEL in a docno": (
        "run",
        "q1 Q0 d1\x7f 1 2.0 r\n",
        "docid 'd1\\x7f' contains the control character U+007F",
    ),
    "NEL in a docno": (
        "run",
        "q1 Q0 d1\x85 1 2.0 r\n",
        "docid 'd1\\x85' contains the control character U+0085",
    ),
    "C1 in a topic": ("run", "q1\x9b Q0 d1 1 2.0 r\n", "qid 'q1\\x9b' contains the control character U+009B"),
    "NUL in a qrels docno": (
        "qrels",
        "q1 0 d\x001 1\n",
        "docid 'd\\x001' contains the control character U+0000",
    ),
    "US in a qrels topic": (
        "qrels",
        "q\x1f1 0 d1 1\n",
        "qid 'q\\x1f1' contains the control character U+001F",
    ),
}


@pytest.mark.parametrize("case", list(CONTROL_IDS), ids=list(CONTROL_IDS))
def test_a_control_character_in_an_id(refused: Any, tmp_path: Path, case: str) -> None:
    which, text, message = CONTROL_IDS[case]
    argv = _eval(tmp_path, **{which: text})
    refused(argv, f"{which}.txt:1: ", message)


SHAPES = {
    "run of 5 fields": (
        "run",
        "q1 Q0 d1 1 2.0\n",
        "run.txt:1: expected 6 fields (qid Q0 docid rank score tag), got 5",
    ),
    "run of 3 fields": ("run", "q1 d1 2.0\n", "run.txt:1: expected 6 fields"),
    "run missing Q0 (double space)": ("run", "q1  d1 1 2.0 r\n", "run.txt:1: expected 6 fields"),
    "run ending in a blank": ("run", "q1 Q0 d1 1 2.0 \n", "run.txt:1: expected 6 fields"),
    "qrels of 3 fields": ("qrels", "q1 0 d1\n", "qrels.txt:1: expected 4 fields (qid iter docid rel), got 3"),
    "qrels of 5 fields": (
        "qrels",
        "q1 0 d1 1 x\n",
        "qrels.txt:1: expected 4 fields (qid iter docid rel), got 5",
    ),
    "qrels line 4 of 2 fields": ("qrels", "q1 0 d1 1\n# c\n\nq1 d2\n", "qrels.txt:4: expected 4 fields"),
    "empty run": ("run", "", "run.txt: file is empty"),
    "blank run": ("run", " \n\t\n", "run.txt: file is empty"),
    "comments only": (
        "qrels",
        "# nothing\n# here\n",
        "qrels.txt: file is empty (no judgment or result lines)",
    ),
    "repeated judgment": (
        "qrels",
        "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 1\n",
        "qrels.txt:3: duplicate judgment for topic 'q1' and document 'd1' (first at line 1)",
    ),
    "repeated judgment, other grade": (
        "qrels",
        "q1 0 d1 1\nq1\t1\td1\t0\n",
        "qrels.txt:2: duplicate judgment for topic 'q1' and document 'd1' (first at line 1)",
    ),
}


@pytest.mark.parametrize("case", list(SHAPES), ids=list(SHAPES))
def test_a_malformed_line_or_file(refused: Any, tmp_path: Path, case: str) -> None:
    which, text, message = SHAPES[case]
    refused(_eval(tmp_path, **{which: text}), message)


ENCODINGS = {
    "UTF-16 with a BOM": ("qrels", QRELS.encode("utf-16"), "qrels.txt: the file is UTF-16 text"),
    "UTF-16 big-endian": ("run", b"\xfe\xff" + RUN.encode("utf-16-be"), "run.txt: the file is UTF-16 text"),
    "UTF-16 without a BOM": ("run", RUN.encode("utf-16-le"), "run.txt: the file looks like UTF-16 or UTF-32"),
    "UTF-32": ("qrels", QRELS.encode("utf-32"), "qrels.txt: the file is UTF-32 text"),
    "Latin-1 docno": (
        "run",
        "q1 Q0 caf\xe9 1 2.0 r\n".encode("latin-1"),
        "run.txt:1: not UTF-8 text: byte 0xe9",
    ),
    "Latin-1 on line 3": (
        "qrels",
        b"q1 0 d1 1\nq1 0 d2 0\nq1 0 \xe9 1\n",
        "qrels.txt:3: not UTF-8 text: byte 0xe9",
    ),
}


@pytest.mark.parametrize("case", list(ENCODINGS), ids=list(ENCODINGS))
def test_a_file_that_is_not_utf8(refused: Any, tmp_path: Path, case: str) -> None:
    which, data, message = ENCODINGS[case]
    refused(_eval(tmp_path, **{which: data}), message)


def test_a_broken_gzip_run_names_its_file(refused: Any, tmp_path: Path) -> None:
    argv = _eval(tmp_path, run=b"\x1f\x8b\x08\x00junk", rname="run.txt.gz")
    refused(argv, "run.txt.gz: not a valid gzip file")


def test_a_truncated_gzip_qrels_names_its_file(refused: Any, tmp_path: Path) -> None:
    argv = _eval(tmp_path, qrels=gzip.compress(QRELS.encode())[:-6], qname="qrels.gz")
    refused(argv, "qrels.gz: not a valid gzip file")


def test_a_broken_bz2_run_names_its_file(refused: Any, tmp_path: Path) -> None:
    argv = _eval(tmp_path, run=bz2.compress(RUN.encode())[:20], rname="run.bz2")
    refused(argv, "run.bz2: not a valid bz2 file")


def test_a_gzip_run_with_a_bad_line_names_the_line(refused: Any, tmp_path: Path) -> None:
    argv = _eval(tmp_path, run=gzip.compress(b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1_0 r\n"), rname="run.gz")
    refused(argv, "run.gz:2: score '1_0' is not a plain decimal number")


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_a_directory_given_for_a_file(refused: Any, tmp_path: Path, which: str) -> None:
    argv = _eval(tmp_path)
    (tmp_path / "folder").mkdir()
    argv[argv.index(f"--{which}") + 1] = "folder"
    refused(argv, "folder: is a directory, expected a file")


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["-k", "100000000000000000000"], "Invalid value for '-k'"),
        (
            ["-m", "P@100000000000000000000"],
            "metric 'P@100000000000000000000': the cutoff k must be at most 1000000000",
        ),
        (["-m", "ndcg@" + "9" * 5000], "the cutoff k must be at most 1000000000"),
        (
            ["-m", "ndcg@\uff11\uff10"],
            "the cutoff after '@' must be a whole number, 'k' or 'all', got '１０'",
        ),
        (["-m", "recall@-5"], "the cutoff k must be >= 1, got -5"),
        (["--relevance-level", "inf"], "'--relevance-level' / '-l': must be a finite number, got inf"),
        (["--relevance-level", "nan"], "'--relevance-level' / '-l': must be a finite number, got nan"),
    ],
    ids=[
        "k 10^20",
        "P@10^20",
        "k of 5000 digits",
        "full-width cutoff",
        "negative cutoff",
        "level inf",
        "level nan",
    ],
)
def test_a_cutoff_or_level_out_of_range(refused: Any, tmp_path: Path, flags: list[str], message: str) -> None:
    refused([*_eval(tmp_path), *flags], message)
