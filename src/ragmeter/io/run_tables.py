"""Qrels and runs from columns: the tables every reader other than the TREC file reader builds.

A dict, a DataFrame, a CSV or parquet file, a BEIR folder or a Hugging Face dataset ends up as
three columns: query ids, document ids and a value (a score in a run, a relevance in qrels).
:func:`qrels_from_columns` and :func:`run_from_columns` check them with the rules the TREC
readers follow and return the same :class:`~ragmeter.io.trec_tables.TrecQrels` /
:class:`~ragmeter.io.trec_tables.TrecRun`, so metrics never learn where a table came from:

- Ids are text or whole numbers (kept as their digits); a float, boolean or missing id, a blank
  one and one with a control character are errors naming the row.
- A score is a finite number; a relevance a whole one (a fractional one is an error, or with
  ``trec_compat`` truncated, as trec_eval reads it). Text in a number column is read as a plain
  ASCII decimal (``1_0``, ``nan``, ``inf`` and non-ASCII digits are errors).
- A (query, document) pair judged twice is an error naming both rows. A run may repeat one:
  matching counts the first and says so, as it does for TREC files.
- Row order does not matter: matching ranks a run as trec_eval does (score descending, ties by
  document id), so a dict's insertion order never decides a tie.

>>> rows = RowNames("qrels.csv", first_line=2)
>>> q = qrels_from_columns(["q1", "q1"], ["d1", 7], [1, 0], rows=rows)
>>> q.topics, q.docno.to_pylist(), q.rel.tolist()
(['q1'], ['d1', '7'], [1.0, 0.0])
>>> qrels_from_columns(["q1"], ["d1"], [0.5], rows=rows)
Traceback (most recent call last):
...
ragmeter.errors.InputError: qrels.csv:2: rel: relevance 0.5 is not a whole number (use --trec-compat to truncate it as trec_eval does)
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import pyarrow as pa
from numpy.typing import NDArray

from ragmeter.errors import InputError
from ragmeter.io.docnos import string_array
from ragmeter.io.trec_tables import TrecQrels, TrecRun, name_codes

Column: TypeAlias = "Sequence[Any] | pa.Array | pa.ChunkedArray"
"""One column: a Python sequence or an Arrow array."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_KINDS = {"bool": "booleans", "double": "floating-point numbers", "float": "floating-point numbers"}
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class RowNames:
    """How errors name a row: ``file.csv:5`` (a line), ``run.parquet row 4`` or ``run['q1']['d3']``.

    ``first_line`` set: rows are lines from that one (a CSV file under its header). ``keys`` set:
    row ``i`` is named by ``keys[i]`` (the nested keys of a dict). Otherwise rows are numbered from 0.
    """

    where: str
    first_line: int | None = None
    keys: Sequence[str] | None = None

    def __call__(self, row: int) -> str:
        """The name of row ``row`` (0-based)."""
        if self.keys is not None:
            return f"{self.where}{self.keys[row]}"
        if self.first_line is not None:
            return f"{self.where}:{self.first_line + row}"
        return f"{self.where} row {row}"


def _arrow(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column as one Arrow array (chunks combined; dictionaries decoded)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    return values


def _first_null(values: pa.Array) -> int | None:
    if not values.null_count:
        return None
    valid = np.asarray(values.is_valid().to_numpy(zero_copy_only=False))
    return int(np.flatnonzero(~valid)[0])


def _is_text(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind))


def _arrow_ids(values: pa.Array | pa.ChunkedArray, field: str, rows: RowNames) -> list[str]:
    array = _arrow(values)
    null = _first_null(array)
    if null is not None:
        raise InputError(f"{field}: the id is missing (null)", where=rows(null))
    if not (_is_text(array.type) or pa.types.is_integer(array.type) or len(array) == 0):
        described = _KINDS.get(str(array.type), str(array.type))
        raise InputError(
            f"{field}: ids must be text or whole numbers, this column holds {described} "
            f"(first: {array[0].as_py()!r})",
            where=rows(0),
        )
    return [str(v) for v in array.to_pylist()]


def _python_id(value: Any, field: str, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return str(int(value))
    what = "missing (null)" if value is None else f"{type(value).__name__} {value!r}"
    raise InputError(f"{field}: an id must be text or a whole number, got {what}", where=where)


def id_column(values: Column, *, field: str, rows: RowNames) -> pa.Array:
    """Check an id column and return it as Arrow strings (whole numbers as their digits)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        texts = _arrow_ids(values, field, rows)
    else:
        texts = [_python_id(value, field, rows(row)) for row, value in enumerate(values)]
    for row, text in enumerate(texts):
        if not text.strip():
            raise InputError(f"{field}: the id is blank", where=rows(row))
        if _CONTROL.search(text):
            raise InputError(f"{field}: the id {text!r} holds a control character", where=rows(row))
        if _SURROGATE.search(text):
            raise InputError(
                f"{field}: the id {text!r} holds half of a UTF-16 surrogate pair, not a character",
                where=rows(row),
            )
    return string_array(texts)


def _python_number(value: Any, field: str, where: str) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    what = "missing (null)" if value is None else f"{type(value).__name__} {value!r}"
    raise InputError(f"{field}: expected a number, got {what}", where=where)


def number_column(values: Column, *, field: str, rows: RowNames) -> NDArray[np.float64]:
    """Check a score/relevance column and return it as float64: finite numbers, text read strictly."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        out = np.array(
            [_python_number(v, field, rows(row)) for row, v in enumerate(values)], dtype=np.float64
        )
    else:
        array = _arrow(values)
        null = _first_null(array)
        if null is not None:
            raise InputError(f"{field}: the value is missing (null)", where=rows(null))
        if _is_text(array.type):
            texts = array.to_pylist()
            out = np.empty(len(texts), dtype=np.float64)
            for row, text in enumerate(texts):
                if not text.isascii() or not _DECIMAL.fullmatch(text.strip()):
                    raise InputError(f"{field}: {text!r} is not a number", where=rows(row))
                out[row] = float(text)
        elif (
            pa.types.is_integer(array.type)
            or pa.types.is_floating(array.type)
            or pa.types.is_decimal(array.type)
        ):
            out = np.asarray(array.cast(pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)
        else:
            raise InputError(f"{field}: expected numbers, this column holds {array.type}", where=rows.where)
    bad = np.flatnonzero(~np.isfinite(out))
    if len(bad):
        raise InputError(
            f"{field}: must be a finite number, got {float(out[bad[0]])!r}", where=rows(int(bad[0]))
        )
    return out


def _topics(qids: pa.Array) -> tuple[list[str], NDArray[np.int32]]:
    """Distinct topics in first-seen order and each row's code."""
    index: dict[str, int] = {}
    codes = name_codes(index, qids.to_pylist())
    return list(index), codes


def qrels_from_columns(
    qids: Column,
    docnos: Column,
    rels: Column,
    *,
    rows: RowNames,
    trec_compat: bool = False,
    fields: tuple[str, str, str] = ("q_id", "doc_id", "rel"),
) -> TrecQrels:
    """Judgments from three columns (see the module docstring for the rules).

    ``fields`` names the columns in errors (the user's names after a mapping).
    """
    q_field, d_field, r_field = fields
    qid = id_column(qids, field=q_field, rows=rows)
    docno = id_column(docnos, field=d_field, rows=rows)
    rel = number_column(rels, field=r_field, rows=rows)
    whole = np.trunc(rel)
    fraction = np.flatnonzero(whole != rel)
    if len(fraction):
        if not trec_compat:
            row = int(fraction[0])
            raise InputError(
                f"{r_field}: relevance {float(rel[row])!r} is not a whole number "
                "(use --trec-compat to truncate it as trec_eval does)",
                where=rows(row),
            )
        rel = whole + 0.0  # trec_eval's atol: toward zero ("-0.5" is 0)
    topics, codes = _topics(qid)
    qrels = TrecQrels(rows.where, topics, codes, docno, rel)
    _no_repeated_judgment(qrels, rows)
    return qrels


def _no_repeated_judgment(qrels: TrecQrels, rows: RowNames) -> None:
    keys = qrels.keys
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    for at in np.flatnonzero(ordered[1:] == ordered[:-1]).tolist():
        first, second = sorted((int(order[at]), int(order[at + 1])))
        pair = (qrels.topics[qrels.topic_code[first]], qrels.docno[first].as_py())
        if pair == (qrels.topics[qrels.topic_code[second]], qrels.docno[second].as_py()):
            raise InputError(
                f"duplicate judgment for topic {pair[0]!r} and document {pair[1]!r} (first at {rows(first)})",
                where=rows(second),
            )


def run_from_columns(
    qids: Column,
    docnos: Column,
    scores: Column,
    *,
    rows: RowNames,
    fields: tuple[str, str, str] = ("q_id", "doc_id", "score"),
    notes: Sequence[str] = (),
) -> TrecRun:
    """A run from three columns (see the module docstring); ``notes`` become the run's notes."""
    q_field, d_field, s_field = fields
    qid = id_column(qids, field=q_field, rows=rows)
    docno = id_column(docnos, field=d_field, rows=rows)
    score = number_column(scores, field=s_field, rows=rows)
    topics, codes = _topics(qid)
    return TrecRun(rows.where, topics, codes, docno, score, list(notes))


def judgments_by_topic(qrels: TrecQrels) -> dict[str, dict[str, float]]:
    """Qrels as ``{topic: {docno: rel}}``, topics in first-seen order (for samples built from qrels).

    >>> judgments_by_topic(qrels_from_columns(["q2", "q1"], ["a", "b"], [1, 2], rows=RowNames("q")))
    {'q2': {'a': 1.0}, 'q1': {'b': 2.0}}
    """
    gains: dict[str, dict[str, float]] = {topic: {} for topic in qrels.topics}
    for code, docno, rel in zip(
        qrels.topic_code.tolist(), qrels.docno.to_pylist(), qrels.rel.tolist(), strict=True
    ):
        gains[qrels.topics[code]][docno] = rel
    return gains
