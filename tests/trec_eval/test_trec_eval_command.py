"""``ragmeter trec_eval``: trec_eval's option syntax, its reading rules, its errors, and hand-worked values.

Hand-worked example used throughout: topic t judges a (2), b (1), c (0) and lists d as
in the pool but unjudged (-1); the run ranks x (unjudged), a, c, d, b.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

QRELS = "t 0 a 2\nt 0 b 1\nt 0 c 0\nt 0 d -1\n"
RUN = "t Q0 x 1 5 r1\nt Q0 a 2 4 r1\nt Q0 c 3 3 r1\nt Q0 d 4 2 r1\nt Q0 b 5 1 r1\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "run")


def values(out: str) -> dict[tuple[str, str], str]:
    return {
        (line.split("\t")[0].strip(), line.split("\t")[1]): line.split("\t")[2] for line in out.splitlines()
    }


def test_hand_worked_measures(files: tuple[str, str], cli: Any) -> None:
    measures = "runid map P.2,5 recip_rank bpref infAP set_P set_F num_nonrel_judged_ret unj.1 relstring Rprec_mult.1"
    argv = ["trec_eval", "-q", *(f"-m{m}" for m in measures.split()), *files]
    code, out, err = cli(argv)
    assert code == 0, err
    got = values(out)
    # relevant a (rank 2) and b (rank 5): AP = (1/2 + 2/5) / 2
    assert got[("map", "t")] == "0.4500"
    assert got[("P_2", "t")] == "0.5000" and got[("P_5", "t")] == "0.4000"
    assert got[("recip_rank", "t")] == "0.5000"
    # bpref: a has no judged non-relevant above it (1), b has c above (1 - 1/1): (1 + 0) / 2
    assert got[("bpref", "t")] == "0.5000"
    # infAP: a at j=1: 1/2 + 1/2 * (0/1) * ...; b at j=4 after c (nonrel) and d (pooled):
    # 1/5 + 4/5 * (3/4) * ((1 + 1e-5) / (2 + 2e-5)) = 0.5; (0.5 + 0.5) / 2
    assert got[("infAP", "t")] == "0.5000"
    assert got[("set_P", "t")] == "0.4000" and got[("set_F", "t")] == "0.5714"
    assert got[("num_nonrel_judged_ret", "t")] == "1"
    assert got[("unj_1", "t")] == "1.0000"
    assert got[("relstring", "t")] == "'-20.1'"
    assert got[("Rprec_mult_1.00", "t")] == "0.5000"  # precision at (long)(1 * 2 + 0.9) = 2
    assert got[("runid", "all")] == "r1"


def test_options_are_read_as_getopt_reads_them(files: tuple[str, str], cli: Any) -> None:
    forms = [
        ["-q", "-m", "P.5", "-l", "2"],
        ["-qmP.5", "-l2"],
        ["--query_eval_wanted", "--measure=P.5", "--level_for_rel=2"],
    ]
    outputs = set()
    for form in forms:
        code, out, err = cli(["trec_eval", *form, *files])
        assert code == 0, (form, err)
        outputs.add(out)
    assert len(outputs) == 1
    assert values(outputs.pop())[("P_5", "t")] == "0.2000"  # -l2: only a is relevant


def test_options_after_the_files_count_too(files: tuple[str, str], cli: Any) -> None:
    code, out, _ = cli(["trec_eval", files[0], files[1], "-m", "map"])
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["map"]


def test_no_summary_and_per_query_only(files: tuple[str, str], cli: Any) -> None:
    code, out, _ = cli(["trec_eval", "-q", "-n", "-m", "map", *files])
    assert code == 0
    assert out == "map                   \tt\t0.4500\n"


def test_judged_only_drops_unjudged_documents(files: tuple[str, str], cli: Any) -> None:
    code, out, _ = cli(["trec_eval", "-J", "-m", "map", "-m", "num_ret", *files])
    assert code == 0
    # ranking a, c, b: AP = (1/1 + 2/3) / 2; x and d are dropped
    assert values(out)[("map", "all")] == "0.8333"
    assert values(out)[("num_ret", "all")] == "3"


def test_collection_size_enters_utility(files: tuple[str, str], cli: Any) -> None:
    code, out, _ = cli(["trec_eval", "-N", "100", "-m", "utility.1,-1,0,1", *files])
    assert code == 0
    # 2 relevant retrieved - 3 others + (100 + 2 - 5 - 2) non-relevant not retrieved
    assert values(out)[("utility_1,-1,0,1", "all")] == "94.0000"


def test_complete_gives_missing_topics_the_stand_in_document(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "q").write_text("t 0 a 1\nu 0 ceci_nest_pas_un_docno 1\nu 0 b 1\n")
    (tmp_path / "r").write_text("t Q0 a 1 1 run\n")
    argv = ["-q", "-c", "-m", "P.1", "-m", "num_ret", "-m", "num_q", str(tmp_path / "q"), str(tmp_path / "r")]
    code, out, err = cli(["trec_eval", *argv])
    assert code == 0, err
    got = values(out)
    # trec_eval ranks its stand-in document for u; here it is judged relevant, so P_1 = 1;
    # num_ret is reset to 0 as trec_eval resets it
    assert got[("P_1", "u")] == "1.0000" and got[("num_ret", "u")] == "0"
    assert got[("P_1", "all")] == "1.0000" and got[("num_q", "all")] == "2"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-m", "nosuch"], "-m nosuch: trec_eval has no such measure"),
        (["-m", "P."], "-m P.: nothing after the '.'"),
        (["-m", "P.5,5"], "a cutoff is given twice"),
        (["-m", "P.0,5"], "a cutoff is not positive"),
        (["-m", "ndcg.1=2,,3=4"], "expected name=value pairs"),
        (["-m", "utility.1,2"], "utility takes 4 coefficients"),
        (["-m", "prefs_simp"], "need trec_eval's -R prefs / qrels_jg input"),
        (["-R", "prefs"], "-R prefs: ragmeter trec_eval reads qrels only"),
        (["-M", "0"], "-M 0: the number of documents per topic must be >= 1"),
        (["-x"], "trec_eval: option -x not recognized"),
    ],
)
def test_bad_options_are_one_clear_error(
    argv: list[str], message: str, files: tuple[str, str], cli: Any
) -> None:
    code, out, err = cli(["trec_eval", *argv, *files])
    assert code == 2
    assert out == ""
    assert err.startswith("Error: ") and message in err and err.count("\n") == 1


def test_file_count_is_checked(files: tuple[str, str], cli: Any) -> None:
    code, _, err = cli(["trec_eval", files[0]])
    assert code == 2 and "needs a qrels file and a run file, got 1" in err


def test_a_document_twice_for_one_topic_is_an_error(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "q").write_text("t 0 a 1\n")
    (tmp_path / "r").write_text("t Q0 a 1 2 r\nt Q0 b 2 1 r\nt Q0 a 3 0.5 r\n")
    code, out, err = cli(["trec_eval", str(tmp_path / "q"), str(tmp_path / "r")])
    assert code == 2 and out == ""
    assert f"{tmp_path / 'r'}:3: topic 't' lists document 'a' twice (first at line 1)" in err


def test_a_repeated_qrels_line_is_an_error(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "q").write_text("t 0 a 1\nt 0 a 0\n")
    (tmp_path / "r").write_text("t Q0 a 1 2 r\n")
    code, _, err = cli(["trec_eval", str(tmp_path / "q"), str(tmp_path / "r")])
    assert code == 2 and ":2:" in err and "duplicate judgment" in err


def test_a_qrels_topic_missing_from_the_run_stops_as_in_trec_eval_10(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "q").write_text("t 0 a 1\nu 0 b 1\n")
    (tmp_path / "r").write_text("t Q0 a 1 2 r\nzzz Q0 a 1 2 r\n")  # zzz: not judged, ignored
    code, out, err = cli(["trec_eval", str(tmp_path / "q"), str(tmp_path / "r")])
    assert code == 2 and out == ""
    assert "qrels topic 'u' has no results in the run" in err and "give -c" in err
    code, out, _ = cli(["trec_eval", "-c", "-m", "num_q", str(tmp_path / "q"), str(tmp_path / "r")])
    assert code == 0 and out == "num_q                 \tall\t2\n"


def test_a_topic_with_only_negative_judgments_has_nothing_judged(tmp_path: Path, cli: Any) -> None:
    # trec_eval 10.0 stops on such a topic when it is the first one evaluated, and otherwise
    # reuses the previous topic's level counts; ragmeter evaluates it as pytrec_eval does
    (tmp_path / "q").write_text("t 0 a 1\nu 0 b -1\n")
    (tmp_path / "r").write_text("t Q0 a 1 2 r\nu Q0 b 1 2 r\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    code, out, err = cli(["trec_eval", "-q", "-m", "num_rel", "-m", "bpref", "-m", "relstring", *files])
    assert code == 0, err
    got = values(out)
    assert (
        got[("num_rel", "u")] == "0" and got[("bpref", "u")] == "0.0000" and got[("relstring", "u")] == "'.'"
    )


def test_relevance_is_read_as_a_whole_number_as_atol_reads_it(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "q").write_text("t 0 a 1.7\nt 0 b 0.9\n")
    (tmp_path / "r").write_text("t Q0 b 1 2 r\nt Q0 a 2 1 r\n")
    code, out, err = cli(
        ["trec_eval", "-m", "relstring", "-q", "-m", "num_rel", *map(str, (tmp_path / "q", tmp_path / "r"))]
    )
    assert code == 0, err
    assert values(out)[("relstring", "t")] == "'01'" and values(out)[("num_rel", "t")] == "1"


def test_comments_only_at_the_start_of_a_line(tmp_path: Path, cli: Any) -> None:
    (tmp_path / "q").write_text("# judged by hand\nt 0 doc#1 1\n")
    (tmp_path / "r").write_text("# run\nt Q0 doc#1 1 2 r\n")
    code, out, err = cli(["trec_eval", "-m", "P.1", str(tmp_path / "q"), str(tmp_path / "r")])
    assert code == 0, err
    assert values(out)[("P_1", "all")] == "1.0000"


def test_help_shows_an_example(cli: Any) -> None:
    code, out, _ = cli(["trec_eval", "--help"])
    assert code == 0 and "Example:" in out and "ragmeter trec_eval -q -m all_trec" in out


def test_the_run_can_come_on_stdin(files: tuple[str, str], cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    class Stdin:
        buffer = io.BytesIO(RUN.encode())

    monkeypatch.setattr(sys, "stdin", Stdin())
    code, out, err = cli(["trec_eval", "-m", "map", "-m", "runid", files[0], "-"])
    assert code == 0, err
    assert out == "runid                 \tall\tr1\nmap                   \tall\t0.4500\n"
