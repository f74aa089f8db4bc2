"""Shared data for the format tests: one tie-heavy run and its qrels, as dicts and as TREC files.

Every format test writes the same judgments and run through a real library (ranx, pandas,
polars, pyarrow, datasets, ir_measures, ir_datasets) and expects exactly the numbers ragmeter
computes from the TREC files.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ragmeter import evaluate_trec
from ragmeter.results import EvalResult

METRICS = ["map", "mrr", "ndcg@5", "ndcg@10", "precision@5", "recall@10", "r-precision", "hit@3"]


@dataclass(frozen=True)
class IrData:
    """Qrels and a run as nested dicts, their TREC files, and the result ragmeter computes from those."""

    qrels: dict[str, dict[str, int]]
    run: dict[str, dict[str, float]]
    qrels_path: Path
    run_path: Path
    expected: EvalResult

    def rows(self, kind: str) -> list[tuple[str, str, Any]]:
        data: dict[str, dict[str, Any]] = self.qrels if kind == "qrels" else self.run  # type: ignore[assignment]
        return [(q, d, v) for q, docs in data.items() for d, v in docs.items()]


def same_numbers(result: EvalResult, expected: EvalResult) -> None:
    """The same aggregates and per-query values, bit for bit."""
    assert result.aggregate == expected.aggregate
    assert result.per_query == expected.per_query
    assert result.n_scored == expected.n_scored


@pytest.fixture(scope="session")
def ir_data(tmp_path_factory: pytest.TempPathFactory) -> IrData:
    rng = random.Random(16)
    folder = tmp_path_factory.mktemp("ir_data")
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    docs = [f"D{i:03d}" for i in range(40)]
    for q in range(1, 9):
        qid = f"{q:03d}"  # leading zeros: ids stay text
        qrels[qid] = {d: rng.choice([0, 0, 1, 2, 3]) for d in rng.sample(docs, 8)}
        if q == 8:
            continue  # a judged topic with no run: left out unless complete
        retrieved = rng.sample(docs, 15)
        run[qid] = {d: float(rng.choice([1, 2, 2, 3, 3, 3])) / 2 for d in retrieved}  # many ties
    run["900"] = {"D001": 1.0}  # a run topic without judgments: ignored
    qrels_path = folder / "qrels.txt"
    run_path = folder / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs_ in qrels.items() for d, r in docs_.items()))
    lines = []
    for q, scored in run.items():
        for rank, (d, s) in enumerate(sorted(scored.items(), key=lambda x: -x[1]), start=1):
            lines.append(f"{q} Q0 {d} {rank} {s} tag\n")
    run_path.write_text("".join(lines))
    expected = evaluate_trec(qrels_path, run_path, metrics=METRICS)
    assert expected.n_queries == 7 and all(v is not None for v in expected.aggregate.values())
    return IrData(qrels, run, qrels_path, run_path, expected)


@pytest.fixture(scope="session")
def irds_name(ir_data: IrData, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A dataset registered with ir_datasets from local files (nothing is downloaded)."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TrecScoredDocs, TsvQueries
    from ir_datasets.util import LocalDownload

    folder = tmp_path_factory.mktemp("irds")
    (folder / "queries.tsv").write_text("".join(f"{q}\tquestion {q}\n" for q in ir_data.qrels))
    name = "ragmeter-test/local"
    if name not in ir_datasets.registry:
        ir_datasets.registry.register(
            name,
            Dataset(
                TsvQueries(LocalDownload(folder / "queries.tsv")),
                TrecQrels(LocalDownload(ir_data.qrels_path), {0: "no", 1: "yes", 2: "good", 3: "best"}),
                TrecScoredDocs(LocalDownload(ir_data.run_path)),
            ),
        )
    return f"irds:{name}"
