"""Fixtures of the judge-in-evaluation tests: the scripted chat server of tests/judges, a judge that
answers by prompt, and a workspace with samples, outputs and a ``ragmeter.yaml``.

``tests/judges/chat_server.py`` is loaded by path (pytest runs with ``--import-mode=importlib``) and
registered as ``judge_eval_chat_server``, so test modules here can ``import judge_eval_chat_server as cs``.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import re
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

_PATH = Path(__file__).resolve().parents[1] / "judges" / "chat_server.py"
_spec = importlib.util.spec_from_file_location("judge_eval_chat_server", _PATH)
assert _spec is not None and _spec.loader is not None
chat_server_module = importlib.util.module_from_spec(_spec)
sys.modules["judge_eval_chat_server"] = chat_server_module
_spec.loader.exec_module(chat_server_module)
cs = chat_server_module

SECRET = "sk-ragmeter-test-SECRET-4242"
"""The API key the tests put in the environment; it must never reach a file."""

PRICE = {"input_per_mtok": 2.0, "output_per_mtok": 4.0}
"""USD per million tokens for ``test-judge``; every scripted reply uses 10 prompt + 5 completion tokens."""
COST_PER_CALL = (10 * 2.0 + 5 * 4.0) / 1_000_000


def judge_of(body: dict[str, Any]) -> str:
    """Which prompt a request comes from: the structured-output schema name (``groundedness_reply``)."""
    name = str(((body.get("response_format") or {}).get("json_schema") or {}).get("name", ""))
    return name.removesuffix("_reply")


def question_of(body: dict[str, Any]) -> str:
    """The sample id the test marked the question or context with (``<<q1>> When …``), or ``?``."""
    found = re.search(r"<<(q\d+)>>", body["messages"][1]["content"])
    return found.group(1) if found else "?"


@dataclass
class ScriptedJudge:
    """Answers each judge prompt; ``overrides[(judge, sample id)]`` replaces the default reply."""

    overrides: dict[tuple[str, str], Any] = field(default_factory=dict)
    by_model: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Model name → judge → reply (the second judge of the spot-check)."""
    tokens: tuple[int, int] = (10, 5)
    seen: list[tuple[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    DEFAULTS: ClassVar[dict[str, dict[str, Any]]] = {
        "groundedness": {
            "supported_claims": ["c"],
            "unsupported_claims": [],
            "makes_claims": True,
            "score": 4,
        },
        "correctness": {"reasoning": "right", "score": 5},
        "abstention": {"reasoning": "it declines", "abstained": True},
        "conflict": {"reasoning": "names both versions", "acknowledges_conflict": True},
        "factual_match": {"reasoning": "same fact", "match": True},
        "factual_verify": {"key_facts": ["f"], "reasoning": "checked", "match": True},
    }

    def __call__(self, body: dict[str, Any]) -> Any:
        judge, qid = judge_of(body), question_of(body)
        with self._lock:
            self.seen.append((judge, qid))
        default = self.by_model.get(str(body.get("model")), {}).get(judge, self.DEFAULTS.get(judge, {}))
        reply = self.overrides.get((judge, qid), default)
        if isinstance(reply, cs.Reply):
            return reply
        return cs.ok(reply, prompt_tokens=self.tokens[0], completion_tokens=self.tokens[1])


@pytest.fixture
def scripted() -> ScriptedJudge:
    return ScriptedJudge()


@pytest.fixture
def judge_server(scripted: ScriptedJudge) -> Iterator[Any]:
    """A running chat server that answers with :class:`ScriptedJudge`."""
    server = cs.ChatServer(scripted).start()
    yield server
    server.stop()


SAMPLES = [
    {
        "id": "q1",
        "input": {"question": "<<q1>> When was the Eiffel Tower completed?"},
        "gold_supports": [{"rel_path": "paris.md"}],
        "metadata": {"expected_answer": "1889"},
    },
    {
        "id": "q2",
        "input": "<<q2>> Who designed it?",
        "gold_supports": [{"rel_path": "paris.md"}],
        "metadata": {"expected_answer": "Gustave Eiffel's company"},
    },
    {"id": "q3", "input": "<<q3>> What is the tower's wifi password?", "answerable": False},
    {"id": "q4", "input": "<<q4>> What colour is it painted?", "answerable": False},
    {"id": "q5", "input": "<<q5>> How tall is it?", "gold_supports": [{"rel_path": "paris.md"}]},
]
OUTPUTS = [
    {
        "id": "q1",
        "output": {
            "answer": "It was completed in 1889 [1].",
            "retrieved": [
                {"rel_path": "paris.md", "text": "<<q1>> The Eiffel Tower was completed in 1889."},
                {"rel_path": "rome.md", "text": "The Colosseum is in Rome."},
            ],
        },
    },
    {
        "id": "q2",
        "output": {
            "answer": "Gustave Eiffel's company designed it [1].",
            "retrieved": [
                {"rel_path": "paris.md", "text": "<<q2>> Gustave Eiffel's company designed the tower."}
            ],
        },
    },
    # no 'abstained' field: the abstention judge decides
    {"id": "q3", "output": {"answer": "I cannot find that in the notes.", "retrieved": []}},
    # the system's own flag: no judge call
    {"id": "q4", "output": {"answer": "It is brown.", "abstained": False, "retrieved": []}},
    {"id": "q5", "output": {"error": "HTTP 500 from the RAG server", "retrieved": []}},
]


@pytest.fixture
def default_outputs() -> list[dict[str, Any]]:
    """A copy of the outputs the workspace writes by default (to change one and write them again)."""
    return copy.deepcopy(OUTPUTS)


@dataclass
class Workspace:
    """Files of one evaluation in a temp folder (the working directory of the test)."""

    root: Path
    server: Any
    secret: str = SECRET
    cost_per_call: float = COST_PER_CALL

    @property
    def cache(self) -> Path:
        return self.root / "judge_cache.sqlite"

    def judge_block(self, **overrides: Any) -> dict[str, Any]:
        block: dict[str, Any] = {
            "base_url": self.server.base_url,
            "model": "test-judge",
            "model_revision": "sha256:test",
            "api_key_env": "RAGMETER_TEST_JUDGE_KEY",
            "seed": 7,
            "max_tokens": 64,
            "concurrency": 2,
            "timeout_s": 5.0,
            "max_retries": 1,
            "retry_base_delay_s": 0.01,
            "retry_max_delay_s": 0.05,
            "cache_path": str(self.cache),
            "prices": {"test-judge": PRICE},
        }
        block.update(overrides)
        return block

    def write_config(self, **overrides: Any) -> Path:
        path = self.root / "ragmeter.yaml"
        path.write_text(yaml.safe_dump({"judge": self.judge_block(**overrides)}), encoding="utf-8")
        return path

    def args(self, *extra: str, out: str | None = "results") -> list[str]:
        argv = [
            "eval",
            "--dataset",
            str(self.root / "samples.yaml"),
            "--outputs",
            str(self.root / "outputs.jsonl"),
        ]
        if out is not None:
            argv += ["--out", str(self.root / out)]
        return [*argv, *extra]

    def metrics(self, out: str = "results") -> dict[str, Any]:
        result: dict[str, Any] = json.loads((self.root / out / "metrics.json").read_text(encoding="utf-8"))
        return result

    def per_query(self, out: str = "results") -> dict[str, dict[str, Any]]:
        lines = (self.root / out / "per_query.jsonl").read_text(encoding="utf-8").splitlines()
        return {line["id"]: line for line in map(json.loads, lines)}


@pytest.fixture
def workspace(tmp_path: Path, judge_server: Any, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Workspace]:
    """Factory: ``workspace(samples=..., outputs=...)`` writes the files and enters the folder."""
    monkeypatch.setenv("RAGMETER_TEST_JUDGE_KEY", SECRET)
    monkeypatch.chdir(tmp_path)

    def make(
        samples: list[dict[str, Any]] | None = None, outputs: list[dict[str, Any]] | None = None
    ) -> Workspace:
        (tmp_path / "samples.yaml").write_text(
            yaml.safe_dump({"samples": samples if samples is not None else SAMPLES}), encoding="utf-8"
        )
        lines = [json.dumps(o) for o in (outputs if outputs is not None else OUTPUTS)]
        (tmp_path / "outputs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return Workspace(tmp_path, judge_server)

    return make
