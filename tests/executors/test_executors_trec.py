"""Partitioned TREC evaluation (split by topic, merged) equals ``evaluate_trec`` exactly — here on the
local executor's threads; the Ray run is in test_executors_ray.py."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragmeter.api import evaluate_trec
from ragmeter.errors import RagmeterError
from ragmeter.executors.local import LocalExecutor
from ragmeter.io.trec_split import split_by_topic
from ragmeter.partitioned_trec import _groups, evaluate_trec_partitioned, merge_warnings

ORACLE = Path("/work/shared/oracle/trec_eval")
if not ORACLE.is_dir():
    ORACLE = Path(__file__).resolve().parents[2].parent / "shared" / "oracle" / "trec_eval"


def comparable(result: Any) -> str:
    data = result.to_json_dict()
    data["provenance"].pop("elapsed_seconds")
    data["provenance"].pop("created_at")
    return json.dumps(data, sort_keys=True)


def same_as_local(qrels: Path, run: Path, *, parts: tuple[int, ...] = (1, 2, 3, 5), **options: Any) -> None:
    try:
        expected: str | None = comparable(evaluate_trec(qrels, run, **options))
        error = None
    except RagmeterError as exc:
        expected, error = None, str(exc)
    for n in parts:
        if error is not None:
            with pytest.raises(RagmeterError) as raised:
                evaluate_trec_partitioned(qrels, run, executor=LocalExecutor(), partitions=n, **options)
            assert str(raised.value) == error
        else:
            got = evaluate_trec_partitioned(qrels, run, executor=LocalExecutor(), partitions=n, **options)
            assert comparable(got) == expected, (n, options)


OPTIONS = [
    {},
    {"complete": True},
    {"trec_compat": True},
    {"metrics": ["ndcg@10", "map", "P@5", "recall@100", "mrr", "r-precision"], "complete": True},
    {"relevance_level": 2, "k": 3},
]


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize(
    "files",
    [
        ("qrels.test", "results.test"),
        ("qrels-302.test", "results-302.test"),
        ("qrels.comment.test", "results.comment.test"),
        ("qrels.test.with-comments", "results.trunc"),
        ("qrels.rel_level", "results.test"),
    ],
)
def test_executors_trec_oracle_files(files: tuple[str, str], options: dict[str, Any]) -> None:
    qrels, run = (ORACLE / name for name in files)
    if not qrels.is_file():
        pytest.skip(f"no trec_eval oracle data at {ORACLE}")
    same_as_local(qrels, run, **options)


def test_executors_trec_error_names_the_original_file(tmp_path: Path) -> None:
    if not (ORACLE / "qrels.123").is_file():
        pytest.skip("no oracle data")
    same_as_local(ORACLE / "qrels.123", ORACLE / "results.test")  # a duplicate judgment at line 3682
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 1.0 r\nq2 Q0 b 1\n", encoding="utf-8")
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 a 1\nq2 0 b 1\n", encoding="utf-8")
    same_as_local(qrels, bad)
    same_as_local(qrels, tmp_path / "missing.run")
    (tmp_path / "empty.run").write_text("# nothing\n\n", encoding="utf-8")
    same_as_local(qrels, tmp_path / "empty.run")


def _tricky(
    folder: Path, rng: random.Random, *, crlf: bool = False, interleave: bool = False
) -> tuple[Path, Path]:
    """Many topics (short, 8+ and 32+ bytes long, non-ASCII), ties, duplicates, extra fields,
    comments, indented and blank lines, topics only in the qrels or only in the run."""
    topics = [f"{i}" for i in range(40)] + ["q-é-1", "long-topic-name-12", "x" * 40 + "A", "x" * 40 + "B"]
    qrels_lines, run_lines = ["# judgments"], ["# a run"]
    for t in topics:
        if t not in ("3", "7"):  # topics only in the run
            for d in range(rng.randint(0, 6)):
                qrels_lines.append(f"{t} 0 d{d} {rng.choice([0, 0, 1, 2, 3])}")
        if t in ("5", "x" * 40 + "B"):  # topics only in the qrels
            continue
        docs = [f"d{rng.randint(0, 12)}" for _ in range(rng.randint(1, 15))]
        for rank, d in enumerate(docs):
            extra = " extra words" if rng.random() < 0.05 else ""
            score = rng.choice([1.0, 2.0, 0.5]) if rng.random() < 0.3 else rng.random()
            line = f"{t} Q0 {d} {rank + 1} {score} tag{extra}"
            run_lines.append(("  " + line) if rng.random() < 0.05 else line)
            if rng.random() < 0.05:
                run_lines.append("")
    if interleave:
        head, body = run_lines[:1], run_lines[1:]
        rng.shuffle(body)
        run_lines = head + body
    end = "\r\n" if crlf else "\n"
    qrels, run = folder / "t.qrels", folder / "t.run"
    qrels.write_text(end.join(qrels_lines) + end, encoding="utf-8")
    run.write_text(end.join(run_lines), encoding="utf-8")  # no newline at the end
    return qrels, run


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("layout", ["grouped", "interleaved", "crlf"])
def test_executors_trec_tricky_runs(tmp_path: Path, seed: int, layout: str) -> None:
    qrels, run = _tricky(
        tmp_path, random.Random(seed), crlf=layout == "crlf", interleave=layout == "interleaved"
    )
    for options in ({}, {"complete": True}, {"trec_compat": True}):
        same_as_local(qrels, run, parts=(2, 4, 7), **options)


@pytest.mark.parametrize(
    "odd",
    ["q1\u00a0x", "q1\x0cx", "q1\rx", "q1\u2003x"],
    ids=["nbsp", "form-feed", "lone-cr", "em-space"],
)
def test_executors_trec_unicode_whitespace_falls_back(tmp_path: Path, odd: str) -> None:
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text(f"q1 0 a 1\nx 0 a 1\n{odd} 0 b 1\n", encoding="utf-8")
    run.write_text(f"q1 Q0 a 1 1.0 r\nx Q0 b 1 1.0 r\n{odd} Q0 b 1 1.0 r\n", encoding="utf-8")
    same_as_local(qrels, run, parts=(3,))


def test_executors_trec_a_byte_order_mark_keeps_the_first_topic_whole(tmp_path: Path) -> None:
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("\ufeffq1 0 a 1\nq1 0 b 1\nx 0 a 1\n", encoding="utf-8")
    run.write_text("\ufeffq1 Q0 a 1 1.0 r\nx Q0 b 1 1.0 r\nq1 Q0 b 2 0.5 r\n", encoding="utf-8")
    same_as_local(qrels, run, parts=(2, 3))


def test_executors_trec_split_is_by_topic_and_streams(tmp_path: Path) -> None:
    qrels, run = _tricky(tmp_path, random.Random(4), interleave=True)
    executor = LocalExecutor()
    split = split_by_topic(run, 4, executor.share, block_bytes=64)  # many tiny blocks, lines cut across them
    seen: dict[str, int] = {}
    for part, chunks in enumerate(split.chunks):
        text = b"".join(c.get() for c in chunks).decode("utf-8")
        for line in text.splitlines():
            words = line.split()
            if words and not words[0].startswith("#"):
                assert seen.setdefault(words[0], part) == part, f"topic {words[0]} in two partitions"
    assert sum(split.lines) == sum(
        1 for line in run.read_text().splitlines() if line.strip() and not line.startswith("#")
    )
    import hashlib

    assert split.sha256 == hashlib.sha256(run.read_bytes()).hexdigest()
    q = split_by_topic(qrels, 4, executor.share, keep_rows=True)
    rows = np.sort(np.concatenate(q.rows))
    assert rows.tolist() == list(range(sum(q.lines)))


def test_executors_trec_merge_helpers() -> None:
    assert merge_warnings([["f: 2 a", "3 b"], ["f: 1 a"], ["x", "1 b"]]) == ["f: 3 a", "x", "4 b"]
    assert merge_warnings([["1 b"], ["f: 2 a", "1 b"]]) == ["f: 2 a", "2 b"], "each partition's order holds"
    assert _groups([0, 1, 1], [1, 0, 1]) == [[0, 1, 2]]
    assert _groups([1, 0], [0, 1]) == []


def test_executors_trec_local_without_partitions_is_evaluate_trec(tmp_path: Path) -> None:
    qrels, run = _tricky(tmp_path, random.Random(5))
    got = evaluate_trec_partitioned(qrels, run, executor=LocalExecutor())
    assert comparable(got) == comparable(evaluate_trec(qrels, run))
