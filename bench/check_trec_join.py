"""Randomised check of ragmeter's fast TREC path against a plain-Python reference.

    .venv/bin/python bench/check_trec_join.py [--cases 500] [--weak-hash]

The fast path (pyarrow parsing, numpy hashing, open-addressing join, tie and
duplicate handling) must give exactly what a few lines of obvious Python give:
per qrels topic, the run's lines sorted by score descending then docno
descending byte by byte, each docno counted once at its first rank, gains from
the judgments. Cases are tie-heavy, shuffled or pre-sorted, with repeated
docnos, unjudged topics, qrels topics missing from the run, multi-byte and
variable-length docnos. ``--weak-hash`` makes docno hashes collide all the time,
to exercise the exact confirmation of every hash match; ``--slices`` cuts even
these small files into many slices parsed in parallel, as large files are.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

import numpy as np

from ragmeter.io import docnos as docnos_io
from ragmeter.io import trec as trec_io
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.matching.trec import match_trec


def _case(seed: int, folder: Path) -> None:
    rng = random.Random(seed)
    topics = list(
        dict.fromkeys(f"{rng.choice(['', 'q', 'T'])}{rng.randint(1, 60)}" for _ in range(rng.randint(1, 25)))
    )
    alphabet = "abcXYZ019é-_"
    words = (
        "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 18)))
        for _ in range(rng.choice([3, 20, 400]))
    )
    vocab = list(dict.fromkeys(words))
    pool = rng.choice([[1.0, 2.0], [0.5, 0.25, 0.125, 1.0], None])
    judged = [t for t in topics if rng.random() < 0.8] or topics[:1]
    qrels = [
        f"{t} 0 {doc} {rng.choice([-1, 0, 0, 1, 2, 3])}"
        for t in judged + [f"z{i}" for i in range(rng.randint(0, 3))]
        for doc in rng.sample(vocab, min(len(vocab), rng.randint(1, 10)))
    ]
    if rng.random() < 0.3:
        rng.shuffle(qrels)
    lines = []
    for t in topics:
        for _ in range(rng.randint(1, 40)):
            score = rng.choice(pool) if pool else round(rng.uniform(-5, 5), rng.choice([1, 2, 6]))
            lines.append((t, rng.choice(vocab), score))
    if rng.random() < 0.5:  # grouped and score-sorted, as systems write; ties in any order
        place = {t: (i if rng.random() < 0.5 else rng.random()) for i, t in enumerate(topics)}
        lines.sort(key=lambda x: (place[x[0]], -x[2], rng.random()))
    else:
        rng.shuffle(lines)
    form = rng.choice(["%r", "%.6f", "%s"])
    (folder / "qrels").write_text("".join(line + "\n" for line in qrels))
    (folder / "run").write_text(
        "".join(f"{t} Q0 {doc} {i + 1} {form % s} run\n" for i, (t, doc, s) in enumerate(lines))
    )


def _reference(folder: Path, complete: bool) -> tuple[list[str], list[list[float]], list[list[float]], int]:
    judgments: dict[str, dict[str, float]] = {}
    for line in (folder / "qrels").read_text().splitlines():
        topic, _, doc, rel = line.split()
        judgments.setdefault(topic, {})[doc] = float(rel)
    ranked: dict[str, list[tuple[float, bytes, str]]] = {}
    for line in (folder / "run").read_text().splitlines():
        topic, _, doc, _, score, _ = line.split()
        ranked.setdefault(topic, []).append((float(score), doc.encode(), doc))
    ids, gains, ideal, repeats = [], [], [], 0
    for topic, judged in judgments.items():
        if topic not in ranked and not complete:
            continue
        docs = sorted(ranked.get(topic, []), key=lambda x: x[1], reverse=True)  # docno descending
        docs.sort(key=lambda x: -x[0])  # stable: score descending, ties keep docno descending
        seen: set[str] = set()
        row = []
        for _, _, doc in docs:
            if doc in seen:
                repeats += 1
                continue
            seen.add(doc)
            row.append(judged.get(doc, 0.0))
        ids.append(topic)
        gains.append(row)
        ideal.append(sorted((g for g in judged.values() if g > 0), reverse=True))
    return ids, gains, ideal, repeats


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--weak-hash", action="store_true", help="hashes of 2 bits: collisions everywhere")
    parser.add_argument("--slices", action="store_true", help="parse every file in slices of ~300 bytes")
    args = parser.parse_args()
    if args.slices:
        trec_io._PARALLEL_BYTES, trec_io._SLICE_BYTES = 0, 300
        trec_io._workers = lambda: 3
    if args.weak_hash:
        strong = docnos_io._chunk_hashes
        docnos_io._chunk_hashes = lambda chunk: strong(chunk) & np.uint64(3)  # type: ignore[assignment]
    folder = Path(tempfile.mkdtemp(prefix="ragmeter-check-"))
    for seed in range(args.cases):
        _case(seed, folder)
        qrels = read_qrels(folder / "qrels")
        runs = {
            "read alone": read_run(folder / "run"),
            "read with the qrels": read_run(folder / "run", qrels=qrels),
        }
        for how, run in runs.items():
            for complete in (False, True):
                matched = match_trec(qrels, run, complete=complete)
                table = matched.table
                ids, gains, ideal, repeats = _reference(folder, complete)
                bounds = zip(table.offsets[:-1], table.offsets[1:], strict=True)
                got = [table.gains[a:b].tolist() for a, b in bounds]
                ideal_bounds = zip(table.ideal_offsets[:-1], table.ideal_offsets[1:], strict=True)
                got_ideal = [table.ideal_gains[a:b].tolist() for a, b in ideal_bounds]
                problem = (
                    "query ids"
                    if table.query_ids != ids
                    else "gains"
                    if got != gains
                    else "ideal gains"
                    if got_ideal != ideal
                    else "repeat count"
                    if matched.n_duplicates != repeats
                    else None
                )
                if problem:
                    raise SystemExit(
                        f"case {seed} ({how}, complete={complete}): {problem} differ; files in {folder}"
                    )
    for name in ("qrels", "run"):
        (folder / name).unlink()
    folder.rmdir()
    print(f"{args.cases} cases: identical to the reference")


if __name__ == "__main__":
    main()
