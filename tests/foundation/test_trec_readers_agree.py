"""The fast TREC reader and the exact one read every file alike: same tables, or the same error.

Hypothesis writes files from random whitespace (runs of spaces, tabs, vertical tabs, form feeds
and carriage returns, mixed; CRLF or LF line ends; blank, comment and indented lines), random
ids (with non-breaking spaces, U+2028, U+0085, NUL and other control characters, ``#``,
accents) and random numbers (plain decimals in every spelling, and ``1_0``, full-width and
Arabic-Indic digits, ``nan``, ``inf``, ``1e400``, hex). The fast path (the compiled scan, or
pyarrow without it; in one piece or in many slices on threads) must give exactly the exact
reader's table, or fail over to it and so raise the exact reader's error.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.io import docnos as docnos_io
from ragmeter.io import trec as trec_io
from ragmeter.io import trec_scan
from ragmeter.io.docnos import chunk_list
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.io.trec_exact import read_qrels_exact, read_run_exact

ID_CHARS = "abqQ019-_#.é\u00a0\u2028\u0085\x00\x07\x1f\x7f"
BLANKS = st.text(" \t\v\f\r", min_size=1, max_size=3).filter(lambda s: s.strip(" \t\v\f\r") == "")
ids = st.one_of(
    st.sampled_from(["q1", "q2", "10", "d1", "d2", "doc-3", "é", "Q0"]),
    st.text(ID_CHARS, min_size=1, max_size=5),
)
scores = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.integers(-50, 50).map(str),
    st.sampled_from(
        [
            *["1.5", "-0.25", ".5", "5.", "+2", "1e3", "1E-2", "2.5e+01", "00017", "-0", "0.000001"],
            *[
                "1_0",
                "\uff11",
                "\u0663",
                "nan",
                "NaN",
                "inf",
                "-Infinity",
                "1e400",
                "0x10",
                "1,5",
                "",
                "e5",
                ".",
            ],
        ]
    ),
)
rels = st.one_of(
    st.integers(-2, 4).map(str),
    st.sampled_from(
        ["1.0", "2.", "+1", "-0", "0.5", "1.5", "-0.5", "1e0", "0x1", "nan", "one", "\uff12", "1_0"]
    ),
)


valid_scores = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.integers(-50, 50).map(str),
    st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: f"{v:.6f}"),  # what the compiled scan reads itself
)
ODD = [
    "  ",
    " \t",
    "\t ",
    "\r",
    "\v",
    "\f",
    "\x00",
    "\x7f",
    "\u0085",
    "\u00a0",
    "\u2028",
    "#",
    "\n",
    "\n\n",
    "1_0",
]


@st.composite
def trec_file(draw: st.DrawFn, kind: str) -> str:
    """A file of random lines; or a regular one (what the fast path reads) with at most one odd spot."""
    regular = draw(st.booleans())
    topics = draw(
        st.lists(st.sampled_from(["q1", "q2", "10", "Q0"]) if regular else ids, min_size=1, max_size=3)
    )
    docs = draw(
        st.lists(st.sampled_from(["d1", "d2", "doc-3", "é"]) if regular else ids, min_size=1, max_size=6)
    )
    delimiter = draw(st.sampled_from([" ", "\t"]))
    lines = []
    for _ in range(draw(st.integers(1, 10))):
        shape = (
            "line" if regular else draw(st.sampled_from(["line"] * 6 + ["blank", "comment", "short", "long"]))
        )
        if shape == "blank":
            lines.append(draw(st.sampled_from(["", " ", "\t", "\r"])))
            continue
        if shape == "comment":
            lines.append("# " + draw(st.text("ab #\t", max_size=6)))
            continue
        topic, doc = draw(st.sampled_from(topics)), draw(st.sampled_from(docs))
        if kind == "run":
            fields = [topic, "Q0", doc, "1", draw(valid_scores if regular else scores), "tag"]
        else:
            fields = [
                topic,
                "0",
                doc,
                draw(st.sampled_from(["-1", "0", "1", "2", "-0", "+1"]) if regular else rels),
            ]
        if shape == "short":
            del fields[draw(st.integers(0, len(fields) - 1))]
        elif shape == "long":
            fields.append("extra")
        if regular:
            lines.append(delimiter.join(fields))
        else:
            gaps = [draw(BLANKS) for _ in fields[1:]]
            lead = draw(st.sampled_from(["", "", " ", "\t"]))
            trail = draw(st.sampled_from(["", "", " ", "\t", "\r"]))
            lines.append(
                lead + fields[0] + "".join(g + f for g, f in zip(gaps, fields[1:], strict=True)) + trail
            )
    end = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    bom = draw(st.sampled_from(["", "", "\ufeff"]))
    text = end.join(lines) + draw(st.sampled_from([end, ""]))
    if regular and draw(st.booleans()):  # one odd spot anywhere
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(ODD)) + text[at + draw(st.integers(0, 1)) :]
    return bom + text


def _read(reader: object, path: Path) -> object:
    try:
        table = reader(path)  # type: ignore[operator]
    except InputError as exc:
        return ("error", str(exc))
    values = table.score if hasattr(table, "score") else table.rel
    docnos = [d for chunk in chunk_list(table.docno) for d in chunk.to_pylist()]
    return (table.topics, table.topic_code.tolist(), docnos, [repr(v) for v in values.tolist()])  # -0.0 too


def _agree(text: str, fast: object, exact: object, slices: bool, parser: str) -> None:
    with tempfile.TemporaryDirectory() as folder, ExitStack() as patches:
        if parser == "pyarrow":  # as if the compiled scan and hashes were not built
            patches.enter_context(mock.patch.object(trec_scan, "_trec_scan", None))
            patches.enter_context(mock.patch.object(docnos_io, "_trec_scan", None))
        if slices:  # the path of large files: many slices parsed on threads
            patches.enter_context(mock.patch.object(trec_io, "_PARALLEL_BYTES", 0))
            patches.enter_context(mock.patch.object(trec_io, "_SLICE_BYTES", 16))
            patches.enter_context(mock.patch.object(trec_io, "_workers", lambda: 3))
        path = Path(folder) / "file.txt"
        path.write_bytes(text.encode("utf-8"))
        assert _read(fast, path) == _read(exact, path), repr(text)


@pytest.mark.parametrize("parser", ["scan", "pyarrow"])
@pytest.mark.parametrize("slices", [False, True], ids=["one piece", "slices"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=trec_file("run"))
def test_the_readers_agree_on_runs(text: str, slices: bool, parser: str) -> None:
    _agree(text, read_run, read_run_exact, slices, parser)


@pytest.mark.parametrize("parser", ["scan", "pyarrow"])
@pytest.mark.parametrize("slices", [False, True], ids=["one piece", "slices"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=trec_file("qrels"))
def test_the_readers_agree_on_qrels(text: str, slices: bool, parser: str) -> None:
    _agree(text, read_qrels, read_qrels_exact, slices, parser)


@pytest.mark.parametrize(
    ("line", "docno"),
    [
        ("q1\tQ0\td1 \t1\t2.0\tt", "d1"),  # a tab next to a space
        ("q1 \t Q0\t\td1\v1\f2.0 t", "d1"),  # every ASCII blank, mixed
        ("q1 Q0 d1\u00a0x 1 2.0 t", "d1\u00a0x"),  # a non-breaking space is part of the id, as in trec_eval
        ("q1 Q0 d1\u2028x 1 2.0 t", "d1\u2028x"),  # so is U+2028 (lines end at \n only)
        ("q1 Q0 d1 1 2.0 t\r", "d1"),  # CRLF
    ],
)
def test_fields_are_split_at_ascii_whitespace_only(line: str, docno: str, tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes((line + "\n").encode())
    for reader in (read_run, read_run_exact):
        assert reader(path).docno.to_pylist() == [docno]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 0 d1 0.5\n", "file:1: relevance '0.5' is not a whole number (trec_eval would read it as 0;"),
        (
            "q1 0 d1 1\nq1 0 d1 2\n",
            "file:2: duplicate judgment for topic 'q1' and document 'd1' (first at line 1)",
        ),
        ("q1 0 d\x001 1\n", "file:1: docid 'd\\x001' contains the control character U+0000"),
        ("q1 0 d1 \uff11\n", "file:1: relevance '１' is not a whole number"),
    ],
)
def test_qrels_errors_name_the_line(text: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_bytes(text.encode())
    for reader in (read_qrels, read_qrels_exact):
        with pytest.raises(InputError) as caught:
            reader(path)
        assert str(caught.value).startswith(f"{tmp_path}/{message}")


def test_trec_compat_truncates_a_fractional_relevance_as_atol_does(tmp_path: Path) -> None:
    path = tmp_path / "qrels"
    path.write_text("q1 0 a 1.9\nq1 0 b -1.5\nq1 0 c 2e1\nq1 0 d 3\n")
    assert read_qrels(path, trec_compat=True).rel.tolist() == [1.0, -1.0, 2.0, 3.0]


@pytest.mark.parametrize("parser", ["scan", "pyarrow"])
def test_a_lone_carriage_return_does_not_end_a_line(parser: str) -> None:
    # Found by the property test above: pyarrow ends a row at a lone \r, trec_eval does not
    # (the second line's words are extra words of the first).
    text = "q1 Q0 doc-3 1 3.1220436356282407e-280 tag\rq1 Q0 doc-3 1 0.0 tag\n"
    _agree(text, read_run, read_run_exact, False, parser)
    _agree(text.replace("3.1220436356282407e-280", "2.5"), read_run, read_run_exact, True, parser)
