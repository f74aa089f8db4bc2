"""Where ``ragmeter eval`` spends its time: wall and CPU seconds per phase, in one process.

    .venv/bin/python bench/profile_eval.py bench/data/q10000_d1000.qrels bench/data/q10000_d1000.run

Runs the CLI's own code path (``ragmeter eval ... --json``, output discarded) with
timers around the phases of :func:`ragmeter.evaluation.trec.trec_result_fields`, then reports
imports, each phase (summed over its calls), the JSON printing, and the
interpreter's exit. CPU is the whole process's, so a phase running while other
threads work (the input hashing, the parser's threads) is charged for them too.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import io
import sys
import time
from typing import Any

METRICS = ("ndcg@10", "recall@100", "precision@10", "mrr", "map")
RECORDS: list[tuple[str, float, float]] = []


def _timed(owner: Any, name: str, label: str | None = None) -> None:
    inner = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            RECORDS.append((label or name, time.perf_counter() - wall, time.process_time() - cpu))

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("qrels")
    parser.add_argument("run")
    args = parser.parse_args()
    started, started_cpu = time.perf_counter(), time.process_time()
    import json

    import ragmeter.cli

    ragmeter.cli._tune_process()  # as the CLI does, before numpy and pyarrow load
    import ragmeter.cli.eval_fast
    from ragmeter import result_json
    from ragmeter.evaluation import trec

    imported, imported_cpu = time.perf_counter(), time.process_time()
    RECORDS.append(
        ("imports (CLI quick start, numpy, pyarrow...)", imported - started, imported_cpu - started_cpu)
    )
    from ragmeter.io import table_readers

    for name in ("load_qrels", "load_run", "match_trec", "score_metrics", "result_fields"):
        _timed(trec, name)
    _timed(table_readers, "file_sha256", "file_sha256 (waits for the hashing thread)")
    _timed(result_json, "eval_json_dict")
    _timed(json, "dumps", "json.dumps(indent=2)")
    cli_args = [
        "eval",
        "--qrels",
        args.qrels,
        "--run",
        args.run,
        *[a for m in METRICS for a in ("-m", m)],
        "--json",
    ]

    def report() -> None:
        out = sys.__stderr__ or sys.stderr
        totals: dict[str, list[float]] = {}
        for label, wall, cpu in RECORDS:
            total = totals.setdefault(label, [0.0, 0.0, 0])
            total[0] += wall
            total[1] += cpu
            total[2] += 1
        for label, (wall, cpu, calls) in totals.items():
            named = label if calls == 1 else f"{label} ({calls:.0f} calls)"
            out.write(f"{named:50s} {wall:7.3f} s wall {cpu:7.3f} s CPU\n")
        out.write(
            f"{'(exit: interpreter teardown follows)':50s} {time.perf_counter() - started:7.3f} s so far\n"
        )

    atexit.register(report)
    sys.stdout = io.StringIO()  # the JSON is built and printed, then dropped
    with contextlib.suppress(SystemExit):
        ragmeter.cli.main(cli_args)
    sys.stdout = sys.__stdout__


if __name__ == "__main__":
    main()
