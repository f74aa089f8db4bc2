"""Write a seeded, realistic TREC qrels + run pair for the benchmark.

The run looks like a real system's output: lines grouped by topic, each topic's
documents in rank order with non-increasing BM25-like scores that are float32
values printed with ``%.6f``, as Pyserini writes Lucene's scores (so, as in
real runs, some adjacent scores are equal and those ties appear in whatever
order the system produced them), docnos like ``doc1234567``
drawn from a 9-million-document corpus. Each topic has about 20 graded
judgments (0..3) with at least one relevant document; judged documents are
retrieved with a bias towards the top ranks, the rest of the run is unjudged.

    python bench/gen_data.py --queries 10000 --depth 1000 --out bench/data
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

CORPUS_LO = 1_000_000
CORPUS_HI = 10_000_000  # docnos doc1000000 .. doc9999999
GRADE_P = (0.45, 0.30, 0.15, 0.10)  # judged grades 0, 1, 2, 3
CHUNK = 500  # topics generated and written per batch


def dataset_paths(out: Path, queries: int, depth: int) -> tuple[Path, Path]:
    stem = f"q{queries}_d{depth}"
    return out / f"{stem}.qrels", out / f"{stem}.run"


def _fixed6(micro: np.ndarray) -> pa.Array:
    """Format positive integer micro-units as ``%.6f`` strings (exactly what printf writes)."""
    whole = pa.array(micro // 1_000_000).cast(pa.string())
    frac = pc.utf8_lpad(pa.array(micro % 1_000_000).cast(pa.string()), width=6, padding="0")
    return pc.binary_join_element_wise(whole, frac, ".")


def _lines(*columns: pa.Array | str) -> bytes:
    """Join columns with spaces into newline-terminated lines; return the bytes."""
    joined = pc.binary_join_element_wise(*columns, " ")
    text = pc.binary_join_element_wise(joined, "\n", "")  # one trailing newline per line
    offsets = text.buffers()[1]
    data = text.buffers()[2]
    start = np.frombuffer(offsets, dtype=np.int32)[text.offset]
    stop = np.frombuffer(offsets, dtype=np.int32)[text.offset + len(text)]
    return data.to_pybytes()[start:stop]


def _topic_batch(
    rng: np.random.Generator, first_topic: int, n_topics: int, depth: int, judged: int
) -> tuple[bytes, bytes]:
    """Qrels and run text for topics ``first_topic .. first_topic + n_topics - 1``."""
    qrels_q: list[np.ndarray] = []
    qrels_d: list[np.ndarray] = []
    qrels_g: list[np.ndarray] = []
    run_q: list[np.ndarray] = []
    run_d: list[np.ndarray] = []
    run_s: list[np.ndarray] = []
    for t in range(first_topic, first_topic + n_topics):
        n_judged = max(1, int(rng.poisson(judged)))
        docs = rng.choice(CORPUS_HI - CORPUS_LO, size=depth + n_judged, replace=False) + CORPUS_LO
        judged_docs, pool = docs[:n_judged], docs[n_judged:]
        grades = rng.choice(4, size=n_judged, p=GRADE_P)
        if not (grades > 0).any():
            grades[rng.integers(n_judged)] = int(rng.integers(1, 4))
        # Retrieve judged documents with a bias to the top: better grades more often and higher.
        p_retrieved = np.array([0.35, 0.6, 0.75, 0.85])[grades]
        retrieved = rng.random(n_judged) < p_retrieved
        ranking = pool.copy()
        wanted = np.minimum((depth * rng.random(n_judged) ** (1.0 + grades)).astype(np.int64), depth - 1)
        for doc, slot in zip(judged_docs[retrieved], wanted[retrieved], strict=True):
            ranking[slot] = doc  # a later judged doc may take a slot from an earlier one: fine
        # Descending float32 scores (gaps of ~0.01: a few exact ties per topic), in micro-units
        # as %.6f prints them (float32 * 1e6 is exact in float64; rint rounds half to even).
        gaps = rng.exponential(0.01, size=depth)
        top = rng.uniform(15.0, 40.0)
        scores32 = (top - np.cumsum(gaps) + gaps[0]).astype(np.float32)
        scores = np.rint(scores32.astype(np.float64) * 1e6).astype(np.int64)
        qrels_q.append(np.full(n_judged, t))
        qrels_d.append(judged_docs)
        qrels_g.append(grades)
        run_q.append(np.full(depth, t))
        run_d.append(ranking)
        run_s.append(scores)
    qq, qd, qg = np.concatenate(qrels_q), np.concatenate(qrels_d), np.concatenate(qrels_g)
    rq, rd, rs = np.concatenate(run_q), np.concatenate(run_d), np.concatenate(run_s)
    ranks = np.tile(np.arange(1, depth + 1), n_topics)
    qrels = _lines(
        pa.array(qq).cast(pa.string()),
        "0",
        pc.binary_join_element_wise("doc", pa.array(qd).cast(pa.string()), ""),
        pa.array(qg).cast(pa.string()),
    )
    run = _lines(
        pa.array(rq).cast(pa.string()),
        "Q0",
        pc.binary_join_element_wise("doc", pa.array(rd).cast(pa.string()), ""),
        pa.array(ranks).cast(pa.string()),
        _fixed6(rs),
        "bench-bm25",
    )
    return qrels, run


def generate(out: Path, queries: int, depth: int, *, judged: int = 20, seed: int = 2024) -> tuple[Path, Path]:
    """Write ``q{queries}_d{depth}.qrels`` and ``.run`` under ``out``; return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = dataset_paths(out, queries, depth)
    rng = np.random.default_rng([seed, queries, depth])
    tmp_q, tmp_r = qrels_path.with_suffix(".qrels.tmp"), run_path.with_suffix(".run.tmp")
    with tmp_q.open("wb") as fq, tmp_r.open("wb") as fr:
        for first in range(0, queries, CHUNK):
            q, r = _topic_batch(rng, 1 + first, min(CHUNK, queries - first), depth, judged)
            fq.write(q)
            fr.write(r)
    tmp_q.replace(qrels_path)
    tmp_r.replace(run_path)
    return qrels_path, run_path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--judged", type=int, default=20, help="mean judgments per topic")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data")
    args = parser.parse_args()
    started = time.perf_counter()
    qrels, run = generate(args.out, args.queries, args.depth, judged=args.judged, seed=args.seed)
    took = time.perf_counter() - started
    print(f"wrote {qrels} ({qrels.stat().st_size:,} B) and {run} ({run.stat().st_size:,} B) in {took:.1f}s")


if __name__ == "__main__":
    main()
