"""On a real (local, loopback-only) Ray instance: the same results as a local run — harness, mining,
judges, partitioned TREC — also when a worker process dies mid-task; and limits that hold across
the cluster. One Ray instance serves the whole module (see conftest.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.api import evaluate_trec
from ragmeter.cli import main
from ragmeter.harness.suite_run import run_suite
from ragmeter.mining.session import mine
from ragmeter.partitioned_trec import evaluate_trec_partitioned

pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray")]  # one Ray instance under --dist loadgroup

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-c", "from ragmeter.cli import main; main()"]
ORACLE = Path(__file__).resolve().parents[2].parent / "shared" / "oracle" / "trec_eval"
if not ORACLE.is_dir():  # a clone elsewhere (CI): the shared folder of this workplace
    ORACLE = Path("/work/shared/oracle/trec_eval")


def _text(path: Path, root: Path) -> str:
    return path.read_text(encoding="utf-8").replace(str(root), "<root>")


def _json(path: Path, root: Path, norm: Any, drop: frozenset[str] = frozenset()) -> Any:
    return norm.without_timings(json.loads(_text(path, root)), drop)


def _jsonl(path: Path, root: Path, norm: Any, drop: frozenset[str] = frozenset()) -> list[Any]:
    return [norm.without_timings(json.loads(line), drop) for line in _text(path, root).splitlines() if line]


# -- limits -------------------------------------------------------------------------------------------


def _hold_briefly(args: tuple[Any, float]) -> float:
    limiter, seconds = args
    with limiter.hold():
        time.sleep(seconds)
    return time.monotonic()


def _die_holding(args: tuple[Any, str]) -> str:
    limiter, marker = args
    with limiter.hold():
        if not Path(marker).exists():
            Path(marker).write_text("died", encoding="utf-8")
            os._exit(1)  # dies holding the slot: only its lease's expiry frees it
    return "retried"


def _settled_stats(executor: Any, key: str) -> dict[str, int]:
    """The limiter's stats once the releases in flight have landed (they are sent without waiting)."""
    deadline = time.monotonic() + 5
    stats: dict[str, int] = executor.limiter_stats(key)
    while stats["held"] and time.monotonic() < deadline:
        time.sleep(0.05)
        stats = executor.limiter_stats(key)
    return stats


def test_executors_ray_limit_holds_across_workers_and_outlives_a_dead_holder(
    ray_executor: Any, tmp_path: Path
) -> None:
    limiter = ray_executor.limiter("test:one-at-a-time", 1)
    started = time.monotonic()
    list(ray_executor.map_unordered(_hold_briefly, [(limiter, 0.3)] * 4))
    assert time.monotonic() - started >= 1.2
    assert _settled_stats(ray_executor, "test:one-at-a-time") == {"held": 0, "peak": 1}

    short = ray_executor.limiter("test:dead-holder", 1, lease_s=2.0)
    results = dict(ray_executor.map_unordered(_die_holding, [(short, str(tmp_path / "marker"))]))
    assert results == {0: "retried"}, "the task was retried on a new worker and got the slot back"
    assert _settled_stats(ray_executor, "test:dead-holder")["held"] == 0


# -- harness ------------------------------------------------------------------------------------------


@pytest.fixture
def harness_suite(write_suite: Any) -> Any:
    """``harness_suite(folder, marker, **fields)``: 10 samples; q-2 kills its worker once (``marker``)."""

    def write(folder: Path, marker: Path, **fields: Any) -> Path:
        defaults = {"metrics": ["hit@2", "mrr", "ndcg@3"], "k": 3, "concurrency": 3, "timeout_seconds": 60}
        return write_suite(
            folder,
            n=10,
            system_kwargs={"die_on": "q-2", "die_marker": str(marker), "delay": 0.05},
            **{**defaults, **fields},
        )

    return write


def _same_run_folders(a: Path, b: Path, norm: Any) -> None:
    outputs = [
        sorted(_jsonl(root / "out" / "outputs.jsonl", root, norm), key=lambda r: r["id"]) for root in (a, b)
    ]
    assert outputs[0] == outputs[1]
    _same_scores(a, b, norm)
    configs = [_json(root / "out" / "config.json", root, norm, frozenset({"sessions"})) for root in (a, b)]
    assert configs[0] == configs[1]


def test_executors_ray_harness_run_matches_local_even_when_a_worker_dies(
    ray_executor: Any, tmp_path: Path, norm: Any, harness_suite: Any
) -> None:
    marker = tmp_path / "died-once"
    marker.write_text("not this time", encoding="utf-8")  # the local run must not kill pytest
    local = run_suite(harness_suite(tmp_path / "a", marker))
    marker.unlink()
    remote = run_suite(harness_suite(tmp_path / "b", marker), executor=ray_executor)

    assert marker.read_text(encoding="utf-8") != str(os.getpid()), "a Ray worker died, not this process"
    assert (remote.summary.n_ok, remote.summary.n_errors, remote.summary.n_empty) == (9, 1, 1)
    assert (local.summary.n_ok, local.summary.n_errors, local.summary.n_empty) == (9, 1, 1)
    _same_run_folders(tmp_path / "a", tmp_path / "b", norm)
    config = json.loads((tmp_path / "b" / "out" / "config.json").read_text(encoding="utf-8"))
    assert config["sessions"][-1]["executor"]["kind"] == "ray"
    outputs = norm.jsonl(tmp_path / "b" / "out" / "outputs.jsonl")
    assert {o["id"]: o["output"].get("error") for o in outputs}["q-4"] == "ValueError: cannot answer q-4"


def test_executors_ray_cli_run(
    ray_cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], harness_suite: Any
) -> None:
    marker = tmp_path / "never"
    marker.write_text("x", encoding="utf-8")
    suite = harness_suite(tmp_path, marker, concurrency=2)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(suite), "--executor", "ray", "--no-report", "--no-record", "--json"])
    assert exit_info.value.code == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["aggregate"]["hit@2"] == 0.9
    assert "ran on Ray" in captured.err
    assert ray_cluster.is_initialized(), "a Ray this process joined before is left running"


# -- mining -------------------------------------------------------------------------------------------


def _registry(folder: Path, marker: Path, **kwargs: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = ['{"id": "zz.planted", "text": "zz.planted()\\n\\nThe secret launch code is 4417."}'] + [
        f'{{"id": "aa.filler{i}", "text": "aa.filler{i}()\\n\\nReturns filler number {i}."}}'
        for i in range(9)
    ]
    (folder / "docs.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    registry = {
        "seed": 7,
        "corpora": {"docs": {"file": "docs.jsonl"}},
        "solver": {
            "kind": "python",
            "function": "executors_test_systems:planted",
            "python_path": [str(HERE)],
            "kwargs": {"die_marker": str(marker), **kwargs},
            "concurrency": 2,
        },
        "benchmarks": [
            {
                "name": "b",
                "corpus": "docs",
                "validator": {"kind": "answer"},
                "candidates": {"distractors": 6},
                "questions": [
                    {
                        "id": f"q{i}",
                        "question": f"Secret code {i}?",
                        "answer": "4417",
                        "seeds": ["zz.planted"],
                    }
                    for i in range(4)
                ],
            }
        ],
    }
    path = folder / "registry.yaml"
    path.write_text(yaml.safe_dump(registry, sort_keys=False), encoding="utf-8")
    return path


def _same_datasets(a: Path, b: Path, norm: Any) -> None:
    """The mined ``d.yaml`` in ``a`` and in ``b`` are the same (hashes and timings aside)."""
    datasets = [
        norm.without_timings(yaml.safe_load(_text(root / "d.yaml", root)), frozenset({"sha256"}))
        for root in (a, b)
    ]
    assert datasets[0] == datasets[1]


def _trial_logs(folder: Path, norm: Any) -> dict[str, Any]:
    out = {}
    for log in sorted(folder.glob("*.jsonl")):
        records = norm.jsonl(log)
        header, rest = records[0], records[1:]
        trials = sorted((r for r in rest if r["type"] == "trial"), key=lambda r: (r["kind"], r["index"]))
        out[log.name] = {"header": header, "trials": trials, "end": [r for r in rest if r["type"] == "end"]}
    return out


def test_executors_ray_mining_matches_local_even_when_a_worker_dies(
    ray_executor: Any, tmp_path: Path, norm: Any
) -> None:
    marker = tmp_path / "died-once"
    marker.write_text("not this time", encoding="utf-8")
    local = mine(_registry(tmp_path / "a", marker), tmp_path / "a" / "d.yaml")
    marker.unlink()
    remote = mine(_registry(tmp_path / "b", marker), tmp_path / "b" / "d.yaml", executor=ray_executor)
    assert marker.exists(), "a worker died mid-trial"
    assert [m.status for m in remote.mined] == [m.status for m in local.mined]
    assert not remote.incomplete

    _same_datasets(tmp_path / "a", tmp_path / "b", norm)
    logs_a = _trial_logs(tmp_path / "a" / "d.trials", norm)
    logs_b = _trial_logs(tmp_path / "b" / "d.trials", norm)
    assert logs_a == logs_b
    assert sum(len(log["trials"]) for log in logs_a.values()) > 40


def _gcs_address(ray: Any) -> str:
    address: str = ray._private.worker.global_worker.node.address_info["gcs_address"]
    return address


def _kill_when(driver: subprocess.Popen[bytes], ready: Any, poll_s: float) -> None:
    """SIGKILL ``driver`` once ``ready()`` is true (within 60 s); it must still be running then."""
    try:
        deadline = time.monotonic() + 60
        while not ready() and time.monotonic() < deadline:
            if driver.poll() is not None:
                break
            time.sleep(poll_s)
        assert driver.poll() is None, "the driver ended before it could be killed"
        driver.send_signal(signal.SIGKILL)
    finally:
        driver.wait(timeout=30)


def _logged_trials(folder: Path) -> int:
    if not folder.is_dir():
        return 0
    return sum(log.read_bytes().count(b'"type": "trial"') for log in folder.glob("*.jsonl"))


def test_executors_ray_mining_driver_killed_then_resumed_matches_local(
    ray_executor: Any, ray_cluster: Any, tmp_path: Path, norm: Any
) -> None:
    """A second driver joins the cluster (--ray-address), is SIGKILLed mid-run; --resume finishes it."""
    marker = tmp_path / "never"
    marker.write_text("x", encoding="utf-8")
    local = mine(_registry(tmp_path / "a", marker, delay=0.02), tmp_path / "a" / "d.yaml")
    total = sum(len(log["trials"]) for log in _trial_logs(local.trials_dir, norm).values())

    registry = _registry(tmp_path / "b", marker, delay=0.02)
    out = tmp_path / "b" / "d.yaml"
    address = _gcs_address(ray_cluster)
    driver = subprocess.Popen(
        [*CLI, "mine", str(registry), "--out", str(out), "-q", "--executor", "ray", "--ray-address", address],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
    )
    _kill_when(driver, lambda: _logged_trials(out.with_name("d.trials")) >= total // 3, poll_s=0.02)
    killed_at = _logged_trials(out.with_name("d.trials"))
    assert 0 < killed_at < total

    # a new driver; the dead one's solver slots come back when their leases expire (docs/scale.md)
    resumed = mine(registry, out, resume=True, executor=ray_executor)
    assert not resumed.incomplete
    assert [m.status for m in resumed.mined] == [m.status for m in local.mined]
    assert _trial_logs(out.with_name("d.trials"), norm) == _trial_logs(local.trials_dir, norm)
    _same_datasets(tmp_path / "a", tmp_path / "b", norm)


# -- judges -------------------------------------------------------------------------------------------


def _judge_reply(body: dict[str, Any]) -> Any:
    name = str(((body.get("response_format") or {}).get("json_schema") or {}).get("name", ""))
    prompt = body["messages"][-1]["content"]
    seven = "answer 7" in prompt
    replies = {
        "groundedness_reply": {
            "supported_claims": ["c"],
            "unsupported_claims": ["u"] if seven else [],
            "makes_claims": True,
            "score": 2 if seven else 4,
        },
        "correctness_reply": {"reasoning": "fine", "score": 1 if seven else 5},
        "abstention_reply": {"reasoning": "answers", "abstained": False},
        "factual_match_reply": {"reasoning": "same", "match": not seven},
        "factual_verify_reply": {"key_facts": ["f"], "reasoning": "checked", "match": not seven},
    }
    return replies.get(name, {})


def _chat_module() -> Any:
    """tests/judges/chat_server.py, loaded by path (pytest runs with --import-mode=importlib)."""
    import importlib.util

    if "executors_chat_server" in sys.modules:
        return sys.modules["executors_chat_server"]
    spec = importlib.util.spec_from_file_location(
        "executors_chat_server", HERE.parent / "judges" / "chat_server.py"
    )
    assert spec is not None and spec.loader is not None
    chat = importlib.util.module_from_spec(spec)
    sys.modules["executors_chat_server"] = chat
    spec.loader.exec_module(chat)
    return chat


def _judged_suite(harness_suite: Any, root: Path, marker: Path, base_url: str) -> Path:
    judge = {
        "base_url": base_url,
        "model": "test-judge",
        "seed": 1,
        "concurrency": 2,
        "max_retries": 0,
        "timeout_s": 10,
        "cache_path": str(root / "judge-cache.sqlite"),
    }
    metrics = ["hit@2", "groundedness", "correctness", "factual_match", "fuzzy_match"]
    suite = harness_suite(root, marker, judge=judge, metrics=metrics)
    data = yaml.safe_load((root / "tests.yaml").read_text(encoding="utf-8"))
    for sample in data["samples"]:
        sample["metadata"] = {"expected_answer": f"answer {sample['id'].split('-')[1]}"}
    (root / "tests.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return suite


def _same_scores(a: Path, b: Path, norm: Any) -> None:
    no_hash = frozenset({"sha256"})  # of outputs.jsonl, which has latencies in it
    assert _json(a / "out" / "metrics.json", a, norm, no_hash) == _json(
        b / "out" / "metrics.json", b, norm, no_hash
    )
    assert _jsonl(a / "out" / "per_query.jsonl", a, norm) == _jsonl(b / "out" / "per_query.jsonl", b, norm)


def test_executors_ray_judged_run_matches_local(
    ray_executor: Any, tmp_path: Path, norm: Any, monkeypatch: pytest.MonkeyPatch, harness_suite: Any
) -> None:
    from ragmeter.judges import remote_chat

    remote_calls: list[int] = []
    original = remote_chat.RemoteChat.complete

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        remote_calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(remote_chat.RemoteChat, "complete", counted)
    server = _chat_module().ChatServer(_judge_reply).start()
    try:
        marker = tmp_path / "never"
        marker.write_text("x", encoding="utf-8")
        roots = (tmp_path / "a", tmp_path / "b")
        for root, executor in zip(roots, (None, ray_executor), strict=True):
            suite = _judged_suite(harness_suite, root, marker, server.base_url)
            before = len(remote_calls)
            outcome = run_suite(suite, executor=executor)
            assert "groundedness" in outcome.result.aggregate
            sent_from_workers = len(remote_calls) - before
            assert (sent_from_workers > 0) == (executor is not None)
        n_requests = len(server.chat_requests)
    finally:
        server.stop()
    assert n_requests > 20
    assert len(remote_calls) == n_requests // 2, "the Ray run sent half of the calls, all from workers"
    _same_scores(*roots, norm)


def test_executors_ray_driver_killed_while_judging_resumes_from_the_judge_cache(
    ray_executor: Any, ray_cluster: Any, tmp_path: Path, norm: Any, harness_suite: Any
) -> None:
    """A driver on the cluster is SIGKILLed mid-judging; the resumed run asks no question again and
    repeats no judge call that had come back (at most the calls in flight at the kill)."""
    chat = _chat_module()
    server = chat.ChatServer(lambda body: chat.ok(_judge_reply(body), delay=0.05)).start()
    marker = tmp_path / "never"
    marker.write_text("x", encoding="utf-8")
    try:
        run_suite(_judged_suite(harness_suite, tmp_path / "a", marker, server.base_url))
        needed = len(server.chat_requests)
        suite = _judged_suite(harness_suite, tmp_path / "b", marker, server.base_url)
        on_ray = ["--executor", "ray", "--ray-address", _gcs_address(ray_cluster)]
        driver = subprocess.Popen(
            [*CLI, "run", str(suite), "-q", "--no-report", "--no-record", *on_ray],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=tmp_path,
        )
        _kill_when(driver, lambda: len(server.chat_requests) >= needed + needed // 3, poll_s=0.01)
        time.sleep(0.2)  # let the killed driver's last requests reach the server
        before_kill = len(server.chat_requests) - needed
        outputs = norm.jsonl(tmp_path / "b" / "out" / "outputs.jsonl")
        assert len([o for o in outputs if o.get("id")]) == 10, "every answer was recorded before judging"

        outcome = run_suite(suite, resume=True, executor=ray_executor)
        after = len(server.chat_requests) - needed - before_kill
    finally:
        server.stop()
    assert outcome.summary.n_called == 0, "no question was asked again"
    assert 0 < before_kill < needed
    assert after < needed, "the judge cache answered what the killed run had judged"
    assert before_kill + after <= needed + 2, "at most the 2 calls in flight at the kill were sent again"
    a, b = tmp_path / "a", tmp_path / "b"
    assert _jsonl(a / "out" / "per_query.jsonl", a, norm) == _jsonl(b / "out" / "per_query.jsonl", b, norm)
    # the same scores; the judge's usage, estimate and resume counts say what this run did
    unlike = frozenset({"sha256", "judge", "warnings"})
    assert _json(a / "out" / "metrics.json", a, norm, unlike) == _json(
        b / "out" / "metrics.json", b, norm, unlike
    )
    judge = json.loads((b / "out" / "metrics.json").read_text(encoding="utf-8"))["provenance"]["judge"]
    assert judge["resumed"] + judge["estimate"]["cached_calls"] > 0, judge


# -- TREC ---------------------------------------------------------------------------------------------


def test_executors_ray_partitioned_trec_is_bit_for_bit_local(ray_executor: Any, tmp_path: Path) -> None:
    qrels, run = ORACLE / "qrels.test", ORACLE / "results.test"
    if not qrels.is_file():
        pytest.skip(f"no trec_eval oracle data at {ORACLE}")
    for options in ({}, {"complete": True, "metrics": ["ndcg@10", "map", "P@5", "recall@100"]}):
        local = evaluate_trec(qrels, run, **options).to_json_dict()
        remote = evaluate_trec_partitioned(qrels, run, executor=ray_executor, partitions=3, **options)
        got = remote.to_json_dict()
        assert got["provenance"].pop("executor")["partitions"] >= 2, "3 topics spread over 2 or 3 workers"
        for data in (local, got):
            data["provenance"].pop("elapsed_seconds")
            data["provenance"].pop("created_at")
        assert got == local
        assert remote.per_query == evaluate_trec(qrels, run, **options).per_query


def _tie_heavy_pair(folder: Path, seed: int) -> tuple[Path, Path]:
    """Random qrels and run with many score ties, topics only on one side, graded judgments."""
    import random

    rng = random.Random(seed)
    qrels_lines, run_lines = [], []
    for t in range(1, 80):
        topic = f"t{t}" if t % 7 else f"topic-with-a-long-name-{t}"
        if t % 11:  # some topics are only in the run
            for d in rng.sample(range(30), rng.randint(1, 8)):
                qrels_lines.append(f"{topic} 0 d{d} {rng.choice([0, 1, 1, 2, 3])}")
        if t % 13 == 0:  # some only in the qrels
            continue
        for rank, d in enumerate(rng.sample(range(30), rng.randint(1, 25))):
            run_lines.append(f"{topic} Q0 d{d} {rank + 1} {rng.choice([0.5, 1.0, 1.0, 2.0])} tag")
    rng.shuffle(run_lines)  # topics interleaved; the loader ranks them
    qrels, run = folder / f"ties-{seed}.qrels", folder / f"ties-{seed}.run"
    qrels.write_text("\n".join(qrels_lines) + "\n", encoding="utf-8")
    run.write_text("\n".join(run_lines) + "\n", encoding="utf-8")
    return qrels, run


def _eval_json(args: list[str], cli: Any) -> tuple[dict[str, Any], str]:
    code, out, err = cli(["eval", *args, "--json"])
    assert code == 0, err
    return json.loads(out), err


@pytest.mark.parametrize(
    "options", [[], ["-c", "-m", "ndcg@10", "-m", "map", "-m", "P@5", "-m", "recall@100", "--trec-compat"]]
)
def test_executors_ray_cli_eval_prints_the_local_json(
    ray_cluster: Any, tmp_path: Path, options: list[str], cli: Any
) -> None:
    pairs = [_tie_heavy_pair(tmp_path, seed) for seed in (1, 2)]
    if (ORACLE / "qrels.test").is_file():
        pairs.append((ORACLE / "qrels.test", ORACLE / "results.test"))
    for qrels, run in pairs:
        args = ["--qrels", str(qrels), "--run", str(run), *options]
        local, local_err = _eval_json(args, cli)
        remote, remote_err = _eval_json([*args, "--executor", "ray"], cli)
        assert "ran on Ray" in remote_err and "ran on Ray" not in local_err
        executor = remote["provenance"].pop("executor")
        assert executor["kind"] == "ray" and "in_one_piece" not in executor, executor
        # 2 CPUs, 2 partitions (the oracle's 3 topics happen to hash into one)
        assert executor["partitions"] == (2 if qrels.parent == tmp_path else 1), executor
        for data in (local, remote):
            data["provenance"].pop("elapsed_seconds")
            data["provenance"].pop("created_at")
        # the same JSON text, key order included
        assert json.dumps(remote, indent=2) == json.dumps(local, indent=2)
    assert ray_cluster.is_initialized(), "a Ray this process joined before is left running"
