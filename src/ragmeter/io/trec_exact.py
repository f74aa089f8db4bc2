"""The exact, line-by-line TREC reader: for files the fast path finds irregular, and for every error message.

It reads as trec_eval 10.0 does and names the file, line and field of every problem:

- Lines end at ``\\n`` (a ``\\r`` before it is blank space); blank lines and lines whose
  first word starts with ``#`` are skipped.
- Fields are separated by runs of ASCII whitespace: space, tab, vertical tab, form feed,
  carriage return, mixed (C's ``isspace``, as trec_eval splits). Any other character,
  a non-breaking space (U+00A0) too, is part of a field, as it is for trec_eval.
- An id (topic or docno) with a control character (U+0000..U+001F, U+007F..U+009F) is
  an error: trec_eval would cut it at a NUL or keep an invisible byte.
- A score is a plain ASCII decimal (``12``, ``-0.5``, ``1.5e-3``) and finite: ``1_0``,
  full-width or Arabic-Indic digits, ``nan`` and ``inf`` are errors.
- A relevance is a whole number (``2``, ``-1``, ``1.0``); a fractional or exponent one is
  an error, or with ``trec_compat`` truncated as trec_eval's ``atol`` reads it. A
  repeated (topic, docno) judgment is an error, as in trec_eval 10.0.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "qrels").write_text("# judged by hand\\nq1\\t0 \\td1 1\\n")
>>> q = read_qrels_exact(d / "qrels")
>>> q.topics, q.docno.to_pylist()
(['q1'], ['d1'])
>>> _ = (d / "half").write_text("q1 0 d1 0.5\\n")
>>> read_qrels_exact(d / "half", trec_compat=True).rel.tolist()
[0.0]
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ragmeter.errors import InputError
from ragmeter.io.docnos import string_array
from ragmeter.io.text_files import decode_text, read_bytes
from ragmeter.io.trec_tables import TrecQrels, TrecRun, name_codes

RUN_FIELDS = "qid Q0 docid rank score tag"
QRELS_FIELDS = "qid iter docid rel"


def _encode(values: Sequence[str]) -> tuple[list[str], NDArray[np.int32]]:
    """Dictionary-encode strings: (unique values in first-seen order, codes)."""
    index: dict[str, int] = {}
    codes = name_codes(index, list(values))
    return list(index), codes


_FIELD = re.compile(r"[^ \t\n\v\f\r]+")
"""A field: a run of anything but ASCII whitespace (what trec_eval's ``isspace`` skips)."""
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WHOLE = re.compile(r"[+-]?[0-9]+(?:\.0*)?")
_LEADING_WHOLE = re.compile(r"[+-]?[0-9]*")


def _lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """Non-blank, non-comment lines split into fields, with 1-based line numbers."""
    empty = "file is empty (no judgment or result lines)"
    text = decode_text(read_bytes(path), source=str(path))
    found = False
    for lineno, line in enumerate(text.split("\n"), start=1):
        fields = _FIELD.findall(line)
        if fields and not fields[0].startswith("#"):
            found = True
            yield lineno, fields
    if not found:
        raise InputError(empty, where=str(path))


def _id(text: str, what: str, where: str) -> str:
    control = _CONTROL.search(text)
    if control is not None:
        raise InputError(
            f"{what} {text!r} contains the control character U+{ord(control.group()):04X}", where=where
        )
    return text


def _score(text: str, where: str) -> float:
    if not _DECIMAL.fullmatch(text):
        if text.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise InputError(f"score must be a finite number, got {text!r}", where=where)
        raise InputError(f"score {text!r} is not a plain decimal number", where=where)
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"score {text!r} is too large for a finite number", where=where)
    return value


def _relevance(text: str, where: str, *, trec_compat: bool) -> float:
    if _WHOLE.fullmatch(text):
        return float(int(text.partition(".")[0]))
    if not _DECIMAL.fullmatch(text):
        raise InputError(f"relevance {text!r} is not a whole number", where=where)
    leading = _LEADING_WHOLE.match(text)
    truncated = int(leading.group()) if leading and leading.group() not in ("", "+", "-") else 0
    if trec_compat:
        return float(truncated)
    raise InputError(
        f"relevance {text!r} is not a whole number (trec_eval would read it as {truncated}; "
        "--trec-compat reads it that way)",
        where=where,
    )


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
        qids.append(_id(fields[0], "qid", where))
        docnos.append(_id(fields[2], "docid", where))
        scores.append(_score(fields[4], where))
    topics, codes = _encode(qids)
    notes = (
        [f"{path}: {extra} line(s) have more than 6 fields; the extra words were ignored"] if extra else []
    )
    return TrecRun(str(path), topics, codes, string_array(docnos), np.asarray(scores), notes, reader_note=why)


def read_qrels_exact(path: Path, *, trec_compat: bool = False, why: str = "") -> TrecQrels:
    """Read a qrels file line by line (4 fields per line); a repeated (topic, docno) is an error.

    ``trec_compat``: a fractional relevance is truncated as trec_eval reads it, not refused.
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
        qids.append(_id(fields[0], "qid", where))
        docnos.append(_id(fields[2], "docid", where))
        rels.append(_relevance(fields[3], where, trec_compat=trec_compat))
    topics, codes = _encode(qids)
    return TrecQrels(str(path), topics, codes, string_array(docnos), np.asarray(rels), reader_note=why)
