"""Benchmark: ``ragmeter mine`` on the local executor (threads) vs Ray (worker processes).

A synthetic registry (questions whose answer sits in one planted document among
distractors) is mined with a scripted python solver that burns a fixed amount of CPU per
call (a stand-in for an expensive solver or sandboxed validator), once with the local
executor and once with Ray, both allowed the same number of calls in flight. Both runs must
give the same verdicts, which the script checks. It reports:

- the machine: how much faster two CPU-bound processes get through twice the work than one
  (``effective cores``: 2.0 on two free cores; less when the cores are shared or busy);
- fixed costs: starting Ray, and starting a mining pool (worker processes that import
  ragmeter and the solver);
- the overhead per task: a no-op call through a pool of 2 Ray actors, one at a time and
  pipelined, against the same call through the local executor's threads;
- mining end to end, with the CPU-burning solver and with one that does no work
  (the difference per trial is what Ray costs a trial in a real run, pool start included).

    python bench/bench_ray.py                       # 16 questions, 20 ms of CPU per call, 2 workers
    python bench/bench_ray.py --questions 32 --work-ms 50 --concurrency 4 --json

Ray is started privately for the run (bound to 127.0.0.1). Its workers get the same
scheduling priority as this process (``RAY_worker_niceness=0``; Ray's default, 15, makes
them yield to any other load on the machine, which would skew the comparison).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

_LOOPS_PER_MS = int(os.environ.get("BENCH_RAY_LOOPS_PER_MS", "0"))


def solver(request: dict[str, Any], *, work_ms: float = 0.0, loops_per_ms: int = 0) -> str:
    """Pass (``4417``) with probability 0.9 when ``zz.planted`` is shown, else 0.1; burn CPU first."""
    acc = 0
    for i in range(int(work_ms * loops_per_ms)):
        acc = (acc * 1_000_003 + i) % 2_147_483_647
    shown = {doc["id"] for doc in request["documents"]}
    rng = random.Random(request["trial"]["seed"])
    return "4417" if rng.random() < (0.9 if "zz.planted" in shown else 0.1) else "I do not know"


def calibrate() -> int:
    """Loop iterations of :func:`solver` per millisecond of CPU on this machine."""
    n = 200_000
    started = time.process_time()
    acc = 0
    for i in range(n):
        acc = (acc * 1_000_003 + i) % 2_147_483_647
    return max(1, int(n / ((time.process_time() - started) * 1000)))


def write_registry(folder: Path, *, questions: int, work_ms: float, loops: int, concurrency: int) -> Path:
    docs = [{"id": "zz.planted", "text": "zz.planted()\n\nThe secret launch code is 4417."}]
    docs += [
        {"id": f"aa.filler{i}", "text": f"aa.filler{i}()\n\nReturns filler number {i}."} for i in range(40)
    ]
    (folder / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    registry = {
        "seed": 2026,
        "corpora": {"docs": {"file": "docs.jsonl"}},
        "solver": {
            "kind": "python",
            "function": "bench_ray:solver",
            "python_path": [str(HERE)],
            "kwargs": {"work_ms": work_ms, "loops_per_ms": loops},
            "concurrency": concurrency,
        },
        "benchmarks": [
            {
                "name": "synthetic",
                "corpus": "docs",
                "validator": {"kind": "answer"},
                "candidates": {"distractors": 10},
                "questions": [
                    {
                        "id": f"q{i}",
                        "question": f"Secret code {i}?",
                        "answer": "4417",
                        "seeds": ["zz.planted"],
                    }
                    for i in range(questions)
                ],
            }
        ],
    }
    import yaml

    path = folder / "registry.yaml"
    path.write_text(yaml.safe_dump(registry, sort_keys=False), encoding="utf-8")
    return path


def run(registry: Path, out: Path, executor: Any) -> tuple[float, Any]:
    from ragmeter.mining.session import mine

    started = time.perf_counter()
    outcome = mine(registry, out, fresh=True, executor=executor)
    return time.perf_counter() - started, outcome


def verdicts(outcome: Any) -> list[Any]:
    return [
        (m.question.pair_id, m.status, [d.verdict for d in m.conclusion.docs] if m.conclusion else None)
        for m in outcome.mined
    ]


def _burn(loops: int) -> float:
    started = time.perf_counter()
    acc = 0
    for i in range(loops):
        acc = (acc * 1_000_003 + i) % 2_147_483_647
    return time.perf_counter() - started


def effective_cores(loops_per_ms: int, *, ms: float = 1000.0) -> float:
    """Twice the work in two processes vs the work in one: 2.0 means two free cores."""
    loops = int(ms * loops_per_ms)
    one = _burn(loops)
    context = multiprocessing.get_context("spawn")
    with context.Pool(2) as pool:
        pool.map(_burn, [1000, 1000])  # start the processes first
        started = time.perf_counter()
        pool.map(_burn, [loops, loops])
        two = time.perf_counter() - started
    return round(2 * one / two, 2)


def _noop(state: Any, x: int) -> int:
    return x


def call_overhead(executor: Any, *, calls: int = 400) -> dict[str, float]:
    """Milliseconds per no-op call through a 2-worker pool: one at a time, and pipelined."""
    pool = executor.pool({}, name="bench", size=2, per_worker=1)
    ready = getattr(pool, "ready", None)
    if callable(ready):
        ready()
    for i in range(20):  # warm up
        pool.submit(_noop, i).result()
    started = time.perf_counter()
    for i in range(calls):
        pool.submit(_noop, i).result()
    sequential = time.perf_counter() - started
    started = time.perf_counter()
    for future in [pool.submit(_noop, i) for i in range(calls)]:
        future.result()
    pipelined = time.perf_counter() - started
    pool.close()
    return {
        "round_trip_ms": round(1000 * sequential / calls, 3),
        "pipelined_ms": round(1000 * pipelined / calls, 3),
    }


def pool_start_s(executor: Any, registry: Path) -> float:
    """Seconds to start the mining pool (actors that unpickle the solver and validators)."""
    import yaml

    from ragmeter.mining.solvers import load_python_solver
    from ragmeter.mining.trials import TrialWorker
    from ragmeter.mining.validators import AnswerValidator

    spec = yaml.safe_load(registry.read_text(encoding="utf-8"))["solver"]
    solver = load_python_solver(
        spec["function"],
        python_path=spec["python_path"],
        kwargs=spec["kwargs"],
        concurrency=spec["concurrency"],
        name=None,
        where="solver",
    )
    started = time.perf_counter()
    pool = executor.pool(
        TrialWorker(solver, {"synthetic": AnswerValidator()}), name="bench", size=2, per_worker=1
    )
    pool.ready()
    elapsed = time.perf_counter() - started
    pool.close()
    return round(elapsed, 2)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, default=16)
    parser.add_argument("--work-ms", type=float, default=20.0, help="CPU milliseconds per solver call")
    parser.add_argument("--concurrency", type=int, default=2, help="calls in flight (threads / Ray slots)")
    parser.add_argument("--workers", type=int, default=2, help="Ray workers (CPUs)")
    parser.add_argument("--json", action="store_true", help="also print the figures as one JSON object")
    args = parser.parse_args()

    os.environ.setdefault("RAY_worker_niceness", "0")
    from ragmeter.executors.local import LocalExecutor
    from ragmeter.executors.ray_executor import RayExecutor

    loops = _LOOPS_PER_MS or calibrate()
    cores = effective_cores(loops)
    tmp = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    rows: list[dict[str, Any]] = []
    ray = RayExecutor(num_cpus=args.workers)
    t = time.perf_counter()
    ray.start()
    startup = time.perf_counter() - t
    try:
        overhead = {"local": call_overhead(LocalExecutor()), "ray": call_overhead(ray)}
        for work in (args.work_ms, 0.0):
            registry = write_registry(
                tmp, questions=args.questions, work_ms=work, loops=loops, concurrency=args.concurrency
            )
            local_s, local = run(registry, tmp / "local" / "d.yaml", LocalExecutor())
            ray_s, remote = run(registry, tmp / "ray" / "d.yaml", ray)
            if verdicts(local) != verdicts(remote):
                sys.exit("the Ray run gave another dataset than the local run")
            trials = sum(m.calls for m in local.mined)
            rows.append(
                {
                    "work_ms": work,
                    "questions": args.questions,
                    "trials": trials,
                    "local_s": round(local_s, 2),
                    "ray_s": round(ray_s, 2),
                    "speedup": round(local_s / ray_s, 2),
                    "local_ms_per_trial": round(1000 * local_s / trials, 2),
                    "ray_ms_per_trial": round(1000 * ray_s / trials, 2),
                }
            )
        pool_start = pool_start_s(ray, registry)
    finally:
        ray.close()
        shutil.rmtree(tmp, ignore_errors=True)
    cpu, idle = rows
    per_trial = round(idle["ray_ms_per_trial"] - idle["local_ms_per_trial"], 2)
    print(
        f"machine: {os.cpu_count()} CPUs ({cores} effective cores for 2 CPU-bound processes), "
        f"python {sys.version.split()[0]}"
    )
    print(f"fixed costs: Ray start-up {startup:.1f} s; mining pool start (2 workers) {pool_start:.2f} s")
    print(f"solver: {loops} loops/ms; {args.concurrency} calls in flight; Ray with {args.workers} workers")
    print(
        "no-op call through a 2-worker pool, ms: "
        f"local thread {overhead['local']['round_trip_ms']} one at a time / "
        f"{overhead['local']['pipelined_ms']} pipelined; "
        f"Ray actor {overhead['ray']['round_trip_ms']} / {overhead['ray']['pipelined_ms']}"
    )
    header = list(rows[0])
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(str(row[h]) for h in header))
    print(
        f"speed-up with {args.work_ms:g} ms of CPU per call: {cpu['speedup']}x; "
        f"Ray's overhead per mining trial (no work, pool start included): {per_trial:.2f} ms"
    )
    if args.json:
        print(
            json.dumps(
                {
                    "cpus": os.cpu_count(),
                    "effective_cores": cores,
                    "ray_startup_s": round(startup, 2),
                    "pool_start_s": pool_start,
                    "call_overhead_ms": overhead,
                    "mining": rows,
                    "speedup": cpu["speedup"],
                    "overhead_ms_per_trial": per_trial,
                }
            )
        )


if __name__ == "__main__":
    main()
