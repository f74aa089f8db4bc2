"""The compiled TREC scan (``ragmeter._trec_scan``): the exact reader's values, or ``None``.

What it reads, it reads as the exact reader does (scores as Python's ``float``, relevances
through ``int``, docnos byte for byte, topics in runs); what it cannot read exactly, it
leaves to pyarrow (``None``), never a value of its own. Its docno hashes are numpy's.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.io import docnos as docnos_io
from ragmeter.io import trec_scan
from ragmeter.io.docnos import string_array
from ragmeter.io.trec import read_by, read_qrels, read_run
from ragmeter.io.trec_exact import read_qrels_exact, read_run_exact


def _run(lines: list[str], delimiter: str = " ") -> trec_scan.Scanned | None:
    data = ("".join(line + "\n" for line in lines)).encode("utf-8")
    return trec_scan.scan(data, 0, len(data), fields=6, value_field=4, whole=False, delimiter=delimiter)


def _score(text: str) -> float | None:
    found = _run([f"q1 Q0 d1 1 {text} t"])
    return None if found is None else float(found.values[0])


def _relevance(text: str) -> float | None:
    data = f"q1 0 d1 {text}\n".encode()
    found = trec_scan.scan(data, 0, len(data), fields=4, value_field=3, whole=True, delimiter=" ")
    return None if found is None else float(found.values[0])


def test_the_compiled_scan_is_built() -> None:
    # `pip install -e .` builds it (the ext-module is optional, so a failed build would pass silently).
    assert trec_scan.available()
    assert docnos_io._trec_scan is not None


@pytest.mark.parametrize(
    "text",
    [
        "20.331326",
        "-0.5",
        ".5",
        "5.",
        "+2",
        "1e3",
        "1E-2",
        "2.5e+01",
        "00017",
        "0.000001",
        "9007199254740992",  # 2^53, the largest exact significand
        "900719925474099.2",
        "1e22",
        "1e-22",
        "123456789012345e-22",
        "0e999",  # zero whatever the exponent
        "0.0000000000000000000000000000",
        "1e-0022",
    ],
)
def test_scores_in_the_exact_range_are_pythons_floats(text: str) -> None:
    assert _score(text) == float(text)


@pytest.mark.parametrize("text", ["-0", "-0.0", "-0e5", "-.0"])
def test_a_negative_zero_stays_negative(text: str) -> None:
    value = _score(text)
    assert value == 0.0 and repr(value) == "-0.0" == repr(float(text))


@pytest.mark.parametrize(
    "text",
    [
        "9007199254740993",  # past 2^53: pyarrow rounds it
        "0.12345678901234567",  # a 17-digit repr
        "1e23",
        "1e-23",
        "1e00001",  # a five-digit exponent
        "12345678901234567890",
        "1.00000000000000000000",
    ],
)
def test_scores_beyond_the_exact_range_are_left_to_pyarrow(text: str) -> None:
    assert _score(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "nan",
        "inf",
        "-Infinity",
        "1_0",
        "0x10",
        "1,5",
        ".",
        "+",
        "-",
        "e5",
        "1e",
        "1e+",
        "1.5.2",
        "1-2",
        "5e5e5",
    ],
)
def test_scores_that_are_not_plain_decimals_are_left_to_pyarrow(text: str) -> None:
    assert _score(text) is None


@settings(max_examples=500, deadline=None)
@given(
    sign=st.sampled_from(["", "-", "+"]),
    whole=st.text("0123456789", max_size=17),
    point=st.booleans(),
    fraction=st.text("0123456789", max_size=17),
    exponent=st.one_of(st.just(""), st.integers(-30, 30).map(lambda e: f"e{e}")),
)
def test_every_decimal_is_read_as_float_reads_it_or_left(
    sign: str, whole: str, point: bool, fraction: str, exponent: str
) -> None:
    text = sign + whole + ("." + fraction if point else fraction[:0]) + exponent
    value = _score(text)
    if value is not None:
        assert repr(value) == repr(float(text)), text


@settings(max_examples=300, deadline=None)
@given(value=st.floats(-1e6, 1e6, allow_nan=False), places=st.integers(0, 9))
def test_scores_written_with_fixed_places_are_read(value: float, places: int) -> None:
    text = f"{value:.{places}f}"
    got = _score(text)
    assert got is not None and repr(got) == repr(float(text)), text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0.0),
        ("3", 3.0),
        ("-1", -1.0),
        ("+2", 2.0),
        ("-0", 0.0),
        ("007", 7.0),
        ("9" * 18, float("9" * 18)),
    ],
)
def test_relevances_are_whole_numbers_read_through_int(text: str, value: float) -> None:
    got = _relevance(text)
    assert got is not None and repr(got) == repr(value)


@pytest.mark.parametrize("text", ["1.0", "2.", "1e0", "9" * 19, "+", "0x1", "one"])
def test_other_relevances_are_left_to_pyarrow(text: str) -> None:
    assert _relevance(text) is None


def test_the_columns_and_the_topic_runs() -> None:
    found = _run(["q1 Q0 d1 1 2.5 r", "q1 Q0 doc-22 2 1 r", "10 Q0 d1 1 0.5 r", "q1 Q0 d3 1 7 r"])
    assert found is not None
    assert found.docno.to_pylist() == ["d1", "doc-22", "d1", "d3"]
    assert found.values.tolist() == [2.5, 1.0, 0.5, 7.0]
    assert found.run_names == ["q1", "10", "q1"] and found.run_lengths.tolist() == [2, 1, 1]


def test_the_docno_column_holds_its_docnos_and_nothing_more() -> None:
    found = _run(["q1 Q0 d1 1 2.5 r", "q1 Q0 doc-22 2 1 r", "q2 Q0 d333 1 0.5 r"])
    assert found is not None
    _, offsets, data = found.docno.buffers()
    assert offsets.size == 4 * 4 and data.size == len("d1doc-22d333")
    assert np.frombuffer(offsets, np.int32).tolist() == [0, 2, 8, 12]


def test_a_tab_separated_file_and_a_last_line_without_a_newline() -> None:
    data = b"q1\tQ0\td1\t1\t2.5\tr\nq1\tQ0\td2\t2\t1.5\tr"
    found = trec_scan.scan(data, 0, len(data), fields=6, value_field=4, whole=False, delimiter="\t")
    assert found is not None and found.docno.to_pylist() == ["d1", "d2"]


def test_a_piece_inside_a_buffer() -> None:
    data = b"junk\nq1 Q0 d1 1 2.5 r\nq2 Q0 d2 1 3 r\nmore junk"
    start = data.index(b"q1")
    stop = data.index(b"more")
    found = trec_scan.scan(data, start, stop, fields=6, value_field=4, whole=False, delimiter=" ")
    assert found is not None and found.run_names == ["q1", "q2"] and found.values.tolist() == [2.5, 3.0]


@pytest.mark.parametrize(
    "text",
    [
        "q1 Q0 d1 1 2.5 r\r\n",  # CRLF
        "q1  Q0 d1 1 2.5 r\n",  # two spaces
        "q1 Q0 d1 1 2.5 r \n",  # a trailing space
        "q1 Q0 d1 1 2.5 r ",  # ... on the last line
        " q1 Q0 d1 1 2.5 r\n",  # a leading space
        "q1\tQ0 d1 1 2.5 r\n",  # a tab in a space-separated line
        "q1 Q0 d1 1 2.5\n",  # five fields
        "q1 Q0 d1 1 2.5 r extra\n",  # seven
        "q1 Q0 d1 1 2.5 r\n\nq1 Q0 d2 1 2 r\n",  # a blank line
        "# a comment\n",
        "#q1 Q0 d1 1 2.5 r\n",  # a topic that starts a comment
        "q1 Q0 d\x001 1 2.5 r\n",  # NUL
        "q1 Q0 d\x7f1 1 2.5 r\n",  # DEL
        "q1 Q0 d\x0b1 1 2.5 r\n",  # vertical tab: blank to trec_eval
        "q1 Q0 d\u00e91 1 2.5 r\n",  # non-ASCII: pyarrow's path
        "q1 Q0 d\u00851 1 2.5 r\n",  # a C1 control
        "\ufeffq1 Q0 d1 1 2.5 r\n",  # a BOM (the reader skips it before the scan)
    ],
)
def test_irregular_bytes_are_left_to_pyarrow(text: str) -> None:
    data = text.encode("utf-8")
    assert trec_scan.scan(data, 0, len(data), fields=6, value_field=4, whole=False, delimiter=" ") is None


def test_too_many_topic_runs_are_left_to_pyarrow(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [f"q{i % 2} Q0 d{i} 1 1 r" for i in range(10)]
    assert _run(lines) is not None
    monkeypatch.setattr(trec_scan, "_MOST_RUNS", 4)  # ten runs, beyond 4 and 1/16 of the lines
    assert _run(lines) is None


def test_nothing_returned_refers_to_the_buffer() -> None:
    buffer = bytearray(b"q1 Q0 d1 1 2.5 r\n")
    found = trec_scan.scan(buffer, 0, len(buffer), fields=6, value_field=4, whole=False, delimiter=" ")
    buffer[:] = b"xx xx xx x 0.0 x\n"  # the reader reuses its buffers for the next slice
    assert found is not None and found.docno.to_pylist() == ["d1"] and found.run_names == ["q1"]


def test_without_the_compiled_module_nothing_is_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trec_scan, "_trec_scan", None)
    assert not trec_scan.available() and _run(["q1 Q0 d1 1 2.5 r"]) is None


def _hashes_both_ways(values: list[str], *, offset: int, large: bool) -> tuple[list[int], list[int]]:
    chunk = string_array(["pad"] * offset + values).slice(offset)
    if large:
        chunk = chunk.cast(pa.large_string())
    compiled = np.full(len(chunk), 12345, dtype=np.uint64)
    docnos_io._xor_chunk_hashes(chunk, compiled)
    reference = np.full(len(chunk), 12345, dtype=np.uint64) ^ docnos_io._chunk_hashes(chunk)
    return compiled.tolist(), reference.tolist()


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.text("ab09-_.é\u00a0😀", max_size=30), min_size=1, max_size=40),
    offset=st.integers(0, 3),
    large=st.booleans(),
)
def test_the_compiled_docno_hashes_are_numpys(values: list[str], offset: int, large: bool) -> None:
    compiled, reference = _hashes_both_ways(values, offset=offset, large=large)
    assert compiled == reference


@pytest.mark.parametrize("length", [0, 1, 7, 8, 9, 15, 16, 17, 64])
def test_docno_hashes_of_every_length_up_to_the_buffers_end(length: int) -> None:
    # The last docno ends the data buffer: the compiled hash must not read 8 bytes past it.
    text = "".join(random.Random(length).choice("abcdef0123") for _ in range(length))
    for values in ([text], ["x", text], ["", text, ""]):
        compiled, reference = _hashes_both_ways(values, offset=0, large=False)
        assert compiled == reference


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_files_the_scan_reads_equal_the_exact_readers(kind: str, tmp_path: Path) -> None:
    rng = random.Random(7)
    path = tmp_path / kind
    lines = []
    for topic in range(30):
        for rank in range(rng.randint(1, 40)):
            doc = f"doc{rng.randint(0, 10 ** rng.randint(1, 12))}"
            if kind == "run":
                score = rng.choice(
                    [f"{rng.uniform(-50, 50):.6f}", str(rng.randint(-9, 9)), f"{rng.random():.3e}"]
                )
                lines.append(f"{topic} Q0 {doc}-{rank} {rank + 1} {score} tag")
            else:
                lines.append(f"{topic} 0 {doc}-{rank} {rng.choice(['0', '1', '2', '-1'])}")
    path.write_text("\n".join(lines) + "\n")
    data = path.read_bytes()
    fields, value = (6, 4) if kind == "run" else (4, 3)
    scanned = trec_scan.scan(
        data, 0, len(data), fields=fields, value_field=value, whole=kind == "qrels", delimiter=" "
    )
    assert scanned is not None  # the compiled scan read it, not pyarrow
    fast, exact = (read_run, read_run_exact) if kind == "run" else (read_qrels, read_qrels_exact)
    table, reference = fast(path), exact(path)
    assert read_by(table) == {"reader": "fast", "reader_note": "in one piece"}
    assert table.topics == reference.topics and table.topic_code.tolist() == reference.topic_code.tolist()
    assert table.docno.to_pylist() == reference.docno.to_pylist()
    values, expected = (table.score, reference.score) if kind == "run" else (table.rel, reference.rel)
    assert [repr(v) for v in values.tolist()] == [repr(v) for v in expected.tolist()]


def test_the_compiled_helpers_refuse_bounds_outside_their_buffers() -> None:
    from ragmeter import _trec_scan

    out = np.zeros(1, dtype=np.uint64)
    with pytest.raises(ValueError, match="an offset outside the data"):
        _trec_scan.xor_docno_hashes(np.array([0, 9], dtype=np.int32), False, b"abc", out)
    with pytest.raises(ValueError, match="holds 8 bytes"):
        _trec_scan.xor_docno_hashes(np.array([0, 1, 2], dtype=np.int32), False, b"abc", out)
    values = np.empty(4)
    with pytest.raises(ValueError, match="must lie in data"):
        _trec_scan.scan(
            b"q1 Q0 d1 1 2 r\n", 0, 99, 6, 4, False, 32, np.empty(9, np.int32), bytearray(99), values, 8
        )
    with pytest.raises(ValueError, match="a space or tab"):
        _trec_scan.scan(b"q1,Q0", 0, 5, 6, 4, False, ord(","), np.empty(9, np.int32), bytearray(9), values, 8)


def test_no_room_for_the_outputs_leaves_the_piece_to_pyarrow(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_memory(*args: object, **kwargs: object) -> None:
        raise MemoryError

    monkeypatch.setattr(trec_scan.np, "empty", no_memory)
    assert _run(["q1 Q0 d1 1 2.5 r"]) is None
