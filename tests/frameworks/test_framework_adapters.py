"""Framework adapters beyond the happy path: ragmeter.run on framework objects, errors and timeouts,
suite validation, and the shared mapping of metadata, usage and failures."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import openai
import pytest
import yaml

import ragmeter
from ragmeter.errors import ConfigError
from ragmeter.harness.calls import CallFailed, call_failure
from ragmeter.harness.framework_suite import DEFAULT_METADATA, MetadataMapping
from ragmeter.harness.frameworks import DocumentMapper, detect_framework, token_usage

pytestmark = pytest.mark.xdist_group("frameworks")  # one worker imports the frameworks once

HERE = Path(__file__).resolve().parent
SYSTEMS = HERE / "systems"
SAMPLES = [
    {
        "id": "atlas",
        "input": {"question": "What command installs the Atlas client on macOS?"},
        "gold_supports": [
            {"rel_path": "work/projects/atlas/setup.md", "heading_path": "Setup > Install > macOS"}
        ],
    },
    {
        "id": "plants",
        "input": {"question": "How often should I water the monstera?"},
        "gold_supports": [{"rel_path": "personal/home/plants.md", "heading_path": "Plants > Watering"}],
    },
]
METRICS = ["hit@5", "mrr"]

Load = Callable[[str], ModuleType]


def test_run_detects_each_framework_object(framework_system: Load) -> None:
    """ragmeter.run(dataset, system=obj) with a retriever or a query engine of every framework."""
    cases = [
        ("langchain", "retriever", {}),
        ("langchain", "answer_only", {}),  # the documents come from the retriever's callback
        ("llamaindex", "retriever", {}),
        ("haystack", "pipeline", {"generator": "llm"}),
        ("dspy", "program", {}),
    ]
    for framework, name, options in cases:
        obj = getattr(framework_system(framework), name)
        assert detect_framework(obj) == framework
        result = ragmeter.run(SAMPLES, obj, metrics=METRICS, k=5, concurrency=2, **options)
        assert result.aggregate["hit@5"] == 1.0 and result.aggregate["mrr"] >= 0.5, (framework, name)
        assert result.provenance["system"]["kind"] == framework
        paths = [r.get("rel_path") for r in result.query_details["atlas"]["retrieved"]]
        assert "work/projects/atlas/setup.md" in paths, (framework, name)


def test_run_rejects_unknown_options_and_objects(framework_system: Load) -> None:
    lc = framework_system("langchain")
    with pytest.raises(ConfigError, match=r"^retreiver: Extra inputs are not permitted"):
        ragmeter.run(SAMPLES, lc.retriever, retreiver="x")
    with pytest.raises(ConfigError, match="system must be a LangChain, LlamaIndex, Haystack or DSPy object"):
        ragmeter.run(SAMPLES, 42)


def test_haystack_errors_and_timeouts_are_recorded_like_http(
    tmp_path: Path, cli: Any, framework_system: Load
) -> None:
    framework_system("haystack")
    dataset = tmp_path / "tests.yaml"
    dataset.write_text(
        yaml.safe_dump(
            {
                "samples": [
                    {"id": "ok", "input": "What command installs the Atlas client?"},
                    {"id": "broken", "input": "FAIL-500 what now?"},
                    {"id": "slow", "input": "HANG on a second"},
                ]
            }
        )
    )
    suite = tmp_path / "suite.yaml"
    system = {"type": "haystack", "object": "hs_vault:pipeline", "python_path": [str(SYSTEMS)]}
    suite.write_text(
        yaml.safe_dump(
            {
                "name": "errors",
                "dataset": str(dataset),
                "system": system,
                "metrics": ["error_rate", "timeout_rate"],
                "timeout_seconds": 3,
                "retries": 1,
                "backoff_seconds": 0,
                "results_dir": str(tmp_path / "results"),
            }
        )
    )
    code, out, err = cli(["run", str(suite), "--json", "-q", "--no-report", "--no-record"])
    assert code == 0, err
    lines = (tmp_path / "results" / "outputs.jsonl").read_text().splitlines()
    outputs = {r["id"]: r["output"] for r in map(json.loads, lines)}
    assert outputs["ok"]["answer"] == "See the notes." and outputs["ok"]["attempts"] == 1
    broken = outputs["broken"]
    assert broken["error"].startswith("PipelineRuntimeError: ") and "500" in broken["error"]
    assert broken["attempts"] == 2  # HTTP 5xx is retried, as the http adapter does
    assert broken["retrieved"] == [] and broken["answer"] is None
    slow = outputs["slow"]
    assert slow["timed_out"] is True and slow["error"] == "timed out after 3 s" and slow["attempts"] == 1
    assert json.loads(out)["aggregate"] == {"error_rate": 2 / 3, "timeout_rate": 1 / 3}


def _suite(tmp_path: Path, system: dict[str, Any]) -> Path:
    dataset = tmp_path / "tests.yaml"
    dataset.write_text(yaml.safe_dump({"samples": [{"id": "q", "input": "Why?"}]}))
    path = tmp_path / "suite.yaml"
    system = {**system, "python_path": [str(SYSTEMS)]}
    path.write_text(yaml.safe_dump({"name": "s", "dataset": str(dataset), "system": system}, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        (
            {"type": "haystack", "object": "hs_vault:pipeline", "retreiver": "x"},
            "system.retreiver: unknown key; did you mean 'retriever'?",
        ),
        (
            {"type": "langchain", "object": "lc_vault:retriever", "metadata": {"rel_pth": "source"}},
            "system.metadata.rel_pth: unknown key; did you mean 'rel_path'?",
        ),
        (
            {"type": "langchain", "object": "lc_vault:nothing_here"},
            "system.object: module 'lc_vault' has no attribute 'nothing_here'",
        ),
        (
            {"type": "langchain", "object": "li_vault:retriever"},
            "system.object: VectorIndexRetriever is a llamaindex object, not a langchain one",
        ),
        (
            {"type": "haystack", "object": "hs_vault:pipeline", "generator": "prompt_builder"},
            "system.generator: component 'prompt_builder' has no 'replies' output",
        ),
        (
            {"type": "dspy", "object": "no_such_module_here:program"},
            "system.object: cannot import module 'no_such_module_here' (No module named 'no_such_module_here')",
        ),
    ],
)
def test_suite_errors_name_the_key(
    tmp_path: Path, cli: Any, framework_system: Load, system: dict[str, Any], expected: str
) -> None:
    for framework in ("langchain", "llamaindex", "haystack"):
        framework_system(framework)
    path = _suite(tmp_path, system)
    code, _out, err = cli(["run", str(path), "-q", "--no-report", "--no-record"])
    assert code == 2
    line = err.strip()
    assert line.startswith(f"Error: {path}:") and line.endswith(expected), line
    assert "\n" not in line


def test_document_mapper_defaults_and_overrides(tmp_path: Path) -> None:
    llama = DocumentMapper(DEFAULT_METADATA["llamaindex"])
    item = llama.item(
        "### macOS\nbrew install", {"file_path": "a/setup.md", "header_path": "/Setup/Install/"}
    )
    assert item["heading_path"] == ["Setup", "Install", "macOS"] and item["rel_path"] == "a/setup.md"
    haystack = DocumentMapper(DEFAULT_METADATA["haystack"])
    assert haystack.item("x", {"heading_path": "A > B", "file_path": "n.md"}, score=0.5)["heading_path"] == [
        "A",
        "B",
    ]
    root = tmp_path / "vault"
    mapping = MetadataMapping(rel_path=("path",), heading_path=("section",), id=("uid",), path_root="vault")
    custom = DocumentMapper(mapping, base_dir=tmp_path)
    item = custom.item(
        "t", {"path": f"{root}/n.md", "section": "Intro", "uid": 7, "when": object()}, native_id="x"
    )
    assert (item["rel_path"], item["heading_path"], item["id"]) == ("n.md", ["Intro"], "7")
    assert isinstance(item["metadata"]["when"], str)  # kept, JSON-safe
    assert "score" not in custom.item("t", {}, score=float("nan"))


def test_token_usage_shapes() -> None:
    assert token_usage({"usage": {"prompt_tokens": 5, "completion_tokens": 2}}) == (5, 2)
    assert token_usage({"usage_metadata": {"input_tokens": 5, "output_tokens": 0}}) == (5, 0)
    assert token_usage({"usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 1}}) == (3, 1)
    assert token_usage({"prompt_tokens": 0, "completion_tokens": 0}) is None
    assert token_usage({"model": "x"}) is None and token_usage(None) is None


def _response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    return httpx.Response(status, headers=headers or {}, request=request, json={"error": {"message": "x"}})


def test_call_failure_classifies_real_client_errors() -> None:
    limited = call_failure(
        openai.RateLimitError("slow down", response=_response(429, {"Retry-After": "3"}), body=None)
    )
    assert isinstance(limited, CallFailed) and limited.retryable and limited.retry_after == 3.0
    server = call_failure(openai.InternalServerError("boom", response=_response(503), body=None))
    assert isinstance(server, CallFailed) and server.retryable
    bad = call_failure(openai.BadRequestError("nope", response=_response(400), body=None))
    assert isinstance(bad, CallFailed) and not bad.retryable and bad.message.startswith("BadRequestError: ")
    timeout = call_failure(openai.APITimeoutError(request=httpx.Request("POST", "http://127.0.0.1:9")))
    assert isinstance(timeout, TimeoutError) and str(timeout).startswith("APITimeoutError")
    try:
        try:
            raise httpx.ConnectError("refused")
        except httpx.ConnectError as inner:
            raise RuntimeError("component 'llm' failed") from inner
    except RuntimeError as wrapped:
        connect = call_failure(wrapped)
    assert isinstance(connect, CallFailed) and connect.retryable
    assert connect.message == "RuntimeError: component 'llm' failed"
