"""Outputs before and after a change: the JSON of fixed runs, from this tree and from a git revision.

    .venv/bin/python bench/check_outputs.py                  # against main
    .venv/bin/python bench/check_outputs.py --before HEAD~3

Runs the same ``ragmeter`` commands with this tree's code and with the code of ``--before``
(exported with ``git archive`` into a temporary folder, run from its ``src``), on fixed inputs:
TREC runs (the ``eval --json`` quick start, and the full command with ``--out``) and agentic
traces (the fast path, and the example traces with labels). The JSON must be identical except
for the time fields (``created_at``, ``elapsed_seconds``) and the output folder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = BENCH / "data"
sys.path.insert(0, str(BENCH))

from bench_agentic import make_traces  # noqa: E402
from gen_data import dataset_paths, generate  # noqa: E402

METRICS = ["-m", "ndcg@10", "-m", "recall@100", "-m", "P@10", "-m", "mrr", "-m", "map", "-m", "r-precision"]


def _stable(text: str) -> Any:
    data = json.loads(text)
    provenance = data.get("provenance", {})
    for key in ("created_at", "elapsed_seconds"):
        provenance.pop(key, None)
    return data


def _run(src: Path, args: list[str]) -> Any:
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run(
        [sys.executable, "-c", "from ragmeter.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=DATA,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{src}: ragmeter {' '.join(args)} failed: {done.stderr.strip()}")
    return _stable(done.stdout)


def _cases() -> list[tuple[str, list[str]]]:
    DATA.mkdir(parents=True, exist_ok=True)
    qrels, run = dataset_paths(DATA, 1000, 100)
    if not (qrels.exists() and run.exists()):
        generate(DATA, 1000, 100)
    traces = DATA / "agentic-check-300.jsonl"
    if not traces.exists():
        traces.write_text("".join(json.dumps(t) + "\n" for t in make_traces(300, 100, 7)), encoding="utf-8")
    examples = ROOT / "examples" / "agentic"
    trec = ["eval", "--qrels", str(qrels), "--run", str(run), *METRICS, "--json"]
    return [
        ("eval --json (quick start)", trec),
        ("eval --json -c --trec-compat -k 20", [*trec, "-c", "--trec-compat", "-k", "20"]),
        ("eval --json --out (full command)", [*trec, "--out", str(DATA / "check-out")]),
        ("agentic (300 traces)", ["agentic", "--traces", str(traces), "--json"]),
        (
            "agentic (examples, labels)",
            [
                "agentic",
                "--traces",
                str(examples / "traces.jsonl"),
                "--labels",
                str(examples / "labels.jsonl"),
                "--json",
            ],
        ),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", default="main", help="git revision to compare with (default: main)")
    args = parser.parse_args()
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "before.tar"
        subprocess.run(
            ["git", "-C", str(ROOT), "archive", "-o", str(archive), args.before, "src"], check=True
        )
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        before_src = Path(tmp) / "src"
        for name, command in _cases():
            before, after = _run(before_src, command), _run(ROOT / "src", command)
            same = before == after
            print(f"{'identical' if same else 'DIFFERENT':9s}  {name}")
            if not same:
                failed.append(name)
    if failed:
        raise SystemExit(f"outputs differ from {args.before}: {', '.join(failed)}")
    print(f"every output is identical to {args.before}'s")


if __name__ == "__main__":
    main()
