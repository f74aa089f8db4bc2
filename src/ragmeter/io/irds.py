"""ir_datasets (the ``ir_datasets`` extra): any dataset it knows, named ``irds:<dataset id>``.

``--qrels irds:beir/scifact/test`` reads the dataset's ``qrels_iter()``, ``--run irds:ID`` its
``scoreddocs_iter()`` (a run it ships), and ``--dataset irds:ID`` one sample per judged query:
the query's text as the input and its judgments as ``expected_output``. ir_datasets may need
to download a dataset the first time; ragmeter never asks it to here beyond what it does itself.

>>> dataset_id("irds:beir/scifact/test")
'beir/scifact/test'
>>> is_irds("irds:x"), is_irds("run.trec")
(True, False)
"""

from __future__ import annotations

from typing import Any

from ragmeter.errors import InputError
from ragmeter.extras import import_optional
from ragmeter.io.nested_runs import qrels_from_tuples, run_from_tuples
from ragmeter.io.run_tables import judgments_by_topic
from ragmeter.io.trec_tables import TrecQrels, TrecRun

PREFIX = "irds:"


def is_irds(source: Any) -> bool:
    """Whether ``source`` names an ir_datasets dataset (``irds:<id>``)."""
    return isinstance(source, str) and source.startswith(PREFIX)


def dataset_id(source: str) -> str:
    """The ir_datasets id in ``irds:<id>``."""
    return source.removeprefix(PREFIX)


def load(source: str) -> Any:
    """The ir_datasets dataset ``source`` names; an unknown id is an error."""
    ir_datasets = import_optional("ir_datasets", needed_for="reading ir_datasets datasets (irds:...)")
    name = dataset_id(source)
    try:
        return ir_datasets.load(name)
    except KeyError:
        raise InputError(f"ir_datasets knows no dataset {name!r}", where=source) from None


def _need(dataset: Any, what: str, source: str) -> None:
    if not getattr(dataset, f"has_{what}")():
        raise InputError(f"this ir_datasets dataset has no {what}", where=source)


def irds_qrels(source: str, *, trec_compat: bool = False) -> tuple[TrecQrels, dict[str, Any]]:
    """The dataset's qrels, and what the provenance records."""
    dataset = load(source)
    _need(dataset, "qrels", source)
    qrels = qrels_from_tuples(dataset.qrels_iter(), where=source, trec_compat=trec_compat)
    return qrels, {"format": "ir_datasets", "dataset": dataset_id(source)}


def irds_run(source: str) -> tuple[TrecRun, dict[str, Any]]:
    """The dataset's scored documents as a run, and what the provenance records."""
    dataset = load(source)
    _need(dataset, "scoreddocs", source)
    run = run_from_tuples(dataset.scoreddocs_iter(), where=source)
    return run, {"format": "ir_datasets", "dataset": dataset_id(source)}


def irds_samples(source: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One sample (a raw record) per judged query, in qrels order, and the provenance."""
    dataset = load(source)
    _need(dataset, "qrels", source)
    _need(dataset, "queries", source)
    texts = {query.query_id: _text(query) for query in dataset.queries_iter()}
    gains = judgments_by_topic(qrels_from_tuples(dataset.qrels_iter(), where=source))
    missing = [qid for qid in gains if qid not in texts]
    if missing:
        raise InputError(
            f"judged queries without a query text: {', '.join(map(repr, missing[:5]))}", where=source
        )
    samples = [{"id": qid, "input": texts[qid], "expected_output": judged} for qid, judged in gains.items()]
    mapping = {"id": "query_id", "input": "the query's default text", "expected_output": "qrels"}
    return samples, {"format": "ir_datasets", "dataset": dataset_id(source), "mapping": mapping}


def _text(query: Any) -> Any:
    """A query's text: its ``default_text()`` (newer ir_datasets), else its ``text`` field."""
    default = getattr(query, "default_text", None)
    return default() if callable(default) else getattr(query, "text", None)
