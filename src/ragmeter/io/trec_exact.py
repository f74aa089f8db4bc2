"""The exact, line-by-line TREC reader: for files the fast path finds irregular, and for every error message.

It reads as trec_eval 10.0 does (see :mod:`ragmeter.io.trec`) and names the file, line and
field of every problem: too few fields, a value that is not a finite number, a repeated
judgment.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "qrels").write_text("# judged by hand\\nq1 0 d1 1\\n")
>>> read_qrels_exact(d / "qrels").topics
['q1']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ragmeter.errors import InputError
from ragmeter.io.docnos import string_array
from ragmeter.io.trec_tables import TrecQrels, TrecRun, name_codes

RUN_FIELDS = "qid Q0 docid rank score tag"
QRELS_FIELDS = "qid iter docid rel"


def _encode(values: Sequence[str]) -> tuple[list[str], NDArray[np.int32]]:
    """Dictionary-encode strings: (unique values in first-seen order, codes)."""
    index: dict[str, int] = {}
    codes = name_codes(index, list(values))
    return list(index), codes


def _lines(path: Path) -> list[tuple[int, list[str]]]:
    """Non-blank, non-comment lines split on whitespace, with 1-based line numbers."""
    empty = "file is empty (no judgment or result lines)"
    out = []
    from ragmeter.io.records import read_text  # pydantic and yaml: only on this rare path

    for lineno, line in enumerate(read_text(path, empty=empty).splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        out.append((lineno, stripped.split()))
    if not out:
        raise InputError(empty, where=str(path))
    return out


def _number(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{what} {text!r} is not a number", where=where) from None
    if not math.isfinite(value):
        raise InputError(f"{what} must be a finite number, got {text!r}", where=where)
    return value


def read_run_exact(path: Path, *, why: str = "") -> TrecRun:
    """Read a run file line by line (6 fields per line; later words ignored, with a note).

    ``why`` is the reason the fast reader passed it on (kept as ``reader_note``).
    """
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
    topics, codes = _encode(qids)
    notes = (
        [f"{path}: {extra} line(s) have more than 6 fields; the extra words were ignored"] if extra else []
    )
    return TrecRun(str(path), topics, codes, string_array(docnos), np.asarray(scores), notes, reader_note=why)


def read_qrels_exact(path: Path, *, why: str = "") -> TrecQrels:
    """Read a qrels file line by line (4 fields per line); a repeated (topic, docno) is an error.

    ``why`` is the reason the fast reader passed it on (kept as ``reader_note``).
    """
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
    topics, codes = _encode(qids)
    return TrecQrels(str(path), topics, codes, string_array(docnos), np.asarray(rels), reader_note=why)
