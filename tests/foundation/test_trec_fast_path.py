"""The fast TREC path (pyarrow parsing in slices, numpy hashing, the judged-pair join, tie and
repeat handling) against a few lines of obvious Python, on random tie-heavy files.

Per qrels topic the reference sorts the run's lines by score descending, then docno descending
byte by byte; a docno counts once, at its first rank (a copy keeps its slot and scores 0); gains
come from the judgments. Cases are shuffled or grouped and pre-sorted, with repeated docnos,
unjudged topics, qrels topics missing from the run, multi-byte and variable-length docnos. The
modes force the paths that small files would not take: many slices parsed in parallel (as for
large files), hashes that collide all the time (every hash match must be confirmed on the
bytes), and dictionary-encoded topics (files whose topics are interleaved).
"""

from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragmeter.io import digests, trec_scan
from ragmeter.io import docnos as docnos_io
from ragmeter.io import trec as trec_io
from ragmeter.io.docnos import KeyIndex, string_array
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.matching.trec import match_trec

CASES = 40


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
            if doc in seen:  # a copy keeps its rank slot and scores 0
                repeats += 1
                row.append(0.0)
                continue
            seen.add(doc)
            row.append(judged.get(doc, 0.0))
        ids.append(topic)
        gains.append(row)
        ideal.append(sorted((g for g in judged.values() if g > 0), reverse=True))
    return ids, gains, ideal, repeats


@pytest.mark.parametrize(
    "mode",
    [
        "plain",
        "slices",
        "weak hash",
        "slices and weak hash",
        "dictionary-encoded topics",
        "slices and dictionary-encoded topics",
        "slices, pyarrow and numpy hashes",
    ],
)
def test_the_fast_path_equals_the_plain_python_reference(
    mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if "slices" in mode:  # every file parsed in slices of ~300 bytes on 3 threads
        monkeypatch.setattr(trec_io, "_PARALLEL_BYTES", 0)
        monkeypatch.setattr(trec_io, "_SLICE_BYTES", 300)
        monkeypatch.setattr(trec_io, "_workers", lambda: 3)
    if "weak hash" in mode:  # hashes of 2 bits: collisions everywhere
        strong = docnos_io._chunk_hashes

        def weak(chunk: Any, out: np.ndarray) -> None:
            out ^= strong(chunk) & np.uint64(3)

        monkeypatch.setattr(docnos_io, "_xor_chunk_hashes", weak)
    if "pyarrow" in mode or "dictionary-encoded" in mode:  # as if the compiled scan and hashes were not built
        monkeypatch.setattr(trec_scan, "_trec_scan", None)
        monkeypatch.setattr(docnos_io, "_trec_scan", None)
    if "dictionary-encoded topics" in mode:
        monkeypatch.setattr(trec_io, "_TOPIC_RUNS", 0)
    for seed in range(CASES):
        _case(seed, tmp_path)
        qrels = read_qrels(tmp_path / "qrels")
        runs = {
            "read alone": read_run(tmp_path / "run"),
            "read with the qrels": read_run(tmp_path / "run", qrels=qrels),
        }
        pieces = "slices" if "slices" in mode else "one piece"
        # Every file here is plain: never the exact reader (but colliding hashes look like a
        # repeated judgment, which the exact reader then rules out).
        plain = [*runs.values()] if "weak hash" in mode else [qrels, *runs.values()]
        for table in plain:
            assert table.reader == "fast" and table.reader_note.endswith(pieces), (seed, table.reader_note)
        for how, run in runs.items():
            for complete in (False, True):
                matched = match_trec(qrels, run, complete=complete)
                table = matched.table
                ids, gains, ideal, repeats = _reference(tmp_path, complete)
                got = [
                    table.gains[a:b].tolist()
                    for a, b in zip(table.offsets[:-1], table.offsets[1:], strict=True)
                ]
                got_ideal = [
                    table.ideal_gains[a:b].tolist()
                    for a, b in zip(table.ideal_offsets[:-1], table.ideal_offsets[1:], strict=True)
                ]
                case = f"case {seed} ({how}, complete={complete})"
                assert table.query_ids == ids, case
                assert got == gains, case
                assert got_ideal == ideal, case
                assert matched.n_duplicates == repeats, case


def test_topic_codes_follow_first_appearance_across_chunks_and_slices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trec_io, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(trec_io, "_SLICE_BYTES", 40)
    monkeypatch.setattr(trec_io, "_workers", lambda: 2)
    order = ["b", "a", "b", "c", "a", "b10", "b1"]
    (tmp_path / "run").write_text("".join(f"{t} Q0 d{i} 1 1.0 r\n" for i, t in enumerate(order)))
    run = read_run(tmp_path / "run")
    assert run.topics == ["b", "a", "c", "b10", "b1"]
    assert [run.topics[c] for c in run.topic_code] == order


def test_repeat_check_confirms_a_match_of_the_high_halves_on_the_full_keys() -> None:
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 2**63, 4000, dtype=np.int64).view(np.uint64)
    codes = np.repeat(np.arange(4, dtype=np.int32), 1000)
    assert not trec_io._repeats(keys, codes)
    high_only = keys.copy()  # same high 32 bits as another key of its topic, different low bits
    high_only[1500] = (keys[1900] & np.uint64(0xFFFFFFFF00000000)) | (
        (keys[1900] + np.uint64(1)) & np.uint64(0xFFFFFFFF)
    )
    assert not trec_io._repeats(high_only, codes)
    repeated = keys.copy()
    repeated[1500] = keys[1900]
    assert trec_io._repeats(repeated, codes)
    across = keys.copy()  # the same key in two topics is not a repeat
    across[500] = keys[2500]
    assert not trec_io._repeats(across, codes)


def test_a_repeat_in_a_topic_of_two_lines_is_found() -> None:
    # Both lines' high halves are equal and nothing else in the row differs: still a suspect.
    rng = np.random.default_rng(8)
    keys = rng.integers(0, 2**63, 8, dtype=np.int64).view(np.uint64)
    codes = np.repeat(np.arange(4, dtype=np.int32), 2)
    assert not trec_io._repeats(keys, codes)
    keys[3] = keys[2]  # the second topic (inside the rows sorted together)
    assert trec_io._repeats(keys, codes)


@pytest.mark.parametrize("size", [0, 1, 5, 3000])
def test_key_index_finds_exactly_the_keys_a_dict_finds(size: int) -> None:
    rng = np.random.default_rng(size)
    table = rng.integers(0, 2**63, size, dtype=np.int64).view(np.uint64)
    probe = np.concatenate((rng.integers(0, 2**63, 20_000, dtype=np.int64).view(np.uint64), table[::3]))
    rng.shuffle(probe)
    position = {int(k): i for i, k in enumerate(table)}
    want = [(i, position[int(k)]) for i, k in enumerate(probe) if int(k) in position]
    at, entry = KeyIndex(table).find(probe)
    assert list(zip(at.tolist(), entry.tolist(), strict=True)) == want


def test_key_index_with_equal_keys_returns_every_candidate() -> None:
    table = np.array([5, 9, 5], dtype=np.uint64)
    at, entry = KeyIndex(table).find(np.array([5, 1, 9], dtype=np.uint64))
    assert sorted(zip(at.tolist(), entry.tolist(), strict=True)) == [(0, 0), (0, 2), (2, 1)]


def test_strings_at_reads_multibyte_strings() -> None:
    names = string_array(["é5", "", "doc-10"])
    assert docnos_io.strings_at(names, np.array([2, 0, 1])) == ["doc-10", "é5", ""]


def test_background_digest_equals_hashlib_and_notices_a_changed_file(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes(b"q Q0 d 1 1.0 r\n" * 1000)
    digests.hash_in_background([path, path, tmp_path / "missing"])
    assert digests.file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()
    digests.hash_in_background([path])
    path.write_bytes(b"changed")
    os.utime(path, ns=(1, 1))  # a different modification time, whatever the clock's resolution
    assert digests.file_sha256(path) == hashlib.sha256(b"changed").hexdigest()
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert digests.file_sha256(empty) == hashlib.sha256(b"").hexdigest()
    with pytest.raises(OSError):
        digests.file_sha256(tmp_path / "missing")
