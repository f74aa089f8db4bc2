"""Framework systems in a suite, on the example vault: the same retrieval metrics as the same retriever
results fed through ``--outputs``, per-stage timings, token counts, errors and timeouts as http records them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from ragmeter.harness.calls import question_of
from ragmeter.io.datasets import load_dataset

pytestmark = pytest.mark.xdist_group("frameworks")  # one worker imports the frameworks once

HERE = Path(__file__).resolve().parent
SYSTEMS = HERE / "systems"
DATASET = HERE.parents[1] / "examples" / "tests.yaml"
METRICS = ["hit@5", "recall@5", "mrr", "precision@5", "ndcg@5"]

Cli = Callable[[list[str]], tuple[int, str, str]]


def write_suite(tmp_path: Path, system: dict[str, Any], dataset: Path = DATASET, **settings: Any) -> Path:
    suite = {
        "name": "frameworks",
        "dataset": str(dataset),
        "system": {**system, "python_path": [str(SYSTEMS)]},
        "k": 5,
        "metrics": METRICS,
        "concurrency": 2,
        "retries": 0,
        "results_dir": str(tmp_path / "results"),
        **settings,
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite), encoding="utf-8")
    return path


def run_suite(cli: Cli, suite: Path) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    code, out, err = cli(["run", str(suite), "--json", "-q", "--no-report", "--no-record"])
    assert code == 0, err
    lines = (suite.parent / "results" / "outputs.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(out), {r["id"]: r["output"] for r in map(json.loads, lines)}


def eval_outputs(cli: Cli, tmp_path: Path, outputs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    path = tmp_path / "reference.jsonl"
    path.write_text(
        "".join(json.dumps({"id": q, "output": {"retrieved": r}}) + "\n" for q, r in outputs.items())
    )
    args = [
        "eval",
        "-d",
        str(DATASET),
        "--outputs",
        str(path),
        "--json",
        *(a for m in METRICS for a in ("-m", m)),
    ]
    code, out, err = cli(args)
    assert code == 0, err
    return json.loads(out)


def questions() -> dict[str, str]:
    return {s.id: question_of(s) or "" for s in load_dataset(DATASET)}


def assert_same_retrieval(suite_json: dict[str, Any], reference: dict[str, Any]) -> None:
    got = {m: suite_json["aggregate"][m] for m in METRICS}
    assert got == {m: reference["aggregate"][m] for m in METRICS}
    assert 0 < got["mrr"] < 1 and got["hit@5"] > 0.3  # a real ranking, not all misses


def assert_stages(outputs: dict[str, dict[str, Any]], *stages: str) -> None:
    for output in outputs.values():
        assert not output.get("error"), output.get("error")
        assert set(stages) <= set(output["timings"]), output["timings"]
        assert all(output["timings"][s] >= 0 for s in stages)


def test_langchain_chain(cli: Cli, tmp_path: Path, framework_system: Callable[[str], ModuleType]) -> None:
    lc = framework_system("langchain")
    suite = write_suite(tmp_path, {"type": "langchain", "object": "lc_vault:chain"})
    suite_json, outputs = run_suite(cli, suite)
    reference = {
        qid: [
            {
                "id": d.id,
                "rel_path": d.metadata["source"],
                "heading_path": [
                    d.metadata[f"Header {n}"] for n in range(1, 7) if f"Header {n}" in d.metadata
                ],
                "text": d.page_content,
            }
            for d in lc.retriever.invoke(question)
        ]
        for qid, question in questions().items()
    }
    assert_same_retrieval(suite_json, eval_outputs(cli, tmp_path, reference))
    assert_stages(outputs, "retrieval", "generation")
    first = outputs["fact-001"]
    assert first["answer"] == "See the notes."
    assert first["tokens"] == {"prompt": 40, "completion": 6} and first["model"] == "fake-chat"
    assert first["retrieved"][0]["metadata"]["source"] == first["retrieved"][0]["rel_path"]


def test_llamaindex_query_engine(
    cli: Cli, tmp_path: Path, framework_system: Callable[[str], ModuleType]
) -> None:
    li = framework_system("llamaindex")
    suite = write_suite(tmp_path, {"type": "llamaindex", "object": "li_vault:query_engine"})
    suite_json, outputs = run_suite(cli, suite)

    def headings(node: Any) -> list[str]:  # MarkdownNodeParser: ancestors in header_path, own heading first
        own = node.get_content().split("\n", 1)[0].lstrip("#").strip()
        return [*(p for p in node.metadata["header_path"].split("/") if p), own]

    reference = {
        qid: [
            {
                "rel_path": n.node.metadata["file_path"],
                "heading_path": headings(n.node),
                "text": n.node.get_content(),
            }
            for n in li.retriever.retrieve(question)
        ]
        for qid, question in questions().items()
    }
    assert_same_retrieval(suite_json, eval_outputs(cli, tmp_path, reference))
    assert_stages(outputs, "retrieval", "generation")
    assert outputs["fact-001"]["answer"].strip()
    assert "tokens" not in outputs["fact-001"]  # MockLLM reports no usage: unknown, not 0


def test_haystack_pipeline(cli: Cli, tmp_path: Path, framework_system: Callable[[str], ModuleType]) -> None:
    hs = framework_system("haystack")
    suite = write_suite(tmp_path, {"type": "haystack", "object": "hs_vault:pipeline", "generator": "llm"})
    suite_json, outputs = run_suite(cli, suite)
    reference = {}
    for qid, question in questions().items():
        found = hs.pipeline.get_component("retriever").run(query=question, top_k=5)["documents"]
        reference[qid] = [
            {
                "id": d.meta["chunk_id"],
                "rel_path": d.meta["file_path"],
                "heading_path": d.meta["heading_path"],
                "text": d.content,
            }
            for d in found
        ]
    assert_same_retrieval(suite_json, eval_outputs(cli, tmp_path, reference))
    assert_stages(outputs, "retrieval", "generation")
    first = outputs["fact-001"]
    assert first["answer"] == "See the notes."
    assert first["tokens"] == {"prompt": 52, "completion": 7} and first["model"] == "scripted-model"
    assert first["retrieved"][0]["id"].startswith(first["retrieved"][0]["rel_path"] + "#")


def test_dspy_program(cli: Cli, tmp_path: Path, framework_system: Callable[[str], ModuleType]) -> None:
    ds = framework_system("dspy")
    suite = write_suite(tmp_path, {"type": "dspy", "object": "dspy_vault:program"})
    suite_json, outputs = run_suite(cli, suite)
    reference = {
        qid: [
            {"id": p["id"], "rel_path": p["source"], "heading_path": p["heading_path"], "text": p["text"]}
            for p in ds.program.search(question=question).passages
        ]
        for qid, question in questions().items()
    }
    assert_same_retrieval(suite_json, eval_outputs(cli, tmp_path, reference))
    assert_stages(outputs, "retrieval", "generation")
    assert outputs["fact-001"]["answer"] == "See the notes."
    assert "tokens" not in outputs["fact-001"]  # DummyLM reports 0 and 0: unknown, not 0
