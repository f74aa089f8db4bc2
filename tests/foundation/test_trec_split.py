"""Splitting a TREC file by topic (``ragmeter.io.trec_split``) against a few lines of plain Python.

The reference reads the file line by line: a line is kept unless it is blank or a ``#``
comment; its topic is its first word; blank and comment lines ride with the kept line
before them (at the start of a block, with the first kept line). The partition of a topic
is the documented hash (MurmurHash3's 64-bit finaliser over the topic's first bytes and its
length) modulo the number of partitions, written out here in plain integers, so that the
same topic lands in the same partition on every machine and in every release.
"""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ragmeter.executors.local import LocalExecutor
from ragmeter.io import trec_split
from ragmeter.io.trec_split import split_block, split_by_topic

MASK = (1 << 64) - 1
MIX = 0x9E3779B97F4A7C15
BLANKS = b" \t\r\n"


def fmix64(h: int) -> int:
    """MurmurHash3's fmix64, on Python integers."""
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK
    return h ^ (h >> 33)


def topic_hash(topic: bytes) -> int:
    """Short topics: their bytes and length; 8 bytes or more: their length and first 32 bytes, folded."""
    n = len(topic)
    if n < 8:
        return fmix64(int.from_bytes(topic.ljust(8, b"\0"), "big") ^ (n * MIX & MASK))
    h = n * MIX & MASK
    padded = topic[:32].ljust(32, b"\0")
    for i in range(0, 32, 8):
        h = fmix64(h ^ int.from_bytes(padded[i : i + 8], "big"))
    return fmix64(h)


def test_the_finaliser_is_murmurhash3s() -> None:
    # fmix64 of 0, 1 and 2^64 - 1 as MurmurHash3's C code (uint64_t arithmetic) computes them.
    assert fmix64(0) == 0
    assert fmix64(1) == 0xB456BCFC34C2CB2C
    assert fmix64(MASK) == 0x64B5720B4B825F21


def first_word(line: bytes) -> bytes | None:
    """The line's topic, ``None`` for a blank or comment line."""
    words = line.split()
    return None if not words or words[0].startswith(b"#") else words[0]


def reference_parts(block: bytes, parts: int) -> tuple[list[int], list[int]]:
    """Each line's partition (blank and comment lines: the kept line's before them) and each kept line's."""
    lines = block.splitlines(keepends=True)
    kept = [topic_hash(w) % parts for line in lines if (w := first_word(line)) is not None]
    owner, current = [], kept[0] if kept else 0
    for line in lines:
        word = first_word(line)
        if word is not None:
            current = topic_hash(word) % parts
        owner.append(current)
    return owner, kept


topics = st.one_of(
    st.sampled_from(["1", "q1", "301", "topic-7", "12345678", "1234567", "123456789"]),
    st.text(alphabet="ab7é_-.", min_size=1, max_size=40),
    st.integers(0, 3).map(lambda k: "x" * 32 + "y" * k),  # equal first 32 bytes, other lengths
)
comment = st.sampled_from(["\n", "  \n", "# a note\n", "\t# indented note\n", "\r\n"])


@st.composite
def files(draw: st.DrawFn) -> bytes:
    names = draw(st.lists(topics, min_size=1, max_size=6, unique=True))
    out = []
    for i in range(draw(st.integers(0, 25))):
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(comment))
        else:
            indent = draw(st.sampled_from(["", "", " ", "\t "]))
            end = draw(st.sampled_from(["\n", "\n", "\r\n"]))
            out.append(f"{indent}{draw(st.sampled_from(names))} Q0 d{i} {i + 1} 1.0 r{end}")
    return "".join(out).encode("utf-8")


@settings(max_examples=60, deadline=None)
@given(files(), st.integers(1, 7))
@example(b"12345678 0 a 1\n1234567 0 b 1\n", 2)
@example(b"\n# lead\nq1 0 a 1\n\nq2 0 b 1\n# tail\n", 3)
def test_a_block_splits_as_the_reference_does(block: bytes, parts: int) -> None:
    owner, kept = reference_parts(block, parts)
    split = split_block(block, parts)
    assert split.line_parts.tolist() == kept
    if not kept:
        assert split.ranges == []
        return
    # Ranges: maximal runs of lines of one partition, in file order, covering the whole block.
    ends = np.cumsum([len(line) for line in block.splitlines(keepends=True)]).tolist()
    runs: list[tuple[int, int, int]] = []
    start = 0
    for part, end in zip(owner, ends, strict=True):
        if runs and runs[-1][0] == part:
            runs[-1] = (part, runs[-1][1], end)
        else:
            runs.append((part, start, end))
        start = end
    assert split.ranges == runs


def test_interleaved_topics_are_gathered_per_partition() -> None:
    rng = random.Random(3)
    lines = [f"{rng.choice(['q1', 'q2', 'q3', 'topic-long-name-4'])} Q0 d{i} 1 1.0 r\n" for i in range(2400)]
    block = "".join(lines).encode()
    split = split_block(block, 3)
    assert isinstance(split, trec_split._Gathered)
    owner, kept = reference_parts(block, 3)
    assert split.line_parts.tolist() == kept
    assert [p for p, _, _ in split.ranges] == sorted({*owner})
    for part, start, end in split.ranges:
        mine = b"".join(
            line for line, p in zip(block.splitlines(keepends=True), owner, strict=True) if p == part
        )
        assert split.data[start:end] == mine


def _whole(chunks: list[object]) -> bytes:
    return b"".join(chunk.get() for chunk in chunks)  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files(), st.integers(1, 5), st.integers(1, 80), st.booleans())
def test_a_file_splits_into_its_topics_lines_in_file_order(
    tmp_path: Path, text: bytes, parts: int, block_bytes: int, final_newline: bool
) -> None:
    if not final_newline:
        text = text.rstrip(b"\n")
    path = tmp_path / "run"
    path.write_bytes(text)
    split = split_by_topic(path, parts, LocalExecutor().share, keep_rows=True, block_bytes=block_bytes)
    assert split.sha256 == hashlib.sha256(text).hexdigest()
    lines = [line if line.endswith(b"\n") else line + b"\n" for line in text.splitlines(keepends=True)]
    kept = [(i, line) for i, line in enumerate(line for line in lines if first_word(line) is not None)]
    for part in range(parts):
        mine = [(i, line) for i, line in kept if topic_hash(first_word(line) or b"") % parts == part]
        got = [line for line in _whole(split.chunks[part]).splitlines(keepends=True) if first_word(line)]
        assert got == [line for _, line in mine]
        assert split.lines[part] == len(mine)
        assert split.rows[part].tolist() == [i for i, _ in mine]


def test_without_keep_rows_no_rows_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 a 1 1 r\n")
    assert split_by_topic(path, 2, LocalExecutor().share).rows == []


def test_a_partition_ships_its_bytes_once_enough_have_gathered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trec_split, "FLUSH_BYTES", 30)
    path = tmp_path / "run"
    line = b"q1 Q0 d 1 1.0 r\n"  # 16 bytes: two lines reach 30
    path.write_bytes(line * 7)
    split = split_by_topic(path, 1, LocalExecutor().share, block_bytes=16)
    assert [len(c.get()) for c in split.chunks[0]] == [32, 32, 32, 16]  # type: ignore[attr-defined]


ODD = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\u1680", "\u2000", "\u200a"]
ODD += ["\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\r"]


def newline_parts(block: bytes, parts: int) -> list[int]:
    """Each kept line's partition when lines end at ``\\n`` only and words at ASCII blanks, as the readers cut."""
    lines = block.split(b"\n")[:-1] if block.endswith(b"\n") else block.split(b"\n")
    return reference_parts(b"".join(line.replace(b"\r", b" ") + b"\n" for line in lines), parts)[1]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["a", " ", "\t", "\n", "\r\n", "é", "\u200b", "\u2010", *ODD])).map("".join))
@example("q1 a\r\nq2 b\r\n")
@example("q1\u2009a\n")
@example("q1\ra\nq2 b\n")  # a lone carriage return is a blank inside the line, not a line end
def test_lines_end_at_newlines_and_words_at_ascii_blanks_whatever_the_line_holds(text: str) -> None:
    # The readers cut exactly there (io/trec_exact), so no block is sent whole for its characters.
    block = (text + "\n").encode("utf-8")
    assert split_block(block, 2).line_parts.tolist() == newline_parts(block, 2)


@pytest.mark.parametrize("ch", ODD, ids=[f"U+{ord(ch):04X}" for ch in ODD])
def test_a_unicode_or_control_separator_is_part_of_the_topic_unless_an_ascii_blank(ch: str) -> None:
    block = f"q1 0 a 1\nq1{ch}x 0 b 1\n".encode()
    same_topic = ch in "\x0b\x0c\r"  # ASCII blanks: the topic is q1 again
    parts = split_block(block, 64).line_parts.tolist()
    assert parts == newline_parts(block, 64)
    if same_topic:
        assert parts[0] == parts[1]


NEIGHBOURS = ["é", "\u0100", "\u1681", "\u200b", "\u2010", "\u2030", "\u2060", "\u3001", "あ", "日"]


@pytest.mark.parametrize("ch", NEIGHBOURS, ids=[f"U+{ord(ch):04X}" for ch in NEIGHBOURS])
def test_other_non_ascii_text_is_split(ch: str) -> None:
    split = split_block(f"q1 0 a 1\nq{ch} 0 b 1\n".encode(), 1)
    assert split.line_parts.tolist() == [0, 0]
