"""Benchmark ``ragmeter trec_eval`` against pytrec_eval computing the same measures (issue 16).

    .venv/bin/python bench/bench_trec_eval.py                         # both sizes, both measure sets
    .venv/bin/python bench/bench_trec_eval.py --sizes 1000x100 --sets official --repeat 1

The files are ``run_bench.py``'s seeded ones (``bench/data/``, generated when missing). For
each measure set, ``ragmeter trec_eval -q -m SET QRELS RUN`` (stdout to a file) and the usual
pytrec_eval user code (read both files into dicts, ``RelevanceEvaluator(qrels, SET)``,
``evaluate``, then print each value as trec_eval prints it) run in their own processes, one
after the other, best of ``--repeat`` for wall time; peak RSS is the largest seen.

The per-topic lines must agree: every value pytrec_eval computes, printed ``%.4f``, must equal
ragmeter's line, except ``iprec_at_recall`` and ``11pt_avg`` (pytrec_eval's 9.x trec_eval
turns recall levels into ranks differently from 10.0) and the values pytrec_eval does not
give per topic (gm_map, gm_bpref, relstring, runid, num_q) or at all (rbp, rbp_resid, unj).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from gen_data import dataset_paths, generate  # noqa: E402
from peers import read_trec_dicts  # noqa: E402
from run_bench import DATA, _env, _measure  # noqa: E402

SETS = {
    "official": "num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P",
    "all_trec": (
        "num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P recall infAP "
        "gm_bpref utility 11pt_avg ndcg relative_P Rprec_mult success map_cut ndcg_cut ndcg_rel Rndcg binG G "
        "set_P set_recall set_relative_P set_map set_F num_nonrel_judged_ret"
    ),
}
NOT_COMPARED = (
    "iprec_at_recall",
    "11pt_avg",
    "gm_map",
    "gm_bpref",
    "relstring",
    "runid",
    "num_q",
    "rbp",
    "unj",
)


def pytrec_side(measure_set: str, qrels_path: str, run_path: str) -> None:
    """What a pytrec_eval user writes, printing trec_eval-style per-topic lines."""
    started = time.perf_counter()
    import pytrec_eval

    qrels, run = read_trec_dicts(qrels_path, run_path)
    parsed = time.perf_counter()
    results = pytrec_eval.RelevanceEvaluator(qrels, set(SETS[measure_set].split())).evaluate(run)
    done = time.perf_counter()
    out = sys.stdout
    for qid in sorted(results):
        for name, value in results[qid].items():
            out.write(f"{name:<22}\t{qid}\t{value:6.4f}\n")
    sys.stderr.write(json.dumps({"parse": parsed - started, "evaluate": done - parsed}) + "\n")


def _lines(path: Path) -> dict[tuple[str, str], str]:
    out = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split("\t")
        out[(name.strip(), qid)] = value
    return out


def compare(mine: Path, theirs: Path) -> tuple[int, list[str]]:
    """How many of pytrec_eval's per-topic values were compared, and the first disagreements."""
    ours = _lines(mine)
    n, problems = 0, []
    for (name, qid), value in _lines(theirs).items():
        if name.startswith(NOT_COMPARED):
            continue
        n += 1
        # pytrec_eval prints counts as floats; trec_eval as whole numbers
        got = ours.get((name, qid))
        if (got is None or (got != value and f"{float(got):6.4f}" != value)) and len(problems) < 5:
            problems.append(f"{name} {qid}: ragmeter {got} vs pytrec_eval {value}")
    return n, problems


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--pytrec":
        pytrec_side(*sys.argv[2:5])
        return
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000x1000,1000x100")
    parser.add_argument("--sets", default="official,all_trec")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    env = _env()
    ragmeter = str(Path(sys.executable).parent / "ragmeter")
    rows = [
        "| run (queries × depth) | measures | tool | wall (s) | CPU (s) | peak RSS (MB) | wall ÷ pytrec_eval |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    failed = False
    for size in args.sizes.split(","):
        queries, depth = (int(x) for x in size.lower().split("x"))
        qrels, run = dataset_paths(DATA, queries, depth)
        if not (qrels.exists() and run.exists()):
            print(f"generating {queries} x {depth} ...", flush=True)
            generate(DATA, queries, depth)
        for measure_set in args.sets.split(","):
            commands = {
                "ragmeter trec_eval": [ragmeter, "trec_eval", "-q", "-m", measure_set, str(qrels), str(run)],
                "pytrec_eval": [sys.executable, __file__, "--pytrec", measure_set, str(qrels), str(run)],
            }
            best: dict[str, tuple[float, float, float]] = {}
            outputs = {}
            for _ in range(args.repeat):
                for tool, cmd in commands.items():
                    out = DATA / f"trec_eval-{queries}x{depth}-{measure_set}-{tool.split()[0]}.txt"
                    wall, cpu, rss = _measure(cmd, stdout=out, env=env)
                    print(
                        f"  {size} {measure_set:8s} {tool:18s} {wall:7.2f} s wall {cpu:7.2f} s CPU {rss:6.0f} MB"
                    )
                    previous = best.get(tool)
                    best[tool] = (
                        min(wall, previous[0]) if previous else wall,
                        min(cpu, previous[1]) if previous else cpu,
                        max(rss, previous[2]) if previous else rss,
                    )
                    outputs[tool] = out
            base = best["pytrec_eval"][0]
            for tool, (wall, cpu, rss) in best.items():
                rows.append(
                    f"| {queries:,} × {depth:,} | {measure_set} | {tool} | {wall:.2f} | {cpu:.2f} | {rss:,.0f} "
                    f"| {wall / base:.3f} |"
                )
            n, problems = compare(outputs["ragmeter trec_eval"], outputs["pytrec_eval"])
            verdict = "identical" if not problems else "DIFFER"
            print(
                f"{size} {measure_set}: ragmeter trec_eval vs pytrec_eval: {verdict} ({n:,} per-topic values)"
            )
            for problem in problems:
                print(f"    {problem}")
            failed |= bool(problems)
    print()
    print("\n".join(rows))
    if failed:
        raise SystemExit("ragmeter trec_eval and pytrec_eval disagree")


if __name__ == "__main__":
    main()
