"""The table of dataset readers: every source ``--dataset`` (or ``evaluate``) accepts, read into samples.

Each entry of :data:`SAMPLE_SOURCES` is a human name (used in errors), a detector and a reader
that returns rows; :mod:`ragmeter.io.sample_rows` turns rows written as RAGAS or DeepEval
write them into ragmeter samples (rows already in ragmeter's shape pass through), then each
is validated. A source no detector claims is an error naming every accepted one.

>>> samples, provenance = read_samples([{"user_input": "Why?", "response": "Because.", "reference": "Because."}])
>>> samples[0].id, samples[0].actual_output, provenance["shape"]
('0', {'answer': 'Because.'}, 'RAGAS rows')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.records import read_record_list, validate
from ragmeter.io.text_files import data_suffix
from ragmeter.schema.samples import Sample

_STRUCTURED_CELLS = frozenset(
    {
        "expected_output",
        "metadata",
        "actual_output",
        "gold_supports",
        "required_support_groups",
        "tags",
        "input",
    }
)
"""ragmeter fields a CSV cell may hold as JSON (``["d1", "d2"]``, ``{"question": ...}``)."""


@dataclass(frozen=True)
class Rows:
    """Rows read from a source, how to name each in errors, and what the provenance records."""

    rows: Sequence[Any]
    where: Callable[[int], str]
    provenance: dict[str, Any]


@dataclass(frozen=True)
class SampleSource:
    """One kind of dataset source: its name in messages, how to recognise it, how to read its rows."""

    name: str
    detect: Callable[[Any], bool]
    read: Callable[[Any, str | None], Rows]


def _path(source: Any) -> Path | None:
    if isinstance(source, Path):
        return source
    if isinstance(source, str) and not source.startswith("irds:"):
        return Path(source)
    return None


def _suffix(source: Any) -> str:
    path = _path(source)
    return "" if path is None else data_suffix(path)


def _file_provenance(path: Path, fmt: str) -> dict[str, Any]:
    from ragmeter.io.digests import file_sha256

    return {"path": str(path), "sha256": file_sha256(path), "format": fmt}


def _is_irds(source: Any) -> bool:
    from ragmeter.io.irds import is_irds

    return is_irds(source)


def _read_irds(source: Any, split: str | None) -> Rows:
    from ragmeter.io.irds import irds_samples

    rows, provenance = irds_samples(source)
    return Rows(rows, lambda i: f"{source} (query {rows[i]['id']!r})", {"path": None, **provenance})


def _is_beir(source: Any) -> bool:
    from ragmeter.io.beir import is_beir_folder

    path = _path(source)
    return path is not None and is_beir_folder(path)


def _read_beir(source: Any, split: str | None) -> Rows:
    from ragmeter.io.beir import read_beir_samples

    path = Path(source)
    rows, provenance = read_beir_samples(path, split)
    return Rows(rows, lambda i: f"{path} (query {rows[i]['id']!r})", {"path": str(path), **provenance})


def _is_saved_dataset(source: Any) -> bool:
    from ragmeter.io.hf_datasets import is_saved_dataset

    path = _path(source)
    return path is not None and is_saved_dataset(path)


def _read_saved_dataset(source: Any, split: str | None) -> Rows:
    from ragmeter.io.hf_datasets import load_saved

    path = Path(source)
    table, provenance = load_saved(path, split)
    return Rows(_table_rows(table), lambda i: f"{path} row {i}", {"path": str(path), **provenance})


def _table_rows(table: Any) -> list[dict[str, Any]]:
    """An Arrow table's rows as dicts, without the cells that are null (a null is an absent field)."""
    return [{k: v for k, v in row.items() if v is not None} for row in table.to_pylist()]


def _is_delimited(source: Any) -> bool:
    return _suffix(source) in (".csv", ".tsv")


def _read_delimited(source: Any, split: str | None) -> Rows:
    from ragmeter.io.frames import read_csv

    path = Path(source)
    kind = _suffix(source)
    table = read_csv(path, delimiter="\t" if kind == ".tsv" else ",")
    rows = [
        {k: _cell(k, v, f"{path}:{i + 2}") for k, v in row.items() if v != ""}
        for i, row in enumerate(table.to_pylist())
    ]
    return Rows(rows, lambda i: f"{path}:{i + 2}", _file_provenance(path, kind[1:].upper()))


def _cell(name: str, text: str, where: str) -> Any:
    """A CSV cell: JSON for a structured ragmeter field (``expected_output``), else the text as written.

    A cell that is JSON but one ragmeter refuses (a repeated key, ``NaN``) is an error, not a text.
    """
    if name in _STRUCTURED_CELLS and text.lstrip()[:1] in ("[", "{"):
        from ragmeter.io.jsonyaml import JsonError, parse_json

        try:
            return parse_json(text)
        except JsonError as exc:
            if exc.problem != f"invalid JSON ({exc.reason})":
                raise InputError(f"{name}: {exc.problem}", where=where) from None
            return text
    return text


def _is_parquet(source: Any) -> bool:
    return _suffix(source) in (".parquet", ".pq")


def _read_parquet(source: Any, split: str | None) -> Rows:
    from ragmeter.io.frames import read_parquet

    path = Path(source)
    return Rows(
        _table_rows(read_parquet(path)), lambda i: f"{path} row {i}", _file_provenance(path, "parquet")
    )


def _is_structured_file(source: Any) -> bool:
    path = _path(source)
    return path is not None and not path.is_dir()


def _read_structured_file(source: Any, split: str | None) -> Rows:
    path = Path(source)
    records = read_record_list(path, key="samples")
    fmt = {".jsonl": "JSON Lines", ".json": "JSON"}.get(_suffix(source), "YAML")
    return Rows([r.value for r in records], lambda i: records[i].where, _file_provenance(path, fmt))


def _is_table_object(source: Any) -> bool:
    from ragmeter.io.frames import is_table_object

    return is_table_object(source)


def _read_table_object(source: Any, split: str | None) -> Rows:
    from ragmeter.io.frames import describe_object, table_from_object
    from ragmeter.io.hf_datasets import is_dataset_dict, pick_split

    provenance: dict[str, Any] = {"path": None}
    if is_dataset_dict(source):
        source, provenance["split"] = pick_split(source, split, where="dataset")
    table = table_from_object(source)
    if table is None:
        raise InputError(f"not a table ragmeter reads: {type(source).__name__}", where="dataset")
    provenance["format"] = describe_object(source).removeprefix("a ").removeprefix("an ")
    return Rows(_table_rows(table), lambda i: f"dataset row {i}", provenance)


def _tool_objects(source: Any) -> list[Any] | None:
    """The samples of a RAGAS ``EvaluationDataset`` or the test cases of a DeepEval one (else None)."""
    module = type(source).__module__.split(".", 1)[0]
    if module == "ragas" and isinstance(getattr(source, "samples", None), list):
        return list(source.samples)
    if module == "deepeval":
        cases = getattr(source, "test_cases", None)
        goldens = getattr(source, "goldens", None)
        if isinstance(cases, list) and (cases or not goldens):
            return list(cases)
        if isinstance(goldens, list):
            return list(goldens)
    return None


def _is_tool_dataset(source: Any) -> bool:
    return _tool_objects(source) is not None


def _read_tool_dataset(source: Any, split: str | None) -> Rows:
    items = _tool_objects(source) or []
    module = type(source).__module__.split(".", 1)[0]
    fmt = {"ragas": "RAGAS EvaluationDataset", "deepeval": "DeepEval EvaluationDataset"}[module]
    return Rows([_as_row(item) for item in items], lambda i: f"dataset[{i}]", {"path": None, "format": fmt})


def _as_row(item: Any) -> Any:
    """A sample object of another tool (a pydantic model: SingleTurnSample, LLMTestCase) as a dict."""
    if isinstance(item, (Mapping, Sample)):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        return {k: v for k, v in dump(exclude_defaults=True).items() if v is not None}
    return item


def _is_sequence(source: Any) -> bool:
    return isinstance(source, Sequence) and not isinstance(source, (str, bytes))


def _read_sequence(source: Any, split: str | None) -> Rows:
    return Rows([_as_row(item) for item in source], lambda i: f"dataset[{i}]", {"path": None})


SAMPLE_SOURCES: tuple[SampleSource, ...] = (
    SampleSource("an ir_datasets dataset (irds:<id>)", _is_irds, _read_irds),
    SampleSource("a BEIR folder (queries.jsonl, qrels/<split>.tsv; --split)", _is_beir, _read_beir),
    SampleSource(
        "a saved Hugging Face dataset folder (save_to_disk)", _is_saved_dataset, _read_saved_dataset
    ),
    SampleSource("a CSV or TSV file with a header line", _is_delimited, _read_delimited),
    SampleSource("a parquet file", _is_parquet, _read_parquet),
    SampleSource("a YAML, JSON or JSON Lines file", _is_structured_file, _read_structured_file),
    SampleSource(
        "a pandas or polars DataFrame, an Arrow table or a Hugging Face Dataset",
        _is_table_object,
        _read_table_object,
    ),
    SampleSource("a RAGAS or DeepEval EvaluationDataset", _is_tool_dataset, _read_tool_dataset),
    SampleSource(
        "a list of samples (dicts, Sample, RAGAS SingleTurnSample or DeepEval LLMTestCase objects)",
        _is_sequence,
        _read_sequence,
    ),
)
"""Every source of samples, tried in order (the rows may be ragmeter samples, RAGAS rows or DeepEval test cases)."""


def read_rows(source: Any, *, split: str | None = None) -> Rows:
    """The rows of any source of :data:`SAMPLE_SOURCES`."""
    for reader in SAMPLE_SOURCES:
        if reader.detect(source):
            return reader.read(source, split)
    path = _path(source)
    if path is not None and path.is_dir():
        raise InputError(FOLDER_ERROR, where=str(path))
    accepted = "; ".join(reader.name for reader in SAMPLE_SOURCES)
    raise InputError(
        f"not a shape of dataset that ragmeter reads (got {type(source).__name__}); accepted: {accepted}",
        where="dataset",
    )


FOLDER_ERROR = (
    "is a directory, expected a file, a BEIR folder (qrels/<split>.tsv) or a saved Hugging Face dataset "
    "(save_to_disk)"
)
"""The error for a folder that no reader claims."""


def read_samples(
    source: Any, *, columns: Mapping[str, str] | None = None, split: str | None = None
) -> tuple[list[Sample], dict[str, Any]]:
    """The samples of any dataset source (ids unique, at least one), and what the provenance records."""
    from ragmeter.io.sample_rows import rows_to_records

    rows = read_rows(source, split=split)
    records, shape = rows_to_records(rows.rows, where=rows.where, columns=columns)
    samples: list[Sample] = []
    first_seen: dict[str, str] = {}
    for index, value in enumerate(records):
        where = rows.where(index)
        if isinstance(value, Sample):
            sample = value
        else:
            if "id" not in value:
                raise InputError("sample has no 'id'", where=where)
            sample = validate(Sample, value, where=f"{where} (sample {value['id']!r})")
        if sample.id in first_seen:
            raise InputError(
                f"duplicate sample id {sample.id!r} (first at {first_seen[sample.id]})", where=where
            )
        first_seen[sample.id] = where
        samples.append(sample)
    if not samples:
        raise InputError("the dataset has no samples", where=str(source) if _path(source) else "dataset")
    return samples, {**rows.provenance, **shape, "n_samples": len(samples)}
