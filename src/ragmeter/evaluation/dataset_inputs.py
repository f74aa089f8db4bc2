"""The inputs of :func:`ragmeter.evaluate`: samples, recorded outputs and index statistics, with provenance.

Errors name where the data came from: a file and line, or ``dataset[3]`` / ``outputs['q1']``
for data passed in Python.

>>> samples, source = load_samples([{"id": "q1", "expected_output": ["d1"]}])
>>> [s.id for s in samples], source
(['q1'], {'dataset': {'path': None, 'shape': 'ragmeter samples', 'n_samples': 1}})
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.config import RagmeterConfig
from ragmeter.errors import InputError, RagmeterError
from ragmeter.io.digests import file_sha256
from ragmeter.io.index_stats import load_index_stats
from ragmeter.io.outputs import load_outputs_with_sources, outputs_from_mapping, parse_output
from ragmeter.io.sample_sources import read_samples
from ragmeter.metrics.indexing import index_coverage, index_provenance
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.rag import IndexStats
from ragmeter.schema.samples import Sample

DatasetLike = Any
"""A dataset file or folder, ``irds:<id>``, a list of samples or rows, a DataFrame or a dataset object."""
OutputsLike = Any
"""A file, a mapping of sample id -> output (or a ranx/pytrec_eval run dict), a ranx ``Run``, or None."""


def load_samples(
    dataset: DatasetLike, *, columns: Mapping[str, str] | None = None, split: str | None = None
) -> tuple[list[Sample], dict[str, Any]]:
    """The samples of a dataset (any source :mod:`ragmeter.io.sample_sources` reads) and their provenance.

    Ids are unique and there is at least one sample. Rows written as RAGAS or DeepEval write them
    are mapped to samples (their answers and contexts become embedded outputs); the provenance
    records the mapping.
    """
    if isinstance(dataset, Mapping):
        judgments = bool(dataset) and all(isinstance(v, Mapping) for v in dataset.values())
        hint = (
            " (a {qid: {docid: relevance}} mapping is qrels: score a run with "
            "ragmeter.evaluate_trec(qrels, run))"
            if judgments
            else ""
        )
        raise InputError(
            "not a shape of dataset that ragmeter reads: give a file or folder, a list of samples, "
            f"a DataFrame or a dataset object, got {type(dataset).__name__}{hint}",
            where="dataset",
        )
    samples, provenance = read_samples(dataset, columns=columns, split=split)
    if provenance.get("path") is None:
        provenance.pop("sha256", None)
    return samples, {"dataset": provenance}


def load_outputs(
    outputs: OutputsLike, samples: list[Sample], *, dataset_where: str = "dataset"
) -> tuple[dict[str, SystemOutput], dict[str, Any], dict[str, str]]:
    """Outputs keyed by sample id, their provenance, and where each one was read.

    Outputs come from one source: ``outputs`` (a file or a mapping), or, without it, the samples'
    embedded ``actual_output``. Both at once is an error naming the first embedded one: ragmeter
    never picks one of two answers silently.
    """
    if type(outputs).__module__.startswith("ranx.") and type(outputs).__name__ == "Run":
        outputs = outputs.to_dict()  # a ranx Run: its {qid: {docid: score}}
    if outputs is None:
        embedded = {
            s.id: parse_output(s.actual_output, where=f"sample {s.id!r}: actual_output")
            for s in samples
            if s.actual_output is not None
        }
        return embedded, {"outputs": {"embedded": True}}, {}
    if isinstance(outputs, (str, Path)):
        other, fix = f"the outputs file {outputs}", "drop the outputs file (--outputs)"
    else:
        other, fix = "the outputs argument", "pass outputs=None"
    check_no_embedded_outputs(samples, where=dataset_where, other=other, fix=fix)
    if isinstance(outputs, (str, Path)):
        path = Path(outputs)
        loaded, sources = load_outputs_with_sources(path)
        provenance: dict[str, Any] = {"outputs": {"path": str(path), "sha256": file_sha256(path)}}
    else:
        loaded, sources = outputs_from_mapping(outputs)
        provenance = {"outputs": {"path": None}}
    known = {s.id for s in samples}
    for sid, where in sources.items():
        if sid not in known:
            raise InputError(f"output for unknown sample id {sid!r} (not in the dataset)", where=where)
    return loaded, provenance, sources if isinstance(outputs, (str, Path)) else {}


def check_no_embedded_outputs(samples: Sequence[Sample], *, where: str, other: str, fix: str) -> None:
    """Refuse samples that embed ``actual_output`` when the outputs come from ``other``.

    >>> check_no_embedded_outputs([Sample(id="q", actual_output=["a"])], where="d.yaml",
    ...                           other="the outputs file o.jsonl", fix="drop --outputs")
    Traceback (most recent call last):
    ...
    ragmeter.errors.InputError: d.yaml: sample 'q': actual_output: the dataset embeds outputs and the outputs file o.jsonl gives them too; keep one source (remove actual_output, or drop --outputs)
    """
    for sample in samples:
        if sample.actual_output is not None:
            raise InputError(
                f"the dataset embeds outputs and {other} gives them too; keep one source "
                f"(remove actual_output, or {fix})",
                where=f"{where}: sample {sample.id!r}: actual_output",
            )


_SAMPLE_WHERE = re.compile(r"^sample '(?P<id>.*)'$")


def located(exc: RagmeterError, where_of: Mapping[str, str]) -> RagmeterError:
    """Point an error raised for ``sample 'X'`` at the file and line that sample's output came from."""
    match = _SAMPLE_WHERE.match(exc.where or "")
    if match and match.group("id") in where_of:
        exc.where = f"{where_of[match.group('id')]} ({exc.where})"
        exc.args = (f"{exc.where}: {exc.message}",)
    return exc


def index_stats_coverage(
    index_stats: str | Path | IndexStats | None, cfg: RagmeterConfig, cfg_path: Path | None
) -> tuple[dict[str, Any] | None, dict[str, Any], list[str]]:
    """Index coverage, its provenance and warnings, from the argument or the config's ``index_stats``."""
    if index_stats is None and cfg.index_stats is not None:
        base = cfg_path.parent if cfg_path is not None else Path.cwd()
        index_stats = base / cfg.index_stats
    if index_stats is None:
        return None, {}, []
    warnings: list[str] = []
    source: dict[str, Any] = {"path": None}
    if isinstance(index_stats, IndexStats):
        stats = index_stats
    else:
        path = Path(index_stats)
        stats, warnings = load_index_stats(path)
        source = {"path": str(path), "sha256": file_sha256(path)}
    return index_coverage(stats), {"index": source | index_provenance(stats)}, warnings
