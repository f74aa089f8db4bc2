"""Throughput of agentic evaluation: dedup keys, two-phase dedup + metrics, and the whole CLI path.

Generates seeded, realistic traces in memory: each trace is one conversation whose last
turn has a few search iterations; results come from a per-trace pool of pages drawn
from a large shared corpus, so about a third of them are duplicates (within and across
iterations), reached through URL variants (scheme, ``www.``, trailing slash, ``utm_*``,
fragments), query-biased snippets, DOIs and mirrored copies. Run by hand:

    python bench/bench_agentic.py --end-to-end          # 10,000 traces x 100 results, one core each
    python bench/bench_agentic.py --traces 1000 --end-to-end --repeat 5
    python bench/bench_agentic.py --stages              # the reference path's stages, in process

End to end, three programs run on the same JSONL file (written once into bench/data/), each in
its own process pinned to one core, round robin: Python's json.loads over every line (the
yardstick), evaluate_agentic on the fast path, and on the reference path. Their JSON must agree.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ragmeter.agentic.aggregate import aggregate_scores
from ragmeter.agentic.clusters import cluster_trace
from ragmeter.agentic.gains import resolve_gains
from ragmeter.agentic.prepare import prepare_trace
from ragmeter.agentic.scoring import score_trace
from ragmeter.agentic.trace import Trace
from ragmeter.dedup import DedupPolicy, KeyMaker, find_boilerplate

DATA = Path(__file__).resolve().parent / "data"

WORDS = tuple(
    [
        "python",
        "release",
        "error",
        "traceback",
        "faster",
        "interpreter",
        "module",
        "package",
        "install",
        "guide",
        "tutorial",
        "async",
        "runtime",
        "tokio",
        "rust",
        "memory",
        "safety",
        "borrow",
        "checker",
        "compiler",
        "version",
        "update",
        "security",
        "patch",
        "benchmark",
        "latency",
        "throughput",
        "index",
        "search",
        "ranking",
        "relevance",
        "model",
        "training",
        "dataset",
        "paper",
        "transformer",
        "attention",
        "language",
        "pretraining",
        "evaluation",
        "metric",
        "retrieval",
        "agent",
        "tool",
        "query",
    ]
)
HOSTS = [f"site{i}.example" for i in range(400)] + [
    "en.wikipedia.org",
    "github.com",
    "docs.python.org",
    "arxiv.org",
]
BANNER = (
    "We use cookies to improve your experience on our website. By continuing you accept our use of cookies."
)


def _sentence(rnd: random.Random, n: int) -> str:
    return " ".join(rnd.choice(WORDS) for _ in range(n))


def make_corpus(rnd: random.Random, size: int) -> list[dict[str, Any]]:
    pages = []
    for i in range(size):
        host = rnd.choice(HOSTS)
        page: dict[str, Any] = {
            "url": f"https://{host}/{rnd.choice(WORDS)}/{i}-{rnd.choice(WORDS)}",
            "title": _sentence(rnd, rnd.randint(3, 9)).title(),
            "snippets": [_sentence(rnd, rnd.randint(18, 32)) + "." for _ in range(3)],
            "gain": rnd.choice([0, 0, 1, 1, 2, 3, 4]),
        }
        if rnd.random() < 0.1:
            page["domain_id"] = f"doi:10.{1000 + i % 9000}/{i}"
        if rnd.random() < 0.02:
            page["snippets"] = [BANNER]
        pages.append(page)
    return pages


def _url_variant(rnd: random.Random, url: str) -> str:
    roll = rnd.random()
    if roll < 0.55:
        return url
    if roll < 0.65:
        return url.replace("https://", "http://", 1)
    if roll < 0.75:
        return url.replace("https://", "https://www.", 1)
    if roll < 0.85:
        return url + "/"
    if roll < 0.95:
        return url + f"?utm_source=agent&utm_campaign={rnd.randint(1, 9)}"
    return url + "#section-" + str(rnd.randint(1, 5))


def make_traces(n_traces: int, results_per_trace: int, seed: int) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    corpus = make_corpus(rnd, max(1000, n_traces * 20))
    traces = []
    for t in range(n_traces):
        pool = rnd.sample(corpus, max(10, int(results_per_trace * 0.8)))
        iterations: list[dict[str, Any]] = []
        left = results_per_trace
        while left > 0:
            searches = []
            for _ in range(rnd.randint(1, 3)):
                k = min(left, rnd.randint(4, 12))
                left -= k
                results = []
                for page in (rnd.choice(pool) for _ in range(k)):
                    url = _url_variant(rnd, page["url"])
                    if rnd.random() < 0.03:  # a mirror: another host, the same title and snippet
                        url = url.replace("://", "://mirror-", 1)
                    result: dict[str, Any] = {
                        "url": url,
                        "title": page["title"],
                        "snippet": rnd.choice(page["snippets"]),
                        "gain": page["gain"],
                    }
                    if "domain_id" in page:
                        result["domain_id"] = page["domain_id"]
                    results.append(result)
                searches.append({"query": _sentence(rnd, 4), "results": results})
                if left <= 0:
                    break
            iterations.append({"searches": searches})
            if rnd.random() < 0.2:
                iterations.append({"searches": []})  # a step without a search: dropped before numbering
        traces.append({"trace_id": f"t{t}", "task": _sentence(rnd, 8), "turns": [{"iterations": iterations}]})
    return traces


def _stages(args: argparse.Namespace) -> None:
    """The reference path's stages, in this process (CPU seconds)."""
    clock = time.process_time  # CPU time of this process: one core, whatever else the machine runs
    t0 = clock()
    raw = make_traces(args.traces, args.results_per_trace, args.seed)
    t1 = clock()
    traces = [Trace.model_validate(t) for t in raw]
    t2 = clock()
    policy = DedupPolicy()
    keys = KeyMaker(policy)
    prepared = [prepare_trace(t, where=f"bench:{i}", keys=keys) for i, t in enumerate(traces)]
    t3 = clock()
    boilerplate = find_boilerplate((k for p in prepared for k in p.keys), min_urls=policy.boilerplate_urls)
    scores = []
    for p in prepared:
        clusters = cluster_trace(p, policy=policy, boilerplate=boilerplate)
        scores.append(score_trace(p, clusters, resolve_gains(p, clusters)))
    agg = aggregate_scores(scores)
    t4 = clock()

    n = sum(len(p.results) for p in prepared)
    dup = agg.redundancy.duplicates

    def rate(seconds: float) -> str:
        return f"{seconds:7.2f} s CPU  {n / seconds:>10,.0f} results/s"

    print(
        f"{args.traces:,} traces, {n:,} results, {dup:,} duplicates ({dup / n:.1%}): {agg.redundancy.by_key}"
    )
    print(f"generate (not part of ragmeter)  {t1 - t0:7.2f} s CPU")
    print(f"validate (pydantic)              {rate(t2 - t1)}")
    print(f"prepare + dedup keys             {rate(t3 - t2)}")
    print(f"two-phase dedup + gains + score  {rate(t4 - t3)}")
    print(f"keys + dedup + metrics           {rate(t4 - t2)}")


_CHILD = """
import time
wall, cpu = time.perf_counter(), time.process_time()
import gc, json, sys
path, what, out = sys.argv[1:4]
if what == "json.loads":
    with open(path, "rb") as handle:
        for line in handle:
            json.loads(line)
else:
    gc.set_threshold(50_000)  # as the CLI does
    from ragmeter.agentic import evaluate_agentic
    result = evaluate_agentic(path, engine=what)
timing = [time.perf_counter() - wall, time.process_time() - cpu]
if what != "json.loads":  # the JSON, to compare the two paths (not timed)
    data = result.to_json_dict()
    data["provenance"].pop("created_at")
    with open(out, "w") as handle:
        json.dump(data, handle)
with open(out + ".time", "w") as handle:
    json.dump(timing, handle)
"""

TOOLS = ("json.loads", "auto", "reference")
"""The yardstick (Python's json.loads over every line), the fast path, the reference path."""


def _one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def _run(path: Path, tool: str, out: Path) -> tuple[float, float, float]:
    """Wall and CPU seconds (process start to result, output not included) and peak RSS (MB).

    One child process on one core.
    """
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(path), tool, str(out)], preexec_fn=_one_core)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{tool} failed")
    wall, cpu = json.loads(Path(str(out) + ".time").read_text())
    return wall, cpu, usage.ru_maxrss / 1024


def _end_to_end(args: argparse.Namespace) -> None:
    """Each tool in its own process on one core, round robin, on the same JSONL file."""
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"agentic-{args.traces}x{args.results_per_trace}-s{args.seed}.jsonl"
    if not path.exists():
        print(f"writing {path} ...", flush=True)
        with path.open("w", encoding="utf-8") as handle:
            for t in make_traces(args.traces, args.results_per_trace, args.seed):
                handle.write(json.dumps(t) + "\n")
    size = path.stat().st_size / 1e6
    print(
        f"{path} ({size:,.0f} MB), load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True
    )
    tools = [tool for tool in TOOLS if tool != "reference" or args.reference_repeat > 0]
    runs: dict[str, list[tuple[float, float, float]]] = {tool: [] for tool in tools}
    outputs = {tool: DATA / f"agentic-out-{tool}.json" for tool in tools}
    for round_ in range(args.repeat):
        for tool in tools:
            if tool == "reference" and round_ >= args.reference_repeat:
                continue
            wall, cpu, rss = _run(path, tool, outputs[tool])
            runs[tool].append((wall, cpu, rss))
            print(f"  {tool:10s} {wall:7.2f} s wall {cpu:7.2f} s CPU {rss:7.0f} MB", flush=True)
    same = "reference" not in runs or (
        json.loads(outputs["auto"].read_text()) == json.loads(outputs["reference"].read_text())
    )
    best = {tool: min(r[0] for r in rs) for tool, rs in runs.items()}
    best_cpu = {tool: min(r[1] for r in rs) for tool, rs in runs.items()}
    print()
    print(
        "| tool | runs | wall best / median (s) | CPU best / median (s) | peak RSS (MB) | wall ÷ json.loads | CPU ÷ json.loads |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for tool, rs in runs.items():
        walls, cpus = [r[0] for r in rs], [r[1] for r in rs]
        print(
            f"| {tool} | {len(rs)} | {min(walls):.2f} / {statistics.median(walls):.2f} "
            f"| {min(cpus):.2f} / {statistics.median(cpus):.2f} | {max(r[2] for r in rs):,.0f} "
            f"| {best[tool] / best['json.loads']:.1f} | {best_cpu[tool] / best_cpu['json.loads']:.1f} |"
        )
    fast_rss = max(r[2] for r in runs["auto"])
    print()
    if "reference" in runs:
        print(f"fast path and reference path give identical JSON: {'yes' if same else 'NO'}")
    print(
        f"goal (<= 6 s wall on one core, <= 800 MB, <= ~10x json.loads): wall {best['auto']:.2f} s, "
        f"CPU {best_cpu['auto']:.2f} s, {fast_rss:,.0f} MB, {best['auto'] / best['json.loads']:.1f}x wall, "
        f"{best_cpu['auto'] / best_cpu['json.loads']:.1f}x CPU"
        + (
            f"; the reference: {best['reference'] / best['auto']:.1f}x the fast path's wall"
            if "reference" in runs
            else ""
        )
    )
    if not same:
        raise SystemExit("the fast path and the reference path disagree")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--results-per-trace", type=int, default=100)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--end-to-end",
        action="store_true",
        help="time evaluate_agentic on a JSONL file (fast path, reference path, json.loads), one core each",
    )
    parser.add_argument("--stages", action="store_true", help="also time the reference path's stages")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the end-to-end runs")
    parser.add_argument(
        "--reference-repeat", type=int, default=1, help="rounds that include the reference (0: skip it)"
    )
    args = parser.parse_args()
    if args.stages or not args.end_to_end:
        _stages(args)
    if args.end_to_end:
        _end_to_end(args)


if __name__ == "__main__":
    main()
