"""Which TREC reader ran, and what each one makes of plain and irregular files.

A plain file must take the fast (columnar) path: a silent fall-back to the exact
line-by-line reader gives the same numbers, slower, so these tests check the path
itself (``reader``, and :func:`~ragmeter.io.trec.read_by`). Irregular files take the exact path and
are read as trec_eval reads them, or rejected with the file, line and field. Each test runs
with the compiled scan and without it (pyarrow's CSV reader).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragmeter.errors import InputError
from ragmeter.io import docnos as docnos_io
from ragmeter.io import trec as trec_io
from ragmeter.io import trec_scan
from ragmeter.io.trec import read_by, read_qrels, read_run
from ragmeter.io.trec_exact import read_qrels_exact, read_run_exact
from ragmeter.matching.trec import match_trec


@pytest.fixture(autouse=True, params=["scan", "pyarrow"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test twice: with the compiled scan (and hashes), and as if they were not built."""
    if request.param == "pyarrow":
        monkeypatch.setattr(trec_scan, "_trec_scan", None)
        monkeypatch.setattr(docnos_io, "_trec_scan", None)
    return str(request.param)


docno = st.text(alphabet="abcXYZ019é-_.:/", min_size=1, max_size=12)
score = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.sampled_from(["1e-3", "2.5E+2", "-0.0", "7."]),
)


@st.composite
def plain_run(draw: st.DrawFn) -> tuple[str, str]:
    sep = draw(st.sampled_from([" ", "\t"]))
    topics = draw(st.lists(st.sampled_from(["q1", "T2", "301", "x"]), min_size=1, max_size=30))
    lines = [sep.join([t, "Q0", draw(docno), str(i + 1), draw(score), "run-1"]) for i, t in enumerate(topics)]
    return sep, "\n".join(lines) + draw(st.sampled_from(["\n", ""]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plain_run())
def test_a_plain_run_takes_the_fast_path_and_reads_as_the_exact_reader_does(
    tmp_path: Path, case: tuple[str, str]
) -> None:
    _, text = case
    path = tmp_path / "run"
    path.write_text(text, encoding="utf-8")
    fast, exact = read_run(path), read_run_exact(path)
    assert (fast.reader, fast.reader_note) == ("fast", "in one piece")
    assert (exact.reader, exact.reader_note) == ("exact", "")
    assert fast.topics == exact.topics
    assert fast.topic_code.tolist() == exact.topic_code.tolist()
    assert fast.docnos() == exact.docnos()
    assert fast.score.tolist() == exact.score.tolist()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from([" ", "\t"]), st.lists(st.tuples(docno, st.integers(-1, 3)), min_size=1, max_size=20))
def test_plain_qrels_take_the_fast_path(tmp_path: Path, sep: str, rows: list[tuple[str, int]]) -> None:
    unique = dict(rows)
    path = tmp_path / "qrels"
    path.write_text(
        "".join(sep.join(["q1", "0", d, str(r)]) + "\n" for d, r in unique.items()), encoding="utf-8"
    )
    fast = read_qrels(path)
    assert (fast.reader, fast.reader_note) == ("fast", "in one piece")
    exact = read_qrels_exact(path)
    assert [str(x) for x in fast.docno.to_pylist()] == [str(x) for x in exact.docno.to_pylist()]
    assert fast.rel.tolist() == exact.rel.tolist()


def write_run(path: Path, topics: int, depth: int) -> Path:
    path.write_text(
        "".join(f"q{t} Q0 d{t}-{r} {r + 1} {depth - r} sys\n" for t in range(topics) for r in range(depth)),
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("workers", [2, 3])
def test_a_large_plain_run_is_read_in_slices_that_cover_it_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    monkeypatch.setattr(trec_io, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(trec_io, "_SLICE_BYTES", 500)
    monkeypatch.setattr(trec_io, "_workers", lambda: workers)
    path = write_run(tmp_path / "run", topics=7, depth=23)
    size = path.stat().st_size
    run = read_run(path)
    expected = workers * -(-size // (500 * workers))
    assert (run.reader, run.reader_note) == ("fast", f"in {expected} slices")
    exact = read_run_exact(path)
    assert run.docnos() == exact.docnos()
    assert run.score.tolist() == exact.score.tolist()
    assert run.topic_code.tolist() == exact.topic_code.tolist()
    assert run.unique_pairs


def test_a_short_slice_read_into_a_thread_s_reused_buffer_is_read_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each thread reuses one buffer, as long as the longest slice: a shorter slice leaves the
    previous slice's bytes (or zeros) behind it, which must not be parsed."""
    monkeypatch.setattr(trec_io, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(trec_io, "_SLICE_BYTES", 400)
    monkeypatch.setattr(trec_io, "_workers", lambda: 2)
    lines = [f"q1 Q0 {'d' * 1500} 1 9.5 r\n"]  # the first slice runs to the end of this line
    lines += [f"q{t} Q0 d{i} {i} {40 - i}.5 r\n" for t in range(2, 9) for i in range(20)]
    path = tmp_path / "run"
    path.write_text("".join(lines))
    run = read_run(path)
    assert run.reader == "fast" and run.reader_note.endswith("slices")
    exact = read_run_exact(path)
    assert run.docnos() == exact.docnos()
    assert run.score.tolist() == exact.score.tolist()
    assert run.topic_code.tolist() == exact.topic_code.tolist()


def test_one_worker_or_a_small_file_reads_in_one_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_run(tmp_path / "run", topics=3, depth=5)
    monkeypatch.setattr(trec_io, "_PARALLEL_BYTES", path.stat().st_size + 1)
    monkeypatch.setattr(trec_io, "_workers", lambda: 4)
    assert read_run(path).reader_note == "in one piece"
    monkeypatch.setattr(trec_io, "_PARALLEL_BYTES", path.stat().st_size)
    assert read_run(path).reader_note != "in one piece"
    monkeypatch.setattr(trec_io, "_workers", lambda: 1)
    assert read_run(path).reader_note == "in one piece"


def test_read_by_names_the_reader_of_each_file(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", topics=2, depth=3)
    (tmp_path / "qrels").write_text("q0 0 d0-1 1\n# judged by hand\nq1 0 d1-0 2\n", encoding="utf-8")
    assert read_by(read_run(run)) == {"reader": "fast", "reader_note": "in one piece"}
    assert read_by(read_qrels(tmp_path / "qrels")) == {
        "reader": "exact",
        "reader_note": "a comment line",
    }


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("# a header\nq1 Q0 d1 1 1.0 r\n", "the first line is blank, a comment or starts with white space"),
        (" q1 Q0 d1 1 1.0 r\n", "the first line is blank, a comment or starts with white space"),
        ("\nq1 Q0 d1 1 1.0 r\n", "the first line is blank, a comment or starts with white space"),
        ("q1 Q0 d1 1 1.0 r\n#q Q0 d2 2 0.5 comment\nq1 Q0 d3 3 0.2 r\n", "a comment line"),
        (
            "q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r extra words\n",
            "pyarrow: CSV parse error: Expected 6 columns, got 8: q1 Q0 d2 2 0.5 r extra words",
        ),
    ],
)
def test_irregular_runs_take_the_exact_path_and_say_why(tmp_path: Path, text: str, note: str) -> None:
    path = tmp_path / "run"
    path.write_text(text, encoding="utf-8")
    run = read_run(path)
    assert (run.reader, run.reader_note) == ("exact", note)
    assert run.path == str(path)


def test_qrels_topics_index_the_run_topics(tmp_path: Path) -> None:
    path = tmp_path / "qrels"
    path.write_text("q2 0 d 1\n# by hand\nq1 0 d 1\n", encoding="utf-8")
    qrels = read_qrels(path)
    assert (qrels.reader, qrels.path) == ("exact", str(path))
    assert qrels.topic_index(["q1", "x", "q2"]).tolist() == [1, -1, 0]  # -1: not judged


def test_a_comment_line_in_mid_file_is_skipped_not_read_as_a_topic(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_text("q1 Q0 d1 1 1.0 r\n#q Q0 d2 2 0.5 comment\nq2 Q0 d3 1 0.2 r\n", encoding="utf-8")
    run = read_run(path)
    assert run.topics == ["q1", "q2"] and run.docnos() == ["d1", "d3"]
    qrels = tmp_path / "qrels"
    qrels.write_text("q1 0 d1 1\n# 0 d2 1\nq2 0 d3 2\n", encoding="utf-8")
    assert read_qrels(qrels).topics == ["q1", "q2"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("q1 Q0 d1 1 1.0 r\nq1 Q0  1 0.5 r\n", ":2: expected 6 fields (qid Q0 docid rank score tag), got 5"),
        ("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 nan r\n", ":2: score must be a finite number, got 'nan'"),
        ("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 -inf r\n", ":2: score must be a finite number, got '-inf'"),
        ("q1 Q0 d1 1 1.0 r\n Q0 d2 2 0.5 r\n", ":2: expected 6 fields (qid Q0 docid rank score tag), got 5"),
        ("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 high r\n", ":2: score 'high' is not a plain decimal number"),
        ("# only a comment\n\n", ": file is empty (no judgment or result lines)"),
    ],
)
def test_irregular_runs_that_trec_eval_rejects_name_the_line(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "run"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_run(path)
    assert str(caught.value) == f"{path}{error}"


def test_extra_words_in_a_run_are_ignored_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_text("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 2 0.5 r extra words\n", encoding="utf-8")
    run = read_run(path)
    assert run.docnos() == ["d1", "d2"] and run.score.tolist() == [1.0, 0.5]
    assert run.notes == [f"{path}: 1 line(s) have more than 6 fields; the extra words were ignored"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("q1 0 d1 1\nq1 0 d2 1 extra\n", ":2: expected 4 fields (qid iter docid rel), got 5"),
        ("q1 0 d1 1\nq1 0  1\n", ":2: expected 4 fields (qid iter docid rel), got 3"),
        (
            "q1 0 d1 1\nq1 0 d1 2\n",
            ":2: duplicate judgment for topic 'q1' and document 'd1' (first at line 1)",
        ),
        (
            "q1 0 d1 1\n\nq1 0 d1 1\n",
            ":3: duplicate judgment for topic 'q1' and document 'd1' (first at line 1)",
        ),
        ("q1 0 d1 one\n", ":1: relevance 'one' is not a whole number"),
    ],
)
def test_irregular_qrels_name_the_line(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "qrels"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_qrels(path)
    assert str(caught.value) == f"{path}{error}"


def repeats_in(path: Path, qrels_path: Path) -> tuple[int, bool, int]:
    qrels, run = read_qrels(qrels_path), read_run(path)
    exact = match_trec(qrels, read_run_exact(path)).n_duplicates
    return match_trec(qrels, run).n_duplicates, run.unique_pairs, exact


@pytest.mark.parametrize("topic", [0, 2, 4])
@pytest.mark.parametrize(("first", "second"), [(0, 3), (0, 5), (2, 5), (5, 0)])
def test_a_repeated_docno_is_found_wherever_it_sits_in_its_topic(
    tmp_path: Path, topic: int, first: int, second: int
) -> None:
    # Five topics of six lines each (the shape of a real run: one length for every topic).
    lines = [[f"q{t} Q0 d{t}-{r} {r + 1} {10 - r} sys" for r in range(6)] for t in range(5)]
    lines[topic][second] = lines[topic][second].replace(f"d{topic}-{second} ", f"d{topic}-{first} ")
    path = tmp_path / "run"
    path.write_text("".join(line + "\n" for topic_lines in lines for line in topic_lines), encoding="utf-8")
    (tmp_path / "qrels").write_text("".join(f"q{t} 0 d{t}-{first} 1\n" for t in range(5)), encoding="utf-8")
    assert read_run(path).reader == "fast"
    assert repeats_in(path, tmp_path / "qrels") == (1, False, 1)


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_a_repeat_across_a_slice_boundary_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: int
) -> None:
    monkeypatch.setattr(trec_io, "_PARALLEL_BYTES", 0)
    monkeypatch.setattr(trec_io, "_SLICE_BYTES", 100 * cut)
    monkeypatch.setattr(trec_io, "_workers", lambda: 2)
    # One long topic: its first and last lines name the same document, slices apart.
    rows = [f"q1 Q0 d{r} {r + 1} {100 - r} sys" for r in range(60)]
    rows[-1] = rows[-1].replace("d59 ", "d0 ")
    path = tmp_path / "run"
    path.write_text("".join(r + "\n" for r in rows) + "q2 Q0 x 1 1 sys\n", encoding="utf-8")
    (tmp_path / "qrels").write_text("q1 0 d0 1\nq2 0 x 1\n", encoding="utf-8")
    run = read_run(path)
    assert run.reader == "fast" and run.reader_note.endswith("slices")
    assert repeats_in(path, tmp_path / "qrels") == (1, False, 1)


def test_a_file_without_repeats_is_marked_unique(tmp_path: Path) -> None:
    path = write_run(tmp_path / "run", topics=4, depth=5)
    (tmp_path / "qrels").write_text("q0 0 d0-0 1\n", encoding="utf-8")
    assert repeats_in(path, tmp_path / "qrels") == (0, True, 0)
    assert np.all(read_run(path).topic_code == np.repeat(np.arange(4), 5))


@pytest.mark.parametrize("slices", [False, True], ids=["one piece", "slices"])
def test_a_run_read_with_its_qrels_carries_the_judged_lines_found_while_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slices: bool
) -> None:
    if slices:
        monkeypatch.setattr(trec_io, "_PARALLEL_BYTES", 0)
        monkeypatch.setattr(trec_io, "_SLICE_BYTES", 100)
        monkeypatch.setattr(trec_io, "_workers", lambda: 2)
    path = write_run(tmp_path / "run", topics=3, depth=4)  # lines: q0 d0-0..d0-3, q1 ..., q2 ...
    (tmp_path / "qrels").write_text("q2 0 d2-3 2\nq0 0 d0-1 1\nq9 0 d0-1 1\nq1 0 d0-2 1\n", encoding="utf-8")
    qrels = read_qrels(tmp_path / "qrels")
    run = read_run(path, qrels=qrels)
    assert run.reader == "fast" and run.reader_note.endswith("slices" if slices else "one piece")
    assert run.judged is not None and run.judged[0] is qrels
    # Line 1 (q0 d0-1) is judgment 1 and line 11 (q2 d2-3) judgment 0; q1 d0-2 is not a run line.
    assert (run.judged[1].tolist(), run.judged[2].tolist()) == ([1, 11], [1, 0])
    assert read_run(path).judged is None


@pytest.mark.parametrize(
    ("rels", "values", "note"),
    [
        (["+2", "-0", "-1", "007"], [2.0, 0.0, -1.0, 7.0], "in one piece"),  # signed whole numbers are plain
        (["1", "1.0"], [1.0, 1.0], "a relevance that is not a plain whole number"),
        (["1", "99999999999999999999"], [1.0, 1e20], "a relevance beyond 64 bits"),
        (["1", "+-1"], None, "a relevance that is not a plain whole number"),
    ],
)
def test_qrels_relevance_takes_the_fast_path_exactly_when_it_is_a_plain_whole_number(
    tmp_path: Path, rels: list[str], values: list[float] | None, note: str
) -> None:
    path = tmp_path / "qrels"
    path.write_text("".join(f"q1 0 d{i} {rel}\n" for i, rel in enumerate(rels)), encoding="utf-8")
    if values is None:  # the exact reader names the line
        with pytest.raises(InputError, match=r":2: relevance '\+-1' is not a whole number"):
            read_qrels(path)
        return
    qrels = read_qrels(path)
    assert (qrels.reader, qrels.reader_note) == ("fast" if note == "in one piece" else "exact", note)
    assert qrels.rel.tolist() == values == read_qrels_exact(path).rel.tolist()
