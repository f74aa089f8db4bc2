"""``ragmeter agentic --judge-config`` over several traces: one ``GET /models`` for the whole run, one
line when the judge cannot be reached, and progress lines off a terminal."""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
from pathlib import Path
from typing import Any

import yaml

_PATH = Path(__file__).parents[1] / "judges" / "chat_server.py"
_spec = importlib.util.spec_from_file_location("agentic_run_chat_server", _PATH)
assert _spec is not None and _spec.loader is not None
chat_server = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = chat_server
_spec.loader.exec_module(chat_server)


def _trace(index: int) -> dict[str, Any]:
    task = f"Question number {index}?"
    results = [
        {"url": f"https://example.org/{index}/{r}", "title": f"R{r}", "snippet": "Text."} for r in range(2)
    ]
    return {
        "trace_id": f"t-{index}",
        "task": task,
        "turns": [{"user": task, "iterations": [{"searches": [{"query": "q", "results": results}]}]}],
    }


def _files(tmp_path: Path, base_url: str) -> tuple[Path, Path]:
    traces = tmp_path / "traces.jsonl"
    traces.write_text("".join(json.dumps(_trace(i)) + "\n" for i in range(3)), encoding="utf-8")
    config = tmp_path / "judge.yaml"
    judge = {"base_url": base_url, "model": "test-judge", "timeout_s": 2.0, "max_retries": 0, "cache": False}
    config.write_text(yaml.safe_dump({"judge": judge}), encoding="utf-8")
    return traces, config


def _gain(request: dict[str, Any]) -> Any:
    return chat_server.ok({"intent": "i", "reasoning": "r", "gain": 3})


def test_models_is_asked_once_for_every_trace(tmp_path: Path, cli: Any) -> None:
    with chat_server.serve(_gain) as server:
        traces, config = _files(tmp_path, server.base_url)
        code, out, err = cli(["agentic", "--traces", str(traces), "--judge-config", str(config), "--json"])
        models = [r for r in server.requests if r["method"] == "GET"]
        chats = server.chat_requests
    assert code == 0, err
    assert len(chats) == 6 and len(models) == 1
    assert json.loads(out)["aggregate"]["averages_at_n"]["CG"] == 6.0
    lines = [line for line in err.splitlines() if line.startswith("labelling traces: ")]
    assert (
        lines and lines[-1].startswith("labelling traces: 3/3 traces (100%)") and lines[-1].endswith("(done)")
    )


def test_an_unreachable_judge_is_one_line(tmp_path: Path, cli: Any) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    traces, config = _files(tmp_path, f"http://127.0.0.1:{port}/v1")
    code, out, err = cli(["agentic", "--traces", str(traces), "--judge-config", str(config)])
    assert (code, out) == (2, "")
    assert err.startswith(
        f"Error: judge.base_url: cannot reach the judge endpoint http://127.0.0.1:{port}/v1 ("
    )
    assert err.count("\n") == 1
