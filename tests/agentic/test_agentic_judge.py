"""`ragmeter agentic --judge-config`: results without a gain are labelled by the relevance judge,
once per unique result (never for a duplicate), against the user's task."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.cli import main

_PATH = Path(__file__).parents[1] / "judges" / "chat_server.py"
_spec = importlib.util.spec_from_file_location("agentic_chat_server", _PATH)
assert _spec is not None and _spec.loader is not None
chat_server = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = chat_server
_spec.loader.exec_module(chat_server)

TASK = "How do I pin a judge model for reproducible scores?"
TRACE = {
    "trace_id": "t-1",
    "task": TASK,
    "turns": [
        {
            "user": TASK,
            "iterations": [
                {
                    "searches": [
                        {
                            "query": "pin judge model",
                            "results": [
                                {
                                    "url": "https://example.org/pinning",
                                    "title": "Pinning",
                                    "snippet": "Pin the model.",
                                },
                                {
                                    "url": "https://example.org/cats",
                                    "title": "Cats",
                                    "snippet": "Cats sleep a lot.",
                                },
                            ],
                        }
                    ]
                },
                {
                    "searches": [
                        {
                            "query": "judge temperature zero",
                            "results": [
                                {
                                    "url": "http://www.example.org/pinning/",
                                    "title": "Pinning",
                                    "snippet": "Other text.",
                                },
                                {"url": "https://example.org/garbled", "title": "Garbled", "snippet": "???"},
                            ],
                        }
                    ]
                },
            ],
        }
    ],
}


def reply_for(request: dict[str, Any]) -> Any:
    prompt = json.dumps(request["messages"])
    if "Garbled" in prompt:
        return chat_server.ok("I cannot decide, sorry.")
    gain = 4 if "Pinning" in prompt else 0
    return chat_server.ok({"intent": "pin a judge", "reasoning": "r", "gain": gain})


def test_judge_labels_unique_results_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_text(json.dumps(TRACE) + "\n", encoding="utf-8")
    with chat_server.serve(reply_for) as server:
        judge = {
            "judge": {
                "base_url": server.base_url,
                "model": "test-judge",
                "timeout_s": 2.0,
                "max_retries": 0,
                "retry_base_delay_s": 0.01,
                "cache_path": str(tmp_path / "cache.sqlite"),
            }
        }
        config = tmp_path / "judge.yaml"
        config.write_text(yaml.safe_dump(judge), encoding="utf-8")
        with pytest.raises(SystemExit) as exc:
            main(["agentic", "--traces", str(traces), "--judge-config", str(config), "--json"])
        assert exc.value.code == 0
        prompts = [json.dumps(r["json"]["messages"]) for r in server.chat_requests]
    result = json.loads(capsys.readouterr().out)
    # three unique results (the www./trailing-slash copy is a duplicate); the garbled one is asked twice
    # (first reply, then one repair attempt) and ends unscored
    assert sum("Pinning" in p for p in prompts) == 1
    assert sum("Cats" in p for p in prompts) == 1
    assert all(TASK in p for p in prompts)
    assert all(r["json"]["temperature"] == 0 for r in server.chat_requests)
    text = json.dumps(result)
    assert "unscored" in text
    assert result["provenance"]["labeller"] == "judge:test-judge/relevance"
    series = result["traces"][0]["series"]
    assert series["CG"] == [4.0, None]  # Pinning labelled 4 (good), Cats 0; Garbled unscored -> null, not 0
    assert series["Dup"] == [0, 1]  # the www./trailing-slash copy is a duplicate, never sent to the judge
    assert result["aggregate"]["counts"]["unscored_results"] == 1
