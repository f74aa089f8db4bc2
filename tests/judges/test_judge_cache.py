"""The SQLite judge cache: second runs make zero calls, errors are never cached, keys are stable."""

from __future__ import annotations

import json

import judge_chat_server as cs
import pytest

from ragmeter.cli import main
from ragmeter.judges import run_judges
from ragmeter.judges.cache import JudgeCache, cache_key

GOOD = {"reasoning": "ok", "score": 4}
ITEMS = [
    {"id": f"q{i}", "question": f"question {i}?", "answer": f"answer {i}", "contexts": [f"context {i}"]}
    for i in range(3)
]


def test_second_identical_run_makes_zero_calls(chat_server, judge_config) -> None:
    server = chat_server(lambda body: cs.ok(GOOD))
    cfg = judge_config(server, concurrency=2)
    first = run_judges(ITEMS, config=cfg, judges=["correctness"])
    assert len(server.chat_requests) == 3
    assert (first.usage.calls, first.usage.cache_hits) == (3, 0)
    assert first.estimate is not None and first.estimate.planned_calls == 3
    requests_before = len(server.requests)
    second = run_judges(ITEMS, config=cfg, judges=["correctness"])
    assert len(server.requests) == requests_before  # no chat call, no /models call, not even a connection
    assert (second.usage.calls, second.usage.cache_hits, second.usage.prompt_tokens) == (0, 3, 0)
    assert second.usage.cost_usd == 0.0
    assert second.estimate is not None
    assert (second.estimate.planned_calls, second.estimate.cached_calls) == (0, 3)
    assert [o.value for o in second.outcomes] == [o.value for o in first.outcomes]
    for a, b in zip(first.outcomes, second.outcomes, strict=True):
        assert b.calls[0].cache_hit
        assert b.calls[0].cache_key == a.calls[0].cache_key
        assert b.calls[0].raw_replies == a.calls[0].raw_replies
        assert b.calls[0].request == a.calls[0].request
    assert second.provenance["judge"]["server_model"] == "not queried (no call was made in this run)"
    cache = JudgeCache(cfg["cache_path"])
    try:
        stats = cache.stats()
    finally:
        cache.close()
    assert (stats["entries"], stats["hits"]) == (3, 3)
    assert stats["by_judge"] == [
        {
            "judge": "correctness",
            "prompt_version": "v1",
            "model": "test-judge",
            "endpoint": server.base_url,
            "entries": 3,
            "hits": 3,
        }
    ]


def test_errors_are_not_cached(chat_server, judge_config) -> None:
    server = chat_server([cs.server_error(), cs.ok(GOOD)])
    cfg = judge_config(server, max_retries=0)
    first = run_judges(ITEMS[:1], config=cfg, judges=["correctness"])
    assert first.outcomes[0].unscored_code == "call_failed"
    second = run_judges(ITEMS[:1], config=cfg, judges=["correctness"])
    assert second.outcomes[0].value == 4.0
    assert second.usage.cache_hits == 0
    third = run_judges(ITEMS[:1], config=cfg, judges=["correctness"])
    assert third.usage.cache_hits == 1
    assert len(server.chat_requests) == 2


@pytest.mark.parametrize(
    "change",
    [
        {"seed": 8},
        {"max_tokens": 300},
        {"model": "other-judge"},
        {"prompt_versions": {"correctness": "v1-alt"}},
    ],
)
def test_key_depends_on_decoding_model_and_prompt(chat_server, judge_config, change: dict) -> None:
    server = chat_server(lambda body: cs.ok(GOOD))
    run_judges(ITEMS[:1], config=judge_config(server), judges=["correctness"])
    again = run_judges(ITEMS[:1], config=judge_config(server, **change), judges=["correctness"])
    assert again.usage.cache_hits == 0
    assert len(server.chat_requests) == 2


def test_key_does_not_depend_on_concurrency_or_retries(chat_server, judge_config) -> None:
    server = chat_server(lambda body: cs.ok(GOOD))
    run_judges(ITEMS[:1], config=judge_config(server), judges=["correctness"])
    again = run_judges(
        ITEMS[:1],
        config=judge_config(server, concurrency=5, max_retries=0, timeout_s=9),
        judges=["correctness"],
    )
    assert again.usage.cache_hits == 1


def test_cache_can_be_switched_off(chat_server, judge_config) -> None:
    server = chat_server(lambda body: cs.ok(GOOD))
    cfg = judge_config(server, cache=False)
    run_judges(ITEMS[:1], config=cfg, judges=["correctness"])
    run_judges(ITEMS[:1], config=cfg, judges=["correctness"])
    assert len(server.chat_requests) == 2
    assert not (tmp := __import__("pathlib").Path(cfg["cache_path"])).exists(), tmp


def test_cache_key_is_stable() -> None:
    args = {
        "endpoint": "http://127.0.0.1:8000/v1",
        "model": "m",
        "decoding": {"temperature": 0.0, "seed": 1, "max_tokens": 10},
        "prompt": {"id": "g", "version": "v1", "sha256": "abc"},
        "messages": [{"role": "user", "content": "é"}],
    }
    # pinned: a change of this value means every user's cache is invalidated
    assert cache_key(**args) == cache_key(**{**args, "decoding": dict(reversed(args["decoding"].items()))})
    assert cache_key(**args) != cache_key(**{**args, "messages": [{"role": "user", "content": "e"}]})
    assert cache_key(**args) != cache_key(**{**args, "endpoint": "http://127.0.0.1:8001/v1"})


def test_cache_cli_stats_and_clear(chat_server, judge_config, tmp_path, capsys) -> None:
    server = chat_server(lambda body: cs.ok(GOOD))
    cfg = judge_config(server)
    run_judges(ITEMS, config=cfg, judges=["correctness"])
    path = cfg["cache_path"]
    with pytest.raises(SystemExit) as done:
        main(["cache", "stats", "--path", path, "--json"])
    assert done.value.code == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["entries"] == 3
    with pytest.raises(SystemExit):
        main(["cache", "stats", "--path", path])
    out = capsys.readouterr().out
    assert "3 entries" in out and "correctness" in out
    with pytest.raises(SystemExit):
        main(["cache", "clear", "--path", path, "--judge", "groundedness"])
    assert capsys.readouterr().out.startswith("removed 0 cached judgements")
    with pytest.raises(SystemExit) as done:
        main(["cache", "clear", "--path", path, "--judge", "groundednes"])
    assert done.value.code == 2
    assert capsys.readouterr().err == (
        f"Error: {path}: --judge: unknown judge 'groundednes'; the cache holds: correctness\n"
    )
    with pytest.raises(SystemExit) as done:
        main(["cache", "stats", "--path", str(tmp_path)])
    assert (done.value.code, capsys.readouterr().err) == (
        2,
        f"Error: {tmp_path}: is a folder; give the judge cache file (a .sqlite file)\n",
    )
    with pytest.raises(SystemExit) as done:
        main(["cache", "clear", "--path", path])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"removed 3 cached judgements from {path}\n"
    again = run_judges(ITEMS, config=cfg, judges=["correctness"])
    assert again.usage.cache_hits == 0


def test_cache_cli_reads_the_config(chat_server, judge_config, tmp_path, capsys, monkeypatch) -> None:
    cache_file = tmp_path / "sub" / "c.sqlite"
    (tmp_path / "ragmeter.yaml").write_text(f"judge:\n  cache_path: {cache_file}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):
        main(["cache", "stats"])
    assert capsys.readouterr().out == f"no judge cache at {cache_file}\n"
    assert not cache_file.exists()


def test_corrupt_cache_is_a_config_error(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(SystemExit) as done:
        main(["cache", "stats", "--path", str(bad)])
    assert done.value.code == 2
    assert (
        capsys.readouterr().err
        == f"Error: {bad}: not a SQLite database, so not a ragmeter judge cache; give another path\n"
    )
