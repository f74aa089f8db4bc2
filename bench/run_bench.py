"""Benchmark ``ragmeter eval`` against pytrec_eval and ranx on the same TREC files (issue 2).

    .venv/bin/python bench/run_bench.py                       # both sizes, every tool
    .venv/bin/python bench/run_bench.py --sizes 1000x100 --repeat 3

For each size (``QUERIESxDEPTH``) the seeded files are generated into
``bench/data/`` when missing (``gen_data.py``), then each tool runs in its own
subprocess, one after the other, and its wall time and peak RSS are measured
(``/usr/bin/time -v`` when present, else ``getrusage(RUSAGE_CHILDREN)`` in a
wrapper process). The tools:

- ``ragmeter``: the CLI, ``ragmeter eval --qrels Q --run R -m ... --json`` (stdout to a file);
  ``ragmeter (table)`` is the same without ``--json`` (the rich table).
- ``pytrec_eval``: the usual user code: read both files into dicts, ``RelevanceEvaluator.evaluate``.
- ``ranx``: ``Qrels.from_file`` / ``Run.from_file`` + ``evaluate``, with an empty numba cache
  (so the time includes JIT compilation); the warm time of a second ``evaluate`` is reported too.

Per-query values of ragmeter and pytrec_eval must agree within 1e-9 for every
query and metric (ranx's agreement is reported, not required: it breaks score
ties differently). Subprocesses run with bytecode caching on (into
``bench/data/pycache``), as an installed package would, after one warm-up run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = BENCH / "data"
sys.path.insert(0, str(BENCH))

from gen_data import dataset_paths, generate  # noqa: E402

METRICS = ("ndcg@10", "recall@100", "precision@10", "mrr", "map")
TOLERANCE = 1e-9
TIME = Path("/usr/bin/time")


@dataclass
class Measure:
    """One subprocess run: wall and CPU (user + system) seconds, peak RSS.

    For the peers, the time they spend writing their per-query values for the
    comparison (not part of a user's work) is taken off the wall time.
    """

    tool: str
    wall: float
    cpu: float
    rss_mb: float
    extra: dict[str, float] = field(default_factory=dict)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode cached, as for an installed package
    env["PYTHONPYCACHEPREFIX"] = str(DATA / "pycache")
    env.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    return env


def _measure(cmd: list[str], *, stdout: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """Run ``cmd``; return wall seconds, CPU seconds and peak RSS (MB, its largest process)."""
    with stdout.open("wb") as out, tempfile.NamedTemporaryFile("r", suffix=".time", dir=DATA) as report:
        if TIME.exists():
            started = time.perf_counter()
            proc = subprocess.run([str(TIME), "-v", "-o", report.name, *cmd], stdout=out, env=env)
            wall = time.perf_counter() - started
            text = Path(report.name).read_text()
            rss_kb = _field(text, r"Maximum resident set size \(kbytes\)")
            cpu = _field(text, r"User time \(seconds\)") + _field(text, r"System time \(seconds\)")
        else:
            wrapper = [sys.executable, str(Path(__file__).resolve()), "--wrap", report.name, "--", *cmd]
            proc = subprocess.run(wrapper, stdout=out, env=env)
            wall, cpu, rss_kb = json.loads(Path(report.name).read_text())
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed with exit code {proc.returncode}: {' '.join(cmd)}")
    return wall, cpu, rss_kb / 1024


def _field(text: str, name: str) -> float:
    match = re.search(name + r": ([0-9.]+)", text)
    return float(match.group(1)) if match else float("nan")


def _wrap(report: str, cmd: list[str]) -> None:
    """The wrapper used without /usr/bin/time: run cmd, write [wall, max RSS of children in KB]."""
    import resource

    started = time.perf_counter()
    code = subprocess.call(cmd)
    wall = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    rss = usage.ru_maxrss
    if sys.platform == "darwin":
        rss //= 1024  # bytes there, KB on Linux
    Path(report).write_text(json.dumps([wall, usage.ru_utime + usage.ru_stime, rss]))
    raise SystemExit(code)


def _commands(tool: str, qrels: Path, run: Path, out: Path) -> list[str]:
    venv_bin = Path(sys.executable).parent
    ragmeter = str(venv_bin / "ragmeter")
    metric_args = [arg for m in METRICS for arg in ("-m", m)]
    if tool == "ragmeter":
        return [ragmeter, "eval", "--qrels", str(qrels), "--run", str(run), *metric_args, "--json"]
    if tool == "ragmeter (table)":
        return [ragmeter, "eval", "--qrels", str(qrels), "--run", str(run), *metric_args]
    return [sys.executable, str(BENCH / "peers.py"), tool, str(qrels), str(run), str(out)]


def run_tool(tool: str, qrels: Path, run: Path, tag: str, env: dict[str, str]) -> tuple[Measure, Path]:
    """Run one tool once; return its measure and the file holding its per-query values."""
    stem = re.sub(r"\W+", "_", tool).strip("_")
    values = DATA / f"out-{tag}-{stem}.json"
    stdout = DATA / f"stdout-{tag}-{stem}.txt"
    tool_env = dict(env)
    numba_cache = None
    if tool == "ranx":  # a fresh numba cache: the time includes JIT compilation
        numba_cache = Path(tempfile.mkdtemp(prefix="numba-", dir=DATA))
        tool_env["NUMBA_CACHE_DIR"] = str(numba_cache)
    try:
        wall, cpu, rss = _measure(_commands(tool, qrels, run, values), stdout=stdout, env=tool_env)
    finally:
        if numba_cache is not None:
            shutil.rmtree(numba_cache, ignore_errors=True)
    extra: dict[str, float] = {}
    if tool in {"pytrec_eval", "ranx"}:
        extra = json.loads(stdout.read_text().strip().splitlines()[-1])
        wall -= extra.get("dump", 0.0)
        cpu -= extra.get("dump", 0.0)
    elif tool == "ragmeter":
        values = stdout
    return Measure(tool, wall, cpu, rss, extra), values


def _per_query(tool: str, path: Path) -> dict[str, dict[str, float]]:
    data = json.loads(path.read_text())
    if tool == "ragmeter":
        return {q: {m: float(v) for m, v in values.items()} for q, values in data["per_query"].items()}
    return {q: {m: float(v) for m, v in values.items()} for q, values in data.items()}


def compare(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> tuple[int, float, list[str]]:
    """(number of (query, metric) values compared, largest difference, a few disagreements)."""
    problems: list[str] = []
    if set(a) != set(b):
        problems.append(f"query sets differ: {len(set(a) ^ set(b))} queries in one only")
    n, worst = 0, 0.0
    for qid in sorted(set(a) & set(b)):
        for metric in METRICS:
            diff = abs(a[qid][metric] - b[qid][metric])
            worst = max(worst, diff)
            n += 1
            if diff > TOLERANCE and len(problems) < 5:
                problems.append(f"{qid} {metric}: {a[qid][metric]!r} vs {b[qid][metric]!r}")
    return n, worst, problems


def _n_bad(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> int:
    common = set(a) & set(b)
    return sum(1 for q in common if any(abs(a[q][m] - b[q][m]) > TOLERANCE for m in METRICS))


def bench_size(
    queries: int, depth: int, tools: list[str], repeat: int, env: dict[str, str], ranx_repeat: int = 1
) -> dict[str, Any]:
    """Generate if needed, run every tool ``repeat`` times in turn (fastest kept), check the numbers."""
    qrels, run = dataset_paths(DATA, queries, depth)
    if not (qrels.exists() and run.exists()):
        print(f"generating {queries} x {depth} ...", flush=True)
        generate(DATA, queries, depth)
    tag = f"q{queries}_d{depth}"
    lines = sum(1 for _ in run.open("rb"))
    best: dict[str, Measure] = {}
    peak: dict[str, float] = {}
    outputs: dict[str, Path] = {}
    rounds = {tool: ranx_repeat if tool == "ranx" else repeat for tool in tools}
    for round_ in range(max(rounds.values(), default=0)):  # round robin: same conditions for all
        for tool in tools:
            if round_ >= rounds[tool]:
                continue
            measure, values = run_tool(tool, qrels, run, tag, env)
            print(
                f"  {tag} {tool:18s} {measure.wall:8.2f} s wall {measure.cpu:8.2f} s CPU {measure.rss_mb:7.0f} MB",
                flush=True,
            )
            peak[tool] = max(peak.get(tool, 0.0), measure.rss_mb)
            if tool not in best or measure.wall < best[tool].wall:
                best[tool] = measure
            outputs[tool] = values
    for tool, measure in best.items():
        measure.rss_mb = peak[tool]  # memory: the largest seen over the rounds, not the fastest run's
    checks: dict[str, Any] = {}
    if "ragmeter" in outputs:
        mine = _per_query("ragmeter", outputs["ragmeter"])
        for peer in ("pytrec_eval", "ranx"):
            if peer in outputs:
                theirs = _per_query(peer, outputs[peer])
                n, worst, problems = compare(mine, theirs)
                checks[peer] = {
                    "values": n,
                    "max_abs_diff": worst,
                    "identical": not problems,
                    "queries_differing": _n_bad(mine, theirs),
                    "problems": problems,
                }
    return {
        "queries": queries,
        "depth": depth,
        "lines": lines,
        "run_bytes": run.stat().st_size,
        "measures": {t: vars(m) for t, m in best.items()},
        "checks": checks,
    }


def table(results: list[dict[str, Any]]) -> str:
    """The markdown table for bench/README.md."""
    rows = [
        "| run (queries × depth = lines) | tool | wall (s) | CPU (s) | peak RSS (MB) "
        "| wall ÷ pytrec_eval | RSS ÷ pytrec_eval | wall ÷ ranx |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for result in results:
        m = result["measures"]
        label = f"{result['queries']:,} × {result['depth']:,} = {result['lines']:,}"
        base = m.get("pytrec_eval")
        ranx = m.get("ranx")
        for tool, measure in m.items():
            wall, cpu, rss = measure["wall"], measure["cpu"], measure["rss_mb"]
            rel = f"{wall / base['wall']:.3f}" if base else "—"
            rel_rss = f"{rss / base['rss_mb']:.2f}" if base else "—"
            rel_ranx = f"{wall / ranx['wall']:.4f}" if ranx else "—"
            name = tool
            if tool == "ranx" and "evaluate_warm" in measure["extra"]:
                name += f" (cold JIT; warm evaluate {measure['extra']['evaluate_warm']:.2f} s)"
            rows.append(
                f"| {label} | {name} | {wall:.2f} | {cpu:.2f} | {rss:,.0f} | {rel} | {rel_rss} | {rel_ranx} |"
            )
    return "\n".join(rows)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--wrap":
        _wrap(sys.argv[2], sys.argv[4:])
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000x1000,1000x100", help="comma-separated QUERIESxDEPTH")
    parser.add_argument("--tools", default="ragmeter,ragmeter (table),pytrec_eval,ranx")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tool (the fastest is kept)")
    parser.add_argument("--ranx-repeat", type=int, default=1, help="runs of ranx (a cold JIT each time)")
    parser.add_argument("--no-warmup", action="store_true")
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    env = _env()
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    sizes = [tuple(int(x) for x in s.lower().split("x")) for s in args.sizes.split(",")]
    if not args.no_warmup:  # fills the bytecode cache; not measured
        q, d = min(sizes)
        print("warm-up ...", flush=True)
        bench_size(q, d, [t for t in tools if t != "ranx"], 1, env)
        if "ranx" in tools:  # imports only: its numba cache is made afresh for every measured run
            subprocess.run([sys.executable, "-c", "import ranx"], env=env, check=True)
    results = []
    for queries, depth in sizes:
        results.append(bench_size(queries, depth, tools, args.repeat, env, args.ranx_repeat))
    report = {
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "results": results,
    }
    (DATA / "results.json").write_text(json.dumps(report, indent=2))
    print()
    print(table(results))
    print()
    failed = False
    for result in results:
        for peer, check in result["checks"].items():
            verdict = "identical" if check["identical"] else f"DIFFER on {check['queries_differing']} queries"
            print(
                f"{result['queries']} x {result['depth']}: ragmeter vs {peer}: {verdict} "
                f"({check['values']:,} values, max |diff| {check['max_abs_diff']:.3g})"
            )
            for problem in check["problems"]:
                print(f"    {problem}")
            failed |= peer == "pytrec_eval" and not check["identical"]
        m = result["measures"]
        if "ragmeter" in m and "pytrec_eval" in m:
            wall = m["ragmeter"]["wall"] / m["pytrec_eval"]["wall"]
            cpu = m["ragmeter"]["cpu"] / m["pytrec_eval"]["cpu"]
            rss = m["ragmeter"]["rss_mb"] / m["pytrec_eval"]["rss_mb"]
            goal = 0.15 if result["lines"] >= 1_000_000 else 1.5  # issue 20: start-up must not dominate
            ok = wall <= goal and (result["lines"] < 1_000_000 or rss <= 1.0)
            print(
                f"    target (wall <= {goal}x pytrec_eval{', RSS <= 1x' if result['lines'] >= 1_000_000 else ''}): "
                f"{'met' if ok else 'NOT met'} (wall {wall:.3f}x, CPU {cpu:.3f}x, RSS {rss:.2f}x)"
            )
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end of the run")
    if failed:
        raise SystemExit("ragmeter and pytrec_eval disagree")


if __name__ == "__main__":
    main()
