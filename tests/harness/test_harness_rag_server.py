"""The http system against the pipeline engineer's RAG service (tests/pipeline/rag_server.py).

Asked over HTTP and mapped with JMESPath, the reference pipeline must score exactly as it does
in-process (the builtin system): the adapter and the mapping lose nothing.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from ragmeter.harness.suite_run import run_suite

ROOT = Path(__file__).resolve().parents[2]
SERVER_FILE = ROOT / "tests" / "pipeline" / "rag_server.py"
VAULT = ROOT / "examples" / "vault"
DATASET = ROOT / "examples" / "tests.yaml"
METRICS = ["hit@5", "mrr", "precision@5", "attribution_hit_rate", "abstention_accuracy"]
MAPPING = {
    name: f"data.{name}"
    for name in (
        "retrieved",
        "answer",
        "references",
        "abstained",
        "folder_mode",
        "selected_folders",
        "timings",
        "tokens",
    )
}

pytestmark = pytest.mark.skipif(
    not (SERVER_FILE.is_file() and DATASET.is_file()), reason="tests/pipeline/rag_server.py not present"
)


def _server_module() -> ModuleType:
    name = "pipeline_rag_server"  # the name tests/pipeline/conftest.py registers it under
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SERVER_FILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def rag_service() -> Iterator[Any]:
    with _server_module().RagServer(VAULT) as server:
        yield server


def _suite(folder: Path, name: str, system: dict[str, Any], **fields: Any) -> Path:
    data = {
        "name": name,
        "dataset": str(DATASET),
        "system": system,
        "metrics": METRICS,
        "k": 5,
        "concurrency": 4,
        "timeout_seconds": 5,
        "retries": 2,
        "backoff_seconds": 0.01,
        "results_dir": name,
        **fields,
    }
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_harness_rag_server_http_scores_like_builtin(tmp_path: Path, rag_service: Any) -> None:
    over_http = run_suite(
        _suite(tmp_path, "http", {"type": "http", "url": rag_service.ask_url, "response": MAPPING})
    )
    in_process = run_suite(_suite(tmp_path, "builtin", {"type": "builtin", "vault": str(VAULT)}))
    assert over_http.summary.n_ok == in_process.summary.n_ok == over_http.result.n_queries
    assert over_http.result.aggregate == in_process.result.aggregate
    assert over_http.result.per_query == in_process.result.per_query
    asked = [r.body for r in rag_service.requests]
    assert all(set(body) == {"question", "k"} and body["k"] == 5 for body in asked)


def test_harness_rag_server_injected_failures(tmp_path: Path, rag_service: Any) -> None:
    samples = yaml.safe_load(DATASET.read_text(encoding="utf-8"))["samples"][:6]
    # the "empty" question must be one the pipeline answers (an abstention is not an empty answer)
    answered = next(
        i
        for i, s in enumerate(samples)
        if not rag_service.pipeline.answer(s["input"]["question"])["abstained"]
    )
    samples.insert(3, samples.pop(answered))
    (tmp_path / "six.yaml").write_text(yaml.safe_dump({"samples": samples}), encoding="utf-8")
    q = [s["input"]["question"] for s in samples]
    rag_service.behave("500", "503", question=q[0])
    rag_service.behave("hang:3000", question=q[1])
    rag_service.behave("malformed", question=q[2])
    rag_service.behave("empty", question=q[3])
    rag_service.behave("slow:300", question=q[4])
    rag_service.behave("status:422", question=q[5])
    system = {"type": "http", "url": rag_service.ask_url, "response": MAPPING}
    suite = _suite(tmp_path, "faults", system, dataset="six.yaml", timeout_seconds=1, metrics=["hit@5"])
    outcome = run_suite(suite)
    lines = [
        json.loads(x)
        for x in (tmp_path / "faults" / "outputs.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    out = {line["id"]: line["output"] for line in lines}
    ids = [s["id"] for s in samples]
    assert out[ids[0]]["attempts"] == 3 and "error" not in out[ids[0]]
    assert out[ids[1]]["timed_out"] is True and out[ids[1]]["error"] == "timed out after 1 s"
    assert out[ids[2]]["error"].startswith("malformed JSON in the response (")
    assert out[ids[3]]["answer"] == "" and out[ids[3]]["retrieved"] == []
    assert out[ids[4]]["latency"] >= 0.3
    assert out[ids[5]]["error"] == 'HTTP 422 Unprocessable Entity: \'{"error": "injected HTTP 422"}\''
    summary = outcome.summary
    assert (summary.n_ok, summary.n_errors, summary.n_timeouts, summary.n_empty) == (3, 2, 1, 1)
    assert len(rag_service.requests) == 8  # 3 for the 5xx question, 1 for each of the others
