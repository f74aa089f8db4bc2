"""Runs and qrels as the Python IR libraries hold them: nested dicts, ranx objects, ir_measures tuples.

- **ranx / pytrec_eval dicts**: a run ``{qid: {docid: score}}``, qrels ``{qid: {docid: rel}}``,
  in Python or as a JSON file (what ``ranx.Run.save("run.json")`` writes).
- **ranx** ``Run`` and ``Qrels`` objects (read through their ``to_dict()``).
- **ir_measures** ``Qrel(query_id, doc_id, relevance, iteration)`` and
  ``ScoredDoc(query_id, doc_id, score)`` iterables (what ``ir_datasets``' ``qrels_iter()`` and
  ``scoreddocs_iter()`` yield too).

Each becomes the table the TREC readers return (:mod:`ragmeter.io.run_tables`, which holds the
rules); errors name the entry (``run.json['q1']['d3']``). A dict's order never ranks: matching
orders a run as trec_eval does.

>>> run = run_from_nested({"q1": {"d1": 0.5, "d2": 0.9}}, where="run")
>>> run.topics, run.docnos(), run.score.tolist()
(['q1'], ['d1', 'd2'], [0.5, 0.9])
>>> qrels_from_nested({"q1": {"d1": "yes"}}, where="qrels")
Traceback (most recent call last):
...
ragmeter.errors.InputError: qrels['q1']['d1']: rel: expected a number, got str 'yes'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.run_tables import RowNames, qrels_from_columns, run_from_columns
from ragmeter.io.trec_tables import TrecQrels, TrecRun

NESTED_SHAPE = "a ranx/pytrec_eval dict {qid: {docid: value}}"


def is_nested(data: Any) -> bool:
    """Whether ``data`` is a non-empty mapping whose values are all mappings (the nested-dict shape)."""
    return isinstance(data, Mapping) and bool(data) and all(isinstance(v, Mapping) for v in data.values())


def _flatten(
    data: Mapping[Any, Any], where: str
) -> tuple[list[Any], list[Any], list[Any], RowNames, list[str]]:
    """The three columns of a nested dict, the name of each entry, and its topics without entries."""
    if not is_nested(data):
        raise InputError(f"expected {NESTED_SHAPE}", where=where)
    qids: list[Any] = []
    docnos: list[Any] = []
    values: list[Any] = []
    names: list[str] = []
    empty: list[str] = []
    for qid, docs in data.items():
        if not docs:
            empty.append(str(qid))
        for docno, value in docs.items():
            qids.append(qid)
            docnos.append(docno)
            values.append(value)
            names.append(f"[{qid!r}][{docno!r}]")
    return qids, docnos, values, RowNames(where, keys=names), empty


def qrels_from_nested(data: Mapping[Any, Any], *, where: str, trec_compat: bool = False) -> TrecQrels:
    """Qrels from ``{qid: {docid: rel}}`` (a topic with no judgments has none)."""
    qids, docnos, rels, rows, _ = _flatten(data, where)
    return qrels_from_columns(qids, docnos, rels, rows=rows, trec_compat=trec_compat)


def run_from_nested(data: Mapping[Any, Any], *, where: str) -> TrecRun:
    """A run from ``{qid: {docid: score}}``; a topic with no documents is noted (it retrieved nothing)."""
    qids, docnos, scores, rows, empty = _flatten(data, where)
    notes = (
        [f"{where}: {len(empty)} topic(s) have no documents: {', '.join(map(repr, empty[:5]))}"]
        if empty
        else []
    )
    return run_from_columns(qids, docnos, scores, rows=rows, notes=notes)


def is_ranx(data: Any, kind: str) -> bool:
    """Whether ``data`` is a ranx ``Run`` or ``Qrels`` (``kind``), checked without importing ranx."""
    cls = type(data)
    return (
        cls.__module__.startswith("ranx.")
        and cls.__name__ == kind
        and callable(getattr(data, "to_dict", None))
    )


def ranx_name(data: Any) -> str | None:
    """A ranx object's ``name``, if it has one."""
    name = getattr(data, "name", None)
    return name if isinstance(name, str) and name else None


def _tuple_fields(item: Any) -> tuple[str, ...]:
    fields = getattr(type(item), "_fields", None)
    return tuple(fields) if isinstance(fields, tuple) else ()


def peek_tuples(data: Any, value_field: str) -> tuple[Any, Iterable[Any]] | None:
    """For a list of ir_measures-style named tuples with ``value_field``: (the first, all of them).

    ``None`` when ``data`` is something else (a mapping, text, a table, other items). A generator
    is turned into a list before it gets here (:func:`ragmeter.io.table_readers.load_run`).
    """
    if not isinstance(data, (list, tuple)):
        return None
    fields = _tuple_fields(data[0]) if data else ()
    if not {"query_id", "doc_id", value_field} <= set(fields):
        return None
    return data[0], data


def qrels_from_tuples(items: Iterable[Any], *, where: str, trec_compat: bool = False) -> TrecQrels:
    """Qrels from ``Qrel(query_id, doc_id, relevance, ...)`` tuples."""
    qids, docnos, rels = _columns(items, "relevance", where)
    return qrels_from_columns(
        qids,
        docnos,
        rels,
        rows=RowNames(where),
        trec_compat=trec_compat,
        fields=("query_id", "doc_id", "relevance"),
    )


def run_from_tuples(items: Iterable[Any], *, where: str) -> TrecRun:
    """A run from ``ScoredDoc(query_id, doc_id, score)`` tuples."""
    qids, docnos, scores = _columns(items, "score", where)
    return run_from_columns(
        qids, docnos, scores, rows=RowNames(where), fields=("query_id", "doc_id", "score")
    )


def _columns(items: Iterable[Any], value: str, where: str) -> tuple[list[Any], list[Any], list[Any]]:
    qids: list[Any] = []
    docnos: list[Any] = []
    values: list[Any] = []
    for row, item in enumerate(items):
        try:
            qids.append(item.query_id)
            docnos.append(item.doc_id)
            values.append(getattr(item, value))
        except AttributeError:
            raise InputError(
                f"expected a tuple with query_id, doc_id and {value}, got {type(item).__name__}",
                where=f"{where} row {row}",
            ) from None
    return qids, docnos, values
