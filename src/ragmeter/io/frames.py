"""Runs and qrels as tables: pandas and polars DataFrames, Arrow tables, Hugging Face datasets, CSV, TSV, parquet.

Every table becomes an Arrow table (pandas, polars and ``datasets`` are never imported here:
their objects convert themselves), then three of its columns are read as the run or qrels
(:mod:`ragmeter.io.run_tables` holds the rules). Columns are found by name:

=========  =================================================================
field      column names recognised (ranx's first)
=========  =================================================================
``q_id``   ``q_id``, ``qid``, ``query_id``, ``query-id``, ``topic``
``doc_id`` ``doc_id``, ``docid``, ``docno``, ``corpus-id``, ``corpus_id``, ``pid``
``score``  ``score`` (runs)
``rel``    ``rel``, ``relevance``, ``score`` (qrels; BEIR and ranx call it score)
=========  =================================================================

``columns`` maps a field to another column name (``{"q_id": "query", "score": "sim"}``; on the
command line ``--columns q_id=query,score=sim``). One mapping serves the qrels and the run: a
table without the mapped column reads the field from a recognised name. A field no column fits
is an error naming the columns the table has. The TREC layout's other columns (``iteration``, ``Q0``, ``rank``, ``tag``)
are left aside; any other column is an error unless a mapping was given, which says that the
rest may be left aside. Every column left aside is listed in the provenance: nothing is dropped
without a word.

>>> import pyarrow as pa
>>> table = pa.table({"query-id": ["q1", "q1"], "corpus-id": ["d1", "d2"], "score": [1, 0]})
>>> picked = pick_columns(table, "qrels", None, where="qrels.tsv")
>>> picked.mapping
{'q_id': 'query-id', 'doc_id': 'corpus-id', 'rel': 'score'}
>>> pick_columns(pa.table({"q_id": ["q"], "doc_id": ["d"]}), "run", None, where="run.csv")
Traceback (most recent call last):
...
ragmeter.errors.InputError: run.csv: no column for score (a run needs q_id, doc_id, score); the columns are 'q_id', 'doc_id'; name it with --columns score=COLUMN
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import pyarrow as pa

from ragmeter.errors import InputError
from ragmeter.io.run_tables import RowNames, qrels_from_columns, run_from_columns
from ragmeter.io.trec_tables import TrecQrels, TrecRun

TableKind = Literal["qrels", "run"]

FIELD_NAMES: dict[str, tuple[str, ...]] = {
    "q_id": ("q_id", "qid", "query_id", "query-id", "topic"),
    "doc_id": ("doc_id", "docid", "docno", "corpus-id", "corpus_id", "pid"),
    "score": ("score",),
    "rel": ("rel", "relevance", "score"),
}
"""Each field of a run or qrels table, and the column names that hold it unless mapped."""

FIELDS_OF: dict[TableKind, tuple[str, str, str]] = {
    "qrels": ("q_id", "doc_id", "rel"),
    "run": ("q_id", "doc_id", "score"),
}

TREC_LAYOUT_COLUMNS = frozenset({"iteration", "iter", "Q0", "q0", "rank", "tag", "run_id"})
"""Columns of the TREC layouts that ragmeter does not read (order comes from the score)."""


class ColumnSource(Protocol):
    """What a table is read through: its column names, and a column by name."""

    @property
    def column_names(self) -> list[str]:
        """The names of the columns, in order."""
        ...

    def column(self, name: str) -> Any:
        """The column ``name`` (an Arrow array or a Python sequence)."""
        ...


class RowColumns:
    """Rows (dicts) seen as columns: a key missing from a row is a null there (an error when it is read).

    >>> rows = RowColumns([{"q_id": "q", "score": 1}, {"q_id": "r"}])
    >>> rows.column_names, rows.column("score")
    (['q_id', 'score'], [1, None])
    """

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self.column_names = list(dict.fromkeys(key for row in rows for key in row))

    def column(self, name: str) -> list[Any]:
        """The values of ``name``, row by row."""
        return [row.get(name) for row in self.rows]


@dataclass(frozen=True)
class PickedColumns:
    """The columns a table's fields were read from, and the columns left aside."""

    mapping: dict[str, str]
    ignored: list[str] = field(default_factory=list)

    def provenance(self) -> dict[str, Any]:
        """What the provenance records of the mapping."""
        return {"columns": dict(self.mapping), **({"ignored_columns": self.ignored} if self.ignored else {})}


TABLE_OBJECT_MODULES = ("pandas", "polars", "pyarrow", "datasets")
TABLE_OBJECT_TYPES = ("DataFrame", "Table", "Dataset", "DatasetDict")


def is_table_object(source: Any) -> bool:
    """Whether ``source`` is a DataFrame, an Arrow table or a Hugging Face dataset (by its type's name).

    >>> is_table_object(pa.table({"a": [1]})), is_table_object({"a": [1]})
    (True, False)
    """
    module = type(source).__module__.split(".", 1)[0]
    return module in TABLE_OBJECT_MODULES and type(source).__name__ in TABLE_OBJECT_TYPES


def check_mapping(columns: Mapping[str, str] | None, known: tuple[str, ...], *, what: str) -> dict[str, str]:
    """A column mapping whose fields are all ``known`` (an unknown one is an error with a did-you-mean)."""
    mapping = dict(columns or {})
    for name, column in mapping.items():
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(
                f"unknown field {name!r} in the column mapping{hint} ({what} fields: {', '.join(known)})",
                where="--columns",
            )
        if not isinstance(column, str) or not column:
            raise InputError(
                f"the column for {name!r} must be a column name, got {column!r}", where="--columns"
            )
    return mapping


def pick_columns(
    table: ColumnSource, kind: TableKind, columns: Mapping[str, str] | None, *, where: str
) -> PickedColumns:
    """The column of each field of a ``kind`` table (see the module docstring)."""
    fields = FIELDS_OF[kind]
    given = check_mapping(
        {
            k: v
            for k, v in (columns or {}).items()
            if k not in set(FIELDS_OF["qrels"] + FIELDS_OF["run"]) - set(fields)
        },
        fields,
        what=kind,
    )
    names = list(table.column_names)
    shown = ", ".join(repr(n) for n in names)
    mapping: dict[str, str] = {}
    mapped = False
    for name in fields:
        if name in given and given[name] in names:
            mapping[name], mapped = given[name], True
            continue
        found = [n for n in FIELD_NAMES[name] if n in names and n not in mapping.values()]
        if not found:
            mapped_elsewhere = (
                f"--columns {name}={given[name]}: no column {given[name]!r} either; " if name in given else ""
            )
            raise InputError(
                f"{mapped_elsewhere}no column for {name} (a {kind} needs {', '.join(fields)}); the columns are "
                f"{shown}; name it with --columns {name}=COLUMN",
                where=where,
            )
        if len(found) > 1:
            raise InputError(
                f"columns {' and '.join(map(repr, found))} could both be {name}; say which with --columns {name}=COLUMN",
                where=where,
            )
        mapping[name] = found[0]
    rest = [n for n in names if n not in mapping.values()]
    unknown = [n for n in rest if n not in TREC_LAYOUT_COLUMNS]
    if unknown and not mapped:
        raise InputError(
            f"column {unknown[0]!r} is not read (a {kind} is read from {', '.join(fields)}); map the columns with "
            f"--columns ({', '.join(f'{f}={mapping[f]}' for f in fields)}) to leave the others aside",
            where=where,
        )
    return PickedColumns(mapping, rest)


def table_from_object(data: Any) -> pa.Table | None:
    """An Arrow table of a pandas or polars DataFrame, an Arrow table or a ``datasets.Dataset``; else None.

    The libraries are recognised by their classes' modules, so none is imported here.
    """
    module = type(data).__module__.split(".", 1)[0]
    if isinstance(data, pa.Table):
        return data
    if module == "pandas" and type(data).__name__ == "DataFrame":
        return pa.Table.from_pandas(data, preserve_index=False)
    if module == "polars" and type(data).__name__ == "DataFrame":
        return data.to_arrow()
    if module == "datasets" and type(data).__name__ == "Dataset":
        return data.with_format("arrow")[:]
    return None


def describe_object(data: Any) -> str:
    """``a pandas DataFrame``, ``a polars DataFrame``, ``a Hugging Face Dataset``, ``an Arrow table``."""
    module = type(data).__module__.split(".", 1)[0]
    if module == "datasets":
        return "a Hugging Face Dataset"
    if module in ("pandas", "polars"):
        return f"a {module} DataFrame"
    return "an Arrow table"


def read_csv(path: Path, *, delimiter: str) -> pa.Table:
    """A CSV (or TSV) file with a header line, every column as text (ids stay as written).

    The file is read as every text file is (:func:`ragmeter.io.text_files.read_bytes`: decompressed,
    and UTF-8 or an error naming the encoding and the line).
    """
    import pyarrow.csv as pacsv

    data = _utf8_bytes(path)
    header = data[: 1 << 16].split(b"\n", 1)[0].rstrip(b"\r")
    if not header.strip():
        raise InputError("the first line must name the columns (it is empty)", where=f"{path}:1")
    quote = '"' if delimiter == "," else False
    names = pacsv.read_csv(
        pa.py_buffer(header + b"\n"),
        read_options=pacsv.ReadOptions(autogenerate_column_names=False),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=quote),
    ).column_names
    if len(set(names)) != len(names):
        repeated = next(n for n in names if names.count(n) > 1)
        raise InputError(f"the header names column {repeated!r} twice", where=f"{path}:1")
    convert = pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=False)
    try:
        return pacsv.read_csv(
            pa.BufferReader(data),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=quote),
            convert_options=convert,
        )
    except (pa.ArrowInvalid, OSError) as exc:
        _raise_bad_row(data, path, pacsv.ParseOptions(delimiter=delimiter, quote_char=quote), convert)
        raise InputError(
            f"cannot read it as {'CSV' if delimiter == ',' else 'TSV'}: {str(exc).splitlines()[0]}",
            where=str(path),
        ) from None


def _utf8_bytes(path: Path) -> bytes:
    """The file's bytes, checked to be UTF-8 text, without a byte-order mark."""
    from ragmeter.io.text_files import decode_text, read_bytes

    data = read_bytes(path)
    decode_text(data, source=str(path))
    return data.removeprefix(b"\xef\xbb\xbf")


def _raise_bad_row(data: bytes, path: Path, parse: Any, convert: Any) -> None:
    """After a failed read: read again on one thread, which numbers rows, and name the first bad one."""
    import pyarrow.csv as pacsv

    bad: list[Any] = []

    def note(row: Any) -> str:
        bad.append(row)
        return "skip"

    parse.invalid_row_handler = note
    with contextlib.suppress(pa.ArrowInvalid, OSError):
        pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(use_threads=False),
            parse_options=parse,
            convert_options=convert,
        )
    if bad:
        row = bad[0]
        raise InputError(
            f"expected {row.expected_columns} fields (as the header line has), got {row.actual_columns}: "
            f"{row.text[:80]!r}",
            where=f"{path}:{row.number}" if row.number is not None else str(path),
        )


def read_parquet(path: Path) -> pa.Table:
    """A parquet file (also compressed, as every file) as an Arrow table."""
    import pyarrow.parquet as pq

    from ragmeter.io.text_files import read_bytes

    data = read_bytes(path)
    try:
        return pq.read_table(pa.BufferReader(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise InputError(f"not a parquet file ({str(exc).splitlines()[0]})", where=str(path)) from None


def _has_rows(column: Any, kind: TableKind, where: str) -> None:
    """A table with its columns but no row is an error, as an empty TREC file is."""
    if len(column) == 0:
        raise InputError(f"the {kind} has no rows (only its columns)", where=where)


def table_to_qrels(
    table: ColumnSource, *, rows: RowNames, columns: Mapping[str, str] | None, trec_compat: bool = False
) -> tuple[TrecQrels, PickedColumns]:
    """Qrels from a table's columns, and which columns they came from."""
    picked = pick_columns(table, "qrels", columns, where=rows.where)
    m = picked.mapping
    _has_rows(table.column(m["q_id"]), "qrels", rows.where)
    qrels = qrels_from_columns(
        table.column(m["q_id"]),
        table.column(m["doc_id"]),
        table.column(m["rel"]),
        rows=rows,
        trec_compat=trec_compat,
        fields=(m["q_id"], m["doc_id"], m["rel"]),
    )
    return qrels, picked


def table_to_run(
    table: ColumnSource, *, rows: RowNames, columns: Mapping[str, str] | None
) -> tuple[TrecRun, PickedColumns]:
    """A run from a table's columns, and which columns it came from."""
    picked = pick_columns(table, "run", columns, where=rows.where)
    m = picked.mapping
    _has_rows(table.column(m["q_id"]), "run", rows.where)
    unusual = [name for name in picked.ignored if name not in TREC_LAYOUT_COLUMNS]
    notes = [f"{rows.where}: columns left aside: {', '.join(unusual)}"] if unusual else []
    run = run_from_columns(
        table.column(m["q_id"]),
        table.column(m["doc_id"]),
        table.column(m["score"]),
        rows=rows,
        fields=(m["q_id"], m["doc_id"], m["score"]),
        notes=notes,
    )
    return run, picked
