"""Read TREC qrels and run files as trec_eval 10.0 does.

Qrels lines are ``qid iter docno rel``; run lines are ``qid Q0 docno rank score tag``
(words after the sixth are ignored, as trec_eval ignores them; the rank column is
ignored too: order comes from the score). Lines starting with ``#`` and blank
lines are skipped.

Large files take a fast columnar path (pyarrow's multi-threaded CSV reader). Any
irregularity (comments, uneven spacing, extra words, a bad value) sends the file
to an exact line-by-line reader, which also produces the error messages, so
every error names the file and line.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "run").write_text("q1 Q0 d1 1 2.5 r\\nq1 Q0 d2 2 1.0 r\\n")
>>> run = read_run(d / "run")
>>> run.topics, run.docnos(), run.score.tolist()
(['q1'], ['d1', 'd2'], [2.5, 1.0])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from numpy.typing import NDArray

from ragmeter.errors import InputError

RUN_FIELDS = "qid Q0 docid rank score tag"
QRELS_FIELDS = "qid iter docid rel"


@dataclass(frozen=True)
class TrecQrels:
    """Judgments: one row per (topic, docno) with its relevance value."""

    path: str
    topics: list[str]
    topic_code: NDArray[np.int32]
    docno: pa.Array
    rel: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.rel)


@dataclass(frozen=True)
class TrecRun:
    """A run: one row per retrieved (topic, docno) with its score, in file order."""

    path: str
    topics: list[str]
    topic_code: NDArray[np.int32]
    docno: pa.Array
    score: NDArray[np.float64]
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.score)

    def docnos(self) -> list[str]:
        """The docnos as Python strings (for small runs and tests)."""
        return [str(x) for x in self.docno.to_pylist()]


def _encode(values: pa.Array) -> tuple[list[str], NDArray[np.int32]]:
    """Dictionary-encode a string column: (unique values in first-seen order, codes)."""
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    uniques = [str(x) for x in encoded.dictionary.to_pylist()]
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    return uniques, codes


def _fast_table(path: Path, names: list[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    """Parse a regular whitespace-separated file with pyarrow, or return None to use the exact path."""
    try:
        with path.open("rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return None
    first = head.split(b"\n", 1)[0]
    if not first.strip() or first.startswith((b"#", b" ", b"\t")):
        return None
    delimiter = "\t" if b"\t" in first else " "
    try:
        table = pacsv.read_csv(
            path,
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter, quote_char=False, escape_char=False, ignore_empty_lines=True
            ),
            convert_options=pacsv.ConvertOptions(
                column_types=types, include_columns=list(types), strings_can_be_null=False
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    if table.num_rows == 0:
        return None
    qid = table.column(names[0])
    if pc.any(pc.starts_with(qid, "#")).as_py() or pc.any(pc.equal(pc.utf8_length(qid), 0)).as_py():
        return None
    return table.combine_chunks()


def _lines(path: Path) -> list[tuple[int, list[str]]]:
    """Non-blank, non-comment lines split on whitespace, with 1-based line numbers."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", where=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", where=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror})", where=str(path)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", where=str(path)) from None
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        out.append((lineno, stripped.split()))
    if not out:
        raise InputError("file is empty (no judgment or result lines)", where=str(path))
    return out


def _number(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{what} {text!r} is not a number", where=where) from None
    if not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, got {text!r}", where=where)
    return value


def read_run(path: str | Path) -> TrecRun:
    """Read a TREC run file (6 fields per line; later words ignored)."""
    path = Path(path)
    table = _fast_table(
        path,
        ["qid", "q0", "docno", "rank", "score", "tag"],
        {"qid": pa.string(), "docno": pa.string(), "score": pa.float64()},
    )
    if table is not None:
        score = table.column("score").to_numpy()
        if bool(np.isfinite(score).all()):
            topics, codes = _encode(table.column("qid").chunk(0))
            return TrecRun(str(path), topics, codes, table.column("docno").chunk(0), score)
    return _read_run_exact(path)


def _read_run_exact(path: Path) -> TrecRun:
    qids: list[str] = []
    docnos: list[str] = []
    scores: list[float] = []
    extra = 0
    for lineno, fields in _lines(path):
        where = f"{path}:{lineno}"
        if len(fields) < 6:
            raise InputError(f"expected 6 fields ({RUN_FIELDS}), got {len(fields)}", where=where)
        extra += len(fields) > 6
        qids.append(fields[0])
        docnos.append(fields[2])
        scores.append(_number(fields[4], "score", where))
    topics, codes = _encode(pa.array(qids, pa.string()))
    notes = (
        [f"{path}: {extra} line(s) have more than 6 fields; the extra words were ignored"] if extra else []
    )
    return TrecRun(str(path), topics, codes, pa.array(docnos, pa.string()), np.asarray(scores), notes)


def read_qrels(path: str | Path) -> TrecQrels:
    """Read a TREC qrels file (4 fields per line); a repeated (topic, docno) is an error."""
    path = Path(path)
    table = _fast_table(
        path,
        ["qid", "iter", "docno", "rel"],
        {"qid": pa.string(), "docno": pa.string(), "rel": pa.float64()},
    )
    if table is not None:
        rel = table.column("rel").to_numpy()
        if bool(np.isfinite(rel).all()):
            topics, codes = _encode(table.column("qid").chunk(0))
            docno = table.column("docno").chunk(0)
            if not _has_duplicates(codes, docno):
                return TrecQrels(str(path), topics, codes, docno, rel)
    return _read_qrels_exact(path)


def _has_duplicates(codes: NDArray[np.int32], docno: pa.Array) -> bool:
    _, doc_codes = _encode(docno)
    keys = codes.astype(np.int64) * (int(doc_codes.max(initial=0)) + 1) + doc_codes
    return bool(len(np.unique(keys)) != len(keys))


def _read_qrels_exact(path: Path) -> TrecQrels:
    qids: list[str] = []
    docnos: list[str] = []
    rels: list[float] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, fields in _lines(path):
        where = f"{path}:{lineno}"
        if len(fields) != 4:
            raise InputError(f"expected 4 fields ({QRELS_FIELDS}), got {len(fields)}", where=where)
        key = (fields[0], fields[2])
        if key in seen:
            raise InputError(
                f"duplicate judgment for topic {key[0]!r} and document {key[1]!r} (first at line {seen[key]})",
                where=where,
            )
        seen[key] = lineno
        qids.append(fields[0])
        docnos.append(fields[2])
        rels.append(_number(fields[3], "relevance", where))
    topics, codes = _encode(pa.array(qids, pa.string()))
    return TrecQrels(str(path), topics, codes, pa.array(docnos, pa.string()), np.asarray(rels))
