"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``, as BEIR's loader reads them.

``qrels/<split>.tsv`` has a header line (``query-id  corpus-id  score``) and one judgment per
line, the score being the relevance. The split is ``test`` unless another is named
(``--split dev``); a split the folder does not have is an error naming those it has.
``queries.jsonl`` holds ``{"_id": ..., "text": ...}`` lines: as a dataset, each judged query of
the split is a sample whose input is its text and whose ``expected_output`` is its judgments
(graded), as BEIR evaluates; a judged query missing from ``queries.jsonl``, an ``_id`` given
twice and a judged query whose ``text`` is missing, blank or not a text are errors naming the line.
``corpus.jsonl`` is not read (ranking metrics need only the ids).

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> (d / "qrels").mkdir()
>>> _ = (d / "qrels" / "test.tsv").write_text("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t2\\n")
>>> is_beir_folder(d), split_file(d, None).name
(True, 'test.tsv')
>>> split_file(d, "dev")
Traceback (most recent call last):
...
ragmeter.errors.InputError: ...: no split 'dev' (qrels/dev.tsv); this folder has: test
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.frames import read_csv, table_to_qrels
from ragmeter.io.records import read_jsonl
from ragmeter.io.run_tables import RowNames, judgments_by_topic
from ragmeter.io.trec_tables import TrecQrels

DEFAULT_SPLIT = "test"
"""The split read when none is named (BEIR's loader defaults to it too)."""

BEIR_COLUMNS = {"q_id": "query-id", "doc_id": "corpus-id", "rel": "score"}


def is_beir_folder(path: Path) -> bool:
    """A folder with a ``qrels/`` folder of ``.tsv`` files."""
    return path.is_dir() and (path / "qrels").is_dir()


def splits(folder: Path) -> list[str]:
    """The splits a BEIR folder has (``qrels/*.tsv``)."""
    return sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))


def split_file(folder: Path, split: str | None) -> Path:
    """``qrels/<split>.tsv`` (``test`` by default), or an error naming the splits there are."""
    name = split or DEFAULT_SPLIT
    path = folder / "qrels" / f"{name}.tsv"
    if not path.is_file():
        have = ", ".join(splits(folder)) or "no qrels/*.tsv file"
        raise InputError(f"no split {name!r} (qrels/{name}.tsv); this folder has: {have}", where=str(folder))
    return path


def read_beir_qrels(
    folder: Path, split: str | None, *, trec_compat: bool = False
) -> tuple[TrecQrels, dict[str, Any]]:
    """The qrels of one split, and what the provenance records (the file, the split)."""
    path = split_file(folder, split)
    table = read_csv(path, delimiter="\t")
    if not set(BEIR_COLUMNS.values()) <= set(table.column_names):
        raise InputError(
            "the first line must be BEIR's header 'query-id<TAB>corpus-id<TAB>score', got "
            + repr("<TAB>".join(table.column_names)),
            where=f"{path}:1",
        )
    qrels, picked = table_to_qrels(
        table, rows=RowNames(str(path), first_line=2), columns=BEIR_COLUMNS, trec_compat=trec_compat
    )
    return qrels, {
        "format": "BEIR folder",
        "split": split or DEFAULT_SPLIT,
        "qrels_file": str(path),
        **picked.provenance(),
    }


def read_beir_samples(folder: Path, split: str | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One sample (as a raw record) per judged query of the split, in qrels order, and the provenance."""
    qrels, provenance = read_beir_qrels(folder, split)
    queries_path = folder / "queries.jsonl"
    lines: dict[str, tuple[Any, str]] = {}
    for record in read_jsonl(queries_path):
        qid = _query_id(record.value, record.where)
        if qid in lines:
            raise InputError(f"_id: query {qid!r} again (first at {lines[qid][1]})", where=record.where)
        lines[qid] = (record.value, record.where)
    gains = judgments_by_topic(qrels)
    missing = [topic for topic in qrels.topics if topic not in lines]
    if missing:
        raise InputError(
            f"{len(missing)} judged quer(y/ies) of split {provenance['split']!r} are not in queries.jsonl: "
            + ", ".join(map(repr, missing[:5])),
            where=str(queries_path),
        )
    samples = [
        {"id": topic, "input": _query_text(*lines[topic]), "expected_output": gains[topic]}
        for topic in qrels.topics
    ]
    mapping = {
        "id": "queries.jsonl _id",
        "input": "queries.jsonl text",
        "expected_output": f"qrels/{provenance['split']}.tsv",
    }
    return samples, {**provenance, "mapping": mapping}


def _query_id(value: Any, where: str) -> str:
    """A ``queries.jsonl`` line's ``_id``, or an error naming the line and the field."""
    if not isinstance(value, dict):
        raise InputError('each line must be an object {"_id": ..., "text": ...}', where=where)
    if "_id" not in value:
        raise InputError('_id: missing (each line is {"_id": ..., "text": ...})', where=where)
    qid = value["_id"]
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or not str(qid).strip():
        raise InputError(f"_id: expected a non-blank text or a whole number, got {qid!r}", where=where)
    return str(qid)


def _query_text(value: dict[str, Any], where: str) -> str:
    """A judged query's ``text`` (the sample's input), or an error naming the line and the field."""
    if "text" not in value:
        raise InputError("text: missing (the query's text is the sample's input)", where=where)
    text = value["text"]
    if not isinstance(text, str) or not text.strip():
        got = repr(text) if isinstance(text, str) else type(text).__name__
        raise InputError(f"text: expected the query's text, got {got}", where=where)
    return text
