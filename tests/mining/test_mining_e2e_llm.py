"""End to end with the LLM solver against a scripted chat-completions server on 127.0.0.1.

The server passes (answers the secret code) when the planted document is in the prompt, and
otherwise only for 10% of prompts. Mining must call the planted document relevant (YES) and
no other; the dataset must load as a ragmeter evaluation dataset and score with `ragmeter eval`.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import mining_chat_server as chat  # type: ignore[import-not-found]  # registered by conftest
import pytest
import yaml

from ragmeter.cli import main
from ragmeter.io.datasets import load_dataset
from ragmeter.mining.session import DesignOptions, mine


def _script(body: dict[str, Any]) -> Any:
    prompt = body["messages"][1]["content"]
    if "zz.planted" in prompt:
        return chat.ok("4417", prompt_tokens=200, completion_tokens=3)
    noise = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) % 10  # deterministic 10% base rate
    return chat.ok(
        "4417" if noise == 0 else "I cannot tell from these documents.",
        prompt_tokens=200,
        completion_tokens=8,
    )


@pytest.fixture
def llm_registry(tmp_path: Path, registry_writer: Any, corpus_writer: Any) -> tuple[Path, Any]:
    server = chat.ChatServer(_script, models=("solver-model",)).start()
    corpus_writer(tmp_path, n=8)
    registry = registry_writer(
        tmp_path,
        {
            "seed": 11,
            "corpora": {"docs": {"file": "docs.jsonl"}},
            "solver": {
                "kind": "llm",
                "base_url": server.base_url,
                "model": "solver-model",
                "temperature": 0.7,
                "concurrency": 4,
                "max_retries": 0,
                "prices": {"solver-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
            },
            "benchmarks": [
                {
                    "name": "secret",
                    "corpus": "docs",
                    "validator": {"kind": "answer", "match": "normalised"},
                    "candidates": {"distractors": 7},
                    "questions": [
                        {"id": "code", "question": "What is the secret launch code?", "answer": "4417"}
                    ],
                }
            ],
        },
    )
    yield registry, server
    server.stop()


def test_llm_mining_finds_the_planted_document(llm_registry: tuple[Path, Any], tmp_path: Path) -> None:
    registry, server = llm_registry
    out = tmp_path / "out" / "retrieval_dataset.yaml"
    outcome = mine(registry, out)
    [mined] = outcome.mined
    assert mined.status == "IDENTIFIED"
    conclusion = mined.conclusion
    assert conclusion is not None
    verdicts = dict(zip(mined.question.pool.ids, (d.verdict for d in conclusion.docs), strict=True))
    assert verdicts.pop("zz.planted") == "YES"
    assert "YES" not in verdicts.values()

    requests = server.chat_requests
    assert len(requests) == mined.calls == conclusion.trials
    assert {r["json"]["temperature"] for r in requests} == {0.7}
    trial_ids = [r["headers"]["x-ragmeter-trial"] for r in requests]
    assert len(set(trial_ids)) == len(trial_ids)  # every trial is its own call: no cache, no repeats
    orders = {
        tuple(re.findall(r"^\[\d+\] (\S+)$", r["json"]["messages"][1]["content"], re.M)) for r in requests
    }
    assert len(orders) > len(requests) // 2  # subsets and order differ from trial to trial
    assert any(o and list(o) != sorted(o) for o in orders)  # shuffled, not pool order

    data = yaml.safe_load(out.read_text())
    [pair] = data["pairs"]
    assert data["samples"] == data["pairs"]
    assert pair["expected_output"] == ["zz.planted"]
    verification = pair["verification"]
    assert verification["solver"]["model"] == "solver-model" and verification["solver"]["temperature"] == 0.7
    log_path = out.parent / verification["trial_log"]["path"]
    trials = [json.loads(line) for line in log_path.read_text().splitlines()[1:]]
    calls = [t["call"] for t in trials if t["type"] == "trial"]
    expected_cost = sum(c["prompt_tokens"] * 1e-6 + c["completion_tokens"] * 2e-6 for c in calls)
    assert verification["cost_usd"] == pytest.approx(expected_cost, rel=1e-6)
    assert data["ragmeter_mining"]["totals"]["cost_usd"] == pytest.approx(expected_cost, rel=1e-6)
    assert verification["structure"]["kind"] == "SINGLE" and verification["structure"]["docs"] == [
        "zz.planted"
    ]
    assert verification["structure"]["posterior"] >= 0.9
    planted = next(c for c in pair["candidates"] if c["fqn"] == "zz.planted")
    for key in (
        "trials_in",
        "trials_out",
        "passes_in",
        "passes_out",
        "delta_p",
        "delta_p_ci95",
        "p_value",
        "p_value_holm",
        "posterior_relevant",
    ):
        assert planted[key] is not None, key
    assert planted["trials_in"] + planted["trials_out"] == verification["trials"]
    low, high = planted["delta_p_ci95"]
    assert low < planted["delta_p"] < high
    assert hashlib.sha256(log_path.read_bytes()).hexdigest() == verification["trial_log"]["sha256"]
    assert data["ragmeter_mining"]["operating_characteristics"].startswith("bayes-structure v1")

    samples = load_dataset(out)
    assert [(s.id, s.expected_output, s.question()) for s in samples] == [
        ("secret:code", ["zz.planted"], "What is the secret launch code?")
    ]
    outputs = tmp_path / "search.jsonl"
    outputs.write_text(
        json.dumps(
            {"id": "secret:code", "output": {"retrieved": [{"id": "aa.filler1"}, {"id": "zz.planted"}]}}
        )
        + "\n"
    )
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--dataset", str(out), "--outputs", str(outputs), "--json", "-m", "mrr", "-m", "hit@1"])
    assert exit_info.value.code == 0


def test_llm_fixed_design_and_recompute(llm_registry: tuple[Path, Any], tmp_path: Path) -> None:
    registry, server = llm_registry
    out = tmp_path / "fixed.yaml"
    outcome = mine(registry, out, design_options=DesignOptions(name="fixed", trials=10))
    [mined] = outcome.mined
    assert mined.calls == 10 and len(server.chat_requests) == 10
    first = yaml.safe_load(out.read_text())
    assert first["ragmeter_mining"]["design"]["name"] == "fixed"
    again = mine(registry, out, recompute=True)
    assert len(server.chat_requests) == 10  # no solver call
    second = yaml.safe_load(out.read_text())
    assert again.mined[0].status == mined.status
    assert second["pairs"][0]["candidates"] == first["pairs"][0]["candidates"]
    assert second["pairs"][0]["verification"]["trial_log"] == first["pairs"][0]["verification"]["trial_log"]


def test_llm_server_errors_make_the_question_incomplete(
    tmp_path: Path, registry_writer: Any, corpus_writer: Any
) -> None:
    server = chat.ChatServer(lambda body: chat.server_error(503)).start()
    try:
        corpus_writer(tmp_path, n=3)
        registry = registry_writer(
            tmp_path,
            {
                "corpora": {"docs": {"file": "docs.jsonl"}},
                "solver": {
                    "kind": "llm",
                    "base_url": server.base_url,
                    "model": "m",
                    "max_retries": 0,
                    "concurrency": 1,
                },
                "benchmarks": [
                    {
                        "name": "b",
                        "corpus": "docs",
                        "validator": {"kind": "answer"},
                        "candidates": {"distractors": 2},
                        "questions": [{"id": "q", "question": "secret?", "answer": "4417"}],
                    }
                ],
            },
        )
        outcome = mine(registry, tmp_path / "o.yaml")
        [mined] = outcome.mined
        assert mined.status == "INCOMPLETE" and "HTTP 503" in (mined.error or "")
        pair = yaml.safe_load((tmp_path / "o.yaml").read_text())["pairs"][0]
        assert pair["expected_output"] == [] and pair["verification"]["status"] == "INCOMPLETE"
    finally:
        server.stop()


def test_budget_stop_is_clean_and_resumable(
    llm_registry: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry, server = llm_registry
    data = yaml.safe_load(registry.read_text())
    data["solver"]["max_cost_usd"] = 0.004  # reserves ~0.0023 USD per call, spends ~0.0002
    data["solver"]["concurrency"] = 1
    registry.write_text(yaml.safe_dump(data))
    out = tmp_path / "budget.yaml"
    with pytest.raises(SystemExit) as exit_info:
        main(["mine", str(registry), "--out", str(out), "-q"])
    assert exit_info.value.code == 2
    assert "max_cost_usd 0.004 reached" in capsys.readouterr().err
    pair = yaml.safe_load(out.read_text())["pairs"][0]
    assert pair["verification"]["status"] == "INCOMPLETE"
    spent = len(server.chat_requests)
    assert 0 < spent < 20
    data["solver"]["max_cost_usd"] = 5.0
    registry.write_text(yaml.safe_dump(data))
    with pytest.raises(SystemExit) as exit_info:
        main(["mine", str(registry), "--out", str(out), "--resume", "-q"])
    assert exit_info.value.code == 0
    pair = yaml.safe_load(out.read_text())["pairs"][0]
    assert pair["verification"]["status"] == "IDENTIFIED" and pair["expected_output"] == ["zz.planted"]
    assert pair["verification"]["calls"] == len(server.chat_requests)  # nothing asked twice
