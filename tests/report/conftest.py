"""Results folders for the report tests, made once per session by the real commands.

* ``demo_results``: ``ragmeter run examples/suite.yaml`` (what ``make demo`` writes, report included);
* ``judged_results``: ``ragmeter eval`` of the demo's outputs with LLM judges (a scripted
  OpenAI-compatible server on 127.0.0.1) and the reliability spot-check;
* ``agentic_json``: ``ragmeter agentic --out`` on the example traces;
* ``big_results``: 10,000 synthetic queries (``report_helpers.py``).

``report_helpers`` is registered as a module, so test modules can ``from report_helpers import ...``.
"""

from __future__ import annotations

import importlib.util
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


chat_server = _load("report_chat_server", ROOT / "tests" / "judges" / "chat_server.py")
helpers = _load("report_helpers", Path(__file__).with_name("report_helpers.py"))
run_cli = helpers.run_cli


@pytest.fixture(scope="session", autouse=True)
def _session_history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The session fixtures' commands record and read history in a temporary database, never the repository's."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAGMETER_HISTORY", str(tmp_path_factory.mktemp("session-history") / "history.sqlite"))
        yield


@pytest.fixture(scope="session")
def demo_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo suite's results folder, with the report ``ragmeter run`` writes."""
    out = tmp_path_factory.mktemp("demo") / "results"
    run_cli(["run", str(EXAMPLES / "suite.yaml"), "--results-dir", str(out), "--quiet"])
    return out


JUDGE_REPLIES: dict[str, dict[str, Any]] = {
    "groundedness": {
        "supported_claims": ["the client is installed with brew"],
        "unsupported_claims": [],
        "makes_claims": True,
        "score": 4,
    },
    "correctness": {"reasoning": "The answer names the command the reference gives.", "score": 5},
    "abstention": {"reasoning": "The reply declines to answer.", "abstained": True},
    "factual_match": {"reasoning": "Both state the same fact.", "match": True},
    "factual_verify": {
        "key_facts": ["the command"],
        "reasoning": "Checked against the reference.",
        "match": True,
    },
}


def _judge_reply(body: dict[str, Any]) -> Any:
    """The scripted reply; correctness scores vary with the prompt (so the spot-check's kappa is defined)."""
    schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    judge = str(schema).removesuffix("_reply")
    reply = dict(JUDGE_REPLIES.get(judge, {}))
    prompt = body["messages"][-1]["content"]
    if judge == "correctness" and "Atlas client on macOS" not in prompt:
        reply["score"] = zlib.crc32(prompt.encode()) % 6
    return chat_server.ok(reply)


@pytest.fixture(scope="session")
def judged_results(tmp_path_factory: pytest.TempPathFactory, demo_results: Path) -> Iterator[Path]:
    """``ragmeter eval`` of the demo outputs with judges and the spot-check, then ``ragmeter report``."""
    root = tmp_path_factory.mktemp("judged")
    server = chat_server.ChatServer(_judge_reply).start()
    judge = {
        "base_url": server.base_url,
        "model": "test-judge",
        "api_key_env": "RAGMETER_REPORT_TEST_KEY",
        "seed": 7,
        "max_retries": 0,
        "cache_path": str(root / "cache.sqlite"),
        "prices": {"test-judge": {"input_per_mtok": 2.0, "output_per_mtok": 4.0}},
        "reliability": {"model": "test-judge-2", "fraction": 0.5, "min_n": 5},
    }
    (root / "judge.yaml").write_text(yaml.safe_dump({"judge": judge}), encoding="utf-8")
    out = root / "results"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAGMETER_REPORT_TEST_KEY", "sk-test")
        args = ["--dataset", str(EXAMPLES / "tests.yaml"), "--outputs", str(demo_results / "outputs.jsonl")]
        run_cli(["eval", *args, "--judge-config", str(root / "judge.yaml"), "--out", str(out), "--json"])
    server.stop()
    run_cli(["report", str(out)])
    yield out


@pytest.fixture(scope="session")
def agentic_json(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ragmeter agentic --out`` on the example traces and labels."""
    out = tmp_path_factory.mktemp("agentic") / "agentic.json"
    folder = EXAMPLES / "agentic"
    run_cli(
        ["agentic", "-t", str(folder / "traces.jsonl"), "-l", str(folder / "labels.jsonl"), "--out", str(out)]
    )
    return out


@pytest.fixture(scope="session")
def big_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """10,000 synthetic judged queries and their report."""
    results: Path = helpers.synthetic_results(tmp_path_factory.mktemp("big"), 10_000)
    run_cli(["report", str(results)])
    return results
