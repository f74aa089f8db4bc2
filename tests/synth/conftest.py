"""Fixtures of the synth tests: a vault with planted facts and a scripted OpenAI-compatible server.

The server answers both sides from the prompt with the offline stand-in of the example
(examples/synth/offline_llm.py): a generation request (header ``X-Ragmeter-Prompt``) gets the
JSON the prompt asks for, a solver trial (header ``X-Ragmeter-Trial``) the value that fills the
blank of the question, found in the documents shown (so it answers correctly only when a
planted fact is present), with a 10% slip decided by the trial header.

One more scripted behaviour, for "an extra necessary chunk is added": asked for a factual
question about the Delta door note, the generator writes one that also needs the Sirius
vault code, which is in another note.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def _load(name: str, path: Path) -> Any:
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


sys.modules.setdefault("synth_fixtures", sys.modules[__name__])  # tests import the helpers from here
chat = _load("synth_chat_server", HERE.parent / "judges" / "chat_server.py")
offline = _load("synth_offline_llm", ROOT / "examples" / "synth" / "offline_llm.py")

NOTES = {
    "projects/orion.md": "# Orion\n\n## Lead\n\nProject Orion is led by Ines Duarte, who holds badge 7731.\n",
    "finance/orion-budget.md": "# Orion budget\n\n## Amount\n\nThe Orion budget for the year is 5200 EUR.\n",
    "projects/vega.md": "# Vega\n\n## Room\n\nThe Vega crew gathers in the blue room on the third floor.\n",
    "projects/vega-schedule.md": "# Vega schedule\n\n## Standup\n\nThe Vega standup starts at 09:15 every weekday.\n",
    "security/alpha.md": "# Alpha\n\n## Locker\n\nThe Alpha locker code is 4417 for every visitor.\n",
    "security/gamma.md": "# Gamma\n\n## Copied\n\nThe Alpha locker code is 4417 for every visitor.\n",
    "security/delta.md": "# Delta\n\n## Door\n\nThe Delta door code starts with 31 and ends with the vault code.\n",
    "security/sirius.md": "# Sirius\n\n## Vault\n\nThe Sirius vault code is 8850 since the audit.\n",
    "learning/bootstrap.md": (
        "# Bootstrap\n\n## Practice\n\n"
        "The course recommends at least 2,000 resamples for a 95% confidence interval.\n"
    ),
    "oncall/policy-2022.md": (
        "# Paging policy\n\nLast updated: 2022-03-14.\n\n## Escalation\n\n"
        "Page the secondary engineer after 30 minutes without an acknowledgement.\n"
    ),
    "oncall/policy-2024.md": (
        "# Paging policy\n\nLast updated: 2024-05-02.\n\n## Escalation\n\n"
        "Page the secondary engineer after 15 minutes without any acknowledgement.\n"
    ),
}
"""The planted vault: every value sentence is a planted fact (the Alpha locker code twice)."""

DELTA_LINE = "The Delta door code starts with ___ and ends with the vault code."
SIRIUS_LINE = "The Sirius vault code is ___ since the audit."


def write_vault(folder: Path, notes: dict[str, str] | None = None) -> Path:
    """Write the planted vault into ``folder``."""
    for rel_path, text in (notes or NOTES).items():
        path = folder / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def planted_truth(question: str, answer: str) -> list[set[str]]:
    """For each blank of a question, the planted notes whose line reads so with the answer's value."""
    return list(offline.planted_truth(question, answer, NOTES))


def scripted_reply(messages: list[dict[str, str]], headers: dict[str, str]) -> str:
    """The offline stand-in's reply, plus the Delta question that needs the Sirius note."""
    text = offline.reply(messages, headers)
    prompt = {k.lower(): v for k, v in headers.items()}.get("x-ragmeter-prompt", "")
    if prompt.startswith("synth_factual") and "The Delta door code" in messages[-1]["content"]:
        question = f'Which two numbers open the Delta door? My notes say: "{DELTA_LINE}" and "{SIRIUS_LINE}"'
        return json.dumps({"question": question, "answer": "31; 8850", "snippet": "starts with 31"})
    return text


class ScriptedLLM(chat.ChatServer):  # type: ignore[misc,name-defined]
    """The chat server answering every request with :func:`scripted_reply`.

    ``fail`` (a predicate on the request number, from 0) makes chosen requests fail with HTTP 500.
    """

    def __init__(self, fail: Callable[[int], bool] | None = None) -> None:
        super().__init__(lambda body: chat.ok("{}"), models=("synth-model",))
        self.fail = fail or (lambda index: False)
        self.answered: list[dict[str, Any]] = []

    def _next_reply(self, body: dict[str, Any]) -> Any:
        with self._lock:
            number = next(i for i, r in enumerate(self.requests) if r["json"] is body)
            headers = self.requests[number]["headers"]
        if self.fail(number):
            return chat.server_error()
        reply = scripted_reply(body["messages"], headers)
        with self._lock:
            self.answered.append({"headers": headers, "messages": body["messages"], "reply": reply})
        return chat.ok(reply, prompt_tokens=100, completion_tokens=10)


@pytest.fixture
def scripted_llm() -> Iterator[Callable[..., Any]]:
    """``scripted_llm(fail=None) -> ScriptedLLM`` (started; stopped after the test)."""
    servers: list[Any] = []

    def make(fail: Callable[[int], bool] | None = None) -> Any:
        server = ScriptedLLM(fail).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


def write_config(folder: Path, server_url: str, **changes: Any) -> Path:
    """A synth.yaml using the scripted server for both the generator and the solver."""
    data: dict[str, Any] = {
        "seed": 5,
        "n": 28,
        "categories": ["factual", "multi_hop", "recency", "unanswerable", "paraphrase", "adversarial"],
        "mix": {
            "factual": 11,
            "multi_hop": 8,
            "recency": 1,
            "unanswerable": 4,
            "paraphrase": 2,
            "adversarial": 2,
        },
        "generator": {
            "base_url": server_url,
            "model": "synth-model",
            "cache_path": str(folder / "judge_cache.sqlite"),
            "max_retries": 0,
            "prices": {"synth-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
        },
        "solver": {
            "kind": "llm",
            "base_url": server_url,
            "model": "synth-model",
            "temperature": 0.7,
            "max_retries": 0,
            "concurrency": 4,
            "prices": {"synth-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
        },
        "filters": {"bertscore": False},
    }
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    path = folder / "synth.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
