"""The table of qrels and run readers: every source ``--qrels`` / ``--run`` (or ``evaluate_trec``) accepts.

Each entry of :data:`TABLE_READERS` is a human name (used in errors), a detector and a reader
that returns the table the TREC readers return, with what the provenance records of it (the
file and its digest, the format, the column mapping, the split). The first detector that
claims a source reads it; a source no detector claims is an error naming every accepted one,
never an empty table. Detectors look at a path's suffix or an object's class only: nothing
heavy is imported until a reader needs it, so a plain TREC file keeps its fast path.

To read a new format: one module under ``io/`` that builds the table
(:mod:`ragmeter.io.run_tables` holds the rules), and one entry here.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "run.json").write_text('{"q1": {"d1": 2.5, "d2": 1}}')
>>> loaded = load_run(d / "run.json")
>>> loaded.table.docnos(), loaded.provenance["format"]
(['d1', 'd2'], 'ranx/pytrec_eval JSON')
>>> load_qrels(3.5)
Traceback (most recent call last):
...
ragmeter.errors.InputError: qrels: not a shape of qrels that ragmeter reads (got float); accepted: ...
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from ragmeter.errors import InputError, RagmeterError
from ragmeter.io.digests import file_sha256
from ragmeter.io.frames import TableKind, is_table_object
from ragmeter.io.text_files import TABLE_SUFFIXES, data_suffix
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.io.trec_tables import TrecQrels, TrecRun

T = TypeVar("T", TrecQrels, TrecRun)

STDIN = "-"


@dataclass(frozen=True)
class TableRequest:
    """What to read: the source, qrels or a run, and the options that apply to it."""

    source: Any
    kind: TableKind
    columns: Mapping[str, str] | None = None
    split: str | None = None
    trec_compat: bool = False
    qrels: TrecQrels | None = None
    """For a run: the qrels it will be matched with (the TREC reader looks judgments up while reading)."""

    @property
    def where(self) -> str:
        """The source in messages: its path, or ``qrels`` / ``run`` for an object."""
        return str(self.source) if isinstance(self.source, (str, Path)) else self.kind

    @property
    def path(self) -> Path | None:
        """The source as a path (None for objects, ``-`` and ``irds:`` names)."""
        if isinstance(self.source, Path):
            return self.source
        if isinstance(self.source, str) and self.source != STDIN and not self.source.startswith("irds:"):
            return Path(self.source)
        return None

    def suffix(self) -> str:
        """The path's suffix behind a compression suffix (``.csv`` for ``run.csv.gz``), lower-case."""
        path = self.path
        return "" if path is None else data_suffix(path)


@dataclass(frozen=True)
class LoadedTable(Generic[T]):
    """A qrels or run table and what the provenance records of where it came from."""

    table: T
    provenance: dict[str, Any]


@dataclass(frozen=True)
class TableReader:
    """One kind of source: its name in messages, how to recognise it, and how to read it."""

    name: str
    detect: Callable[[TableRequest], bool]
    read: Callable[[TableRequest], tuple[TrecQrels | TrecRun, dict[str, Any]]]


def _file(request: TableRequest, fmt: str, **extra: Any) -> dict[str, Any]:
    path = request.path
    assert path is not None
    return {"path": str(path), "sha256": file_sha256(path), "format": fmt, **extra}


# --- files ---------------------------------------------------------------------------------


def _is_trec_file(request: TableRequest) -> bool:
    path = request.path
    return path is not None and not path.is_dir() and request.suffix() not in TABLE_SUFFIXES


def _read_trec(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    path = request.path
    assert path is not None
    table = (
        read_qrels(path, trec_compat=request.trec_compat)
        if request.kind == "qrels"
        else read_run(path, qrels=request.qrels)
    )
    return table, {"path": str(path), "sha256": file_sha256(path)}  # TREC, the default: no "format"


def _is_json(request: TableRequest) -> bool:
    return request.suffix() == ".json"


def _read_json(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.nested_runs import NESTED_SHAPE, is_nested, qrels_from_nested, run_from_nested
    from ragmeter.io.records import read_structured

    path = request.path
    assert path is not None
    data = read_structured(path)
    if not is_nested(data):
        raise InputError(
            f"a JSON {request.kind} must be {NESTED_SHAPE} (as ranx and pytrec_eval write it)",
            where=str(path),
        )
    if request.kind == "qrels":
        return qrels_from_nested(data, where=str(path), trec_compat=request.trec_compat), _file(
            request, "ranx/pytrec_eval JSON"
        )
    return run_from_nested(data, where=str(path)), _file(request, "ranx/pytrec_eval JSON")


def _is_delimited(request: TableRequest) -> bool:
    return request.suffix() in (".csv", ".tsv")


def _read_delimited(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.frames import read_csv
    from ragmeter.io.run_tables import RowNames

    path = request.path
    assert path is not None
    delimiter = "\t" if request.suffix() == ".tsv" else ","
    return _from_table(
        request,
        read_csv(path, delimiter=delimiter),
        RowNames(str(path), first_line=2),
        request.suffix()[1:].upper(),
    )


def _is_parquet(request: TableRequest) -> bool:
    return request.suffix() in (".parquet", ".pq")


def _read_parquet(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.frames import read_parquet
    from ragmeter.io.run_tables import RowNames

    path = request.path
    assert path is not None
    return _from_table(request, read_parquet(path), RowNames(str(path)), "parquet")


def _is_jsonl(request: TableRequest) -> bool:
    return request.suffix() == ".jsonl"


def _read_jsonl(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.frames import RowColumns
    from ragmeter.io.records import read_jsonl
    from ragmeter.io.run_tables import RowNames

    path = request.path
    assert path is not None
    records = read_jsonl(path)
    for record in records:
        if not isinstance(record.value, dict):
            raise InputError("each line must be an object (one row of the table)", where=record.where)
    rows = RowNames(str(path), keys=[record.where.removeprefix(str(path)) for record in records])
    return _from_table(request, RowColumns([record.value for record in records]), rows, "JSON Lines")


def _from_table(
    request: TableRequest, table: Any, rows: Any, fmt: str, provenance: dict[str, Any] | None = None
) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.frames import table_to_qrels, table_to_run

    out: TrecQrels | TrecRun
    if request.kind == "qrels":
        out, picked = table_to_qrels(
            table, rows=rows, columns=request.columns, trec_compat=request.trec_compat
        )
    else:
        out, picked = table_to_run(table, rows=rows, columns=request.columns)
    base = (
        provenance
        if provenance is not None
        else (_file(request, fmt) if request.path else {"path": None, "format": fmt})
    )
    return out, {**base, **picked.provenance()}


# --- folders -------------------------------------------------------------------------------


def _is_beir(request: TableRequest) -> bool:
    path = request.path
    if path is None or not path.is_dir():  # a file: the folder readers' modules are not imported
        return False
    from ragmeter.io.beir import is_beir_folder

    return is_beir_folder(path)


def _read_beir(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.beir import read_beir_qrels

    path = request.path
    assert path is not None
    if request.kind == "run":
        raise InputError("a BEIR folder holds qrels, not a run (give it as --qrels)", where=str(path))
    qrels, provenance = read_beir_qrels(path, request.split, trec_compat=request.trec_compat)
    return qrels, {"path": str(path), "sha256": file_sha256(provenance["qrels_file"]), **provenance}


def _is_saved_dataset(request: TableRequest) -> bool:
    path = request.path
    if path is None or not path.is_dir():
        return False
    from ragmeter.io.hf_datasets import is_saved_dataset

    return is_saved_dataset(path)


def _read_saved_dataset(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.hf_datasets import load_saved
    from ragmeter.io.run_tables import RowNames

    path = request.path
    assert path is not None
    table, provenance = load_saved(path, request.split)
    return _from_table(
        request, table, RowNames(str(path)), provenance["format"], {"path": str(path), **provenance}
    )


# --- names and stdin -----------------------------------------------------------------------


def _is_irds(request: TableRequest) -> bool:
    from ragmeter.io.irds import is_irds

    return is_irds(request.source)


def _read_irds(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.irds import irds_qrels, irds_run

    if request.kind == "qrels":
        qrels, provenance = irds_qrels(request.source, trec_compat=request.trec_compat)
        return qrels, {"path": None, **provenance}
    run, provenance = irds_run(request.source)
    return run, {"path": None, **provenance}


def _is_stdin(request: TableRequest) -> bool:
    return isinstance(request.source, str) and request.source == STDIN


def _read_stdin(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    """Standard input: a ranx/pytrec_eval JSON object if it starts with ``{``, else a TREC file."""
    data = sys.stdin.buffer.read()
    if not data.strip():
        raise InputError("standard input is empty", where="<stdin>")
    suffix = ".json" if data.lstrip().startswith(b"{") else ""
    with tempfile.TemporaryDirectory(prefix="ragmeter-stdin-") as folder:
        path = Path(folder) / f"stdin{suffix}"
        path.write_bytes(data)
        inner = replace(request, source=path)
        try:
            table, provenance = (_read_json if suffix else _read_trec)(inner)
        except RagmeterError as exc:
            raise _relabel(exc, str(path), "<stdin>") from None
    if isinstance(table, TrecRun):
        table = replace(
            table, path="<stdin>", notes=[note.replace(str(path), "<stdin>") for note in table.notes]
        )
    else:
        table = replace(table, path="<stdin>")
    return table, {**provenance, "path": "<stdin>"}


def _relabel(exc: RagmeterError, old: str, new: str) -> RagmeterError:
    """The same error with the temporary file's name replaced by what the user gave."""
    where = exc.where.replace(old, new) if exc.where else exc.where
    return type(exc)(exc.message.replace(old, new), where=where)


# --- Python objects ------------------------------------------------------------------------


def _is_mapping(request: TableRequest) -> bool:
    return isinstance(request.source, Mapping)


def _read_mapping(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.nested_runs import qrels_from_nested, run_from_nested

    if request.kind == "qrels":
        return qrels_from_nested(request.source, where="qrels", trec_compat=request.trec_compat), _object(
            "ranx/pytrec_eval dict"
        )
    return run_from_nested(request.source, where="run"), _object("ranx/pytrec_eval dict")


def _object(fmt: str, **extra: Any) -> dict[str, Any]:
    return {"path": None, "format": fmt, **extra}


def _is_ranx(request: TableRequest) -> bool:
    from ragmeter.io.nested_runs import is_ranx

    return is_ranx(request.source, "Run") or is_ranx(request.source, "Qrels")


def _read_ranx(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.nested_runs import is_ranx, qrels_from_nested, ranx_name, run_from_nested

    want = "Qrels" if request.kind == "qrels" else "Run"
    if not is_ranx(request.source, want):
        raise InputError(
            f"a ranx {type(request.source).__name__} was given where a ranx {want} belongs",
            where=request.kind,
        )
    data = request.source.to_dict()
    name = ranx_name(request.source)
    extra = {"name": name} if name else {}
    if request.kind == "qrels":
        return qrels_from_nested(data, where="qrels", trec_compat=request.trec_compat), _object(
            f"ranx {want}", **extra
        )
    return run_from_nested(data, where="run"), _object(f"ranx {want}", **extra)


def _is_table_object(request: TableRequest) -> bool:
    return is_table_object(request.source)


def _read_table_object(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.frames import describe_object, table_from_object
    from ragmeter.io.hf_datasets import is_dataset_dict, pick_split
    from ragmeter.io.run_tables import RowNames

    data, extra = request.source, {}
    if is_dataset_dict(data):
        data, split = pick_split(data, request.split, where=request.kind)
        extra["split"] = split
    table = table_from_object(data)
    if table is None:
        raise InputError(f"not a table ragmeter reads: {type(data).__name__}", where=request.kind)
    fmt = describe_object(data).removeprefix("a ").removeprefix("an ")
    return _from_table(request, table, RowNames(request.kind), fmt, _object(fmt, **extra))


def _is_tuples(request: TableRequest) -> bool:
    from ragmeter.io.nested_runs import peek_tuples

    return peek_tuples(request.source, "relevance" if request.kind == "qrels" else "score") is not None


def _read_tuples(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    from ragmeter.io.nested_runs import peek_tuples, qrels_from_tuples, run_from_tuples

    peeked = peek_tuples(request.source, "relevance" if request.kind == "qrels" else "score")
    assert peeked is not None
    items = peeked[1]
    if request.kind == "qrels":
        return qrels_from_tuples(items, where="qrels", trec_compat=request.trec_compat), _object(
            "ir_measures Qrel tuples"
        )
    return run_from_tuples(items, where="run"), _object("ir_measures ScoredDoc tuples")


TABLE_READERS: tuple[TableReader, ...] = (
    TableReader("an ir_datasets dataset (irds:<id>)", _is_irds, _read_irds),
    TableReader("'-' for standard input (TREC or ranx/pytrec_eval JSON)", _is_stdin, _read_stdin),
    TableReader("a BEIR folder (qrels/<split>.tsv; --split)", _is_beir, _read_beir),
    TableReader("a saved Hugging Face dataset folder (save_to_disk)", _is_saved_dataset, _read_saved_dataset),
    TableReader("a ranx/pytrec_eval JSON file {qid: {docid: value}} (.json)", _is_json, _read_json),
    TableReader("a CSV or TSV file with a header line (.csv, .tsv)", _is_delimited, _read_delimited),
    TableReader("a parquet file (.parquet)", _is_parquet, _read_parquet),
    TableReader("a JSON Lines file of rows (.jsonl)", _is_jsonl, _read_jsonl),
    TableReader(
        "a TREC file (any other file; compressed too: gz, bz2, xz, zst, lz4, br)", _is_trec_file, _read_trec
    ),
    TableReader("a ranx/pytrec_eval dict {qid: {docid: value}}", _is_mapping, _read_mapping),
    TableReader("a ranx Run or Qrels", _is_ranx, _read_ranx),
    TableReader(
        "a pandas or polars DataFrame, an Arrow table or a Hugging Face Dataset",
        _is_table_object,
        _read_table_object,
    ),
    TableReader("ir_measures Qrel / ScoredDoc tuples", _is_tuples, _read_tuples),
)
"""Every source of qrels and runs, tried in order (see the module docstring)."""


def _load(request: TableRequest) -> tuple[TrecQrels | TrecRun, dict[str, Any]]:
    if request.columns:
        from ragmeter.io.frames import FIELD_NAMES, check_mapping

        check_mapping(request.columns, tuple(FIELD_NAMES), what="qrels and run")
    if isinstance(request.source, Iterator):  # a generator of tuples: read once, whatever reads it
        request = replace(request, source=list(request.source))
    for reader in TABLE_READERS:
        if reader.detect(request):
            return reader.read(request)
    path = request.path
    if path is not None and path.is_dir():
        from ragmeter.io.sample_sources import FOLDER_ERROR

        raise InputError(FOLDER_ERROR, where=str(path))
    accepted = "; ".join(reader.name for reader in TABLE_READERS)
    raise InputError(
        f"not a shape of {request.kind} that ragmeter reads (got {type(request.source).__name__}); "
        f"accepted: {accepted}",
        where=request.where,
    )


def load_qrels(
    source: Any,
    *,
    columns: Mapping[str, str] | None = None,
    split: str | None = None,
    trec_compat: bool = False,
) -> LoadedTable[TrecQrels]:
    """Read qrels from any source of :data:`TABLE_READERS`."""
    table, provenance = _load(TableRequest(source, "qrels", columns, split, trec_compat))
    assert isinstance(table, TrecQrels)
    return LoadedTable(table, provenance)


def load_run(
    source: Any,
    *,
    qrels: TrecQrels | None = None,
    columns: Mapping[str, str] | None = None,
    split: str | None = None,
) -> LoadedTable[TrecRun]:
    """Read a run from any source of :data:`TABLE_READERS` (``qrels``: see :class:`TableRequest`)."""
    table, provenance = _load(TableRequest(source, "run", columns, split, qrels=qrels))
    assert isinstance(table, TrecRun)
    return LoadedTable(table, provenance)


def file_sources(*sources: Any) -> list[Path]:
    """The sources that are files on disk (what can be hashed early)."""
    return [Path(s) for s in sources if isinstance(s, (str, Path)) and s != STDIN and os.path.isfile(s)]
