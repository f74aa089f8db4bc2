"""Odd but valid inputs are accepted, with the right numbers.

Unicode ids, U+2028/U+2029/U+0085 inside JSON strings, CRLF line ends, a UTF-8 byte-order mark,
tabs and mixed blanks in TREC files, ids that YAML 1.1 would have turned into numbers or booleans.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

QRELS = "q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 2\nq2 0 d4 0\n"
RUN = "q1 Q0 d9 1 3.0 r\nq1 Q0 d1 2 2.0 r\nq2 Q0 d3 1 5.0 r\nq2 Q0 d4 2 1.0 r\n"
EXPECTED = {"map": 0.625, "precision@1": 0.5}  # q1: AP (1/2)/2 = 0.25, P@1 0; q2: AP 1, P@1 1


def _trec(
    accepted: Any, tmp_path: Path, qrels: bytes, run: bytes, *flags: str, rname: str = "run.txt"
) -> Any:
    (tmp_path / "qrels.txt").write_bytes(qrels)
    (tmp_path / rname).write_bytes(run)
    out = accepted(
        ["eval", "--qrels", "qrels.txt", "--run", rname, "-m", "map", "-m", "P@1", "--json", *flags]
    )
    return json.loads(out)


LAYOUTS = {
    "tabs": lambda t: t.replace(" ", "\t"),
    "mixed blanks": lambda t: t.replace(" ", " \t ", 2).replace(" Q0 ", "\tQ0 \t"),
    "vertical tab and form feed": lambda t: t.replace(" ", "\v", 1).replace(" 1\n", "\f1\n"),
    "CRLF": lambda t: t.replace("\n", "\r\n"),
    "byte-order mark": lambda t: "\ufeff" + t,
    "CRLF, BOM and tabs": lambda t: "\ufeff" + t.replace("\n", "\r\n").replace(" ", "\t"),
    "no final newline": lambda t: t.rstrip("\n"),
    "comments and blank lines": lambda t: "# header\n\n" + t.replace("\n", "\n\n", 1),
    "indented lines": lambda t: "  " + t.replace("\n", "\n\t ", 1),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_trec_files_in_any_blank_layout_give_the_same_numbers(
    accepted: Any, tmp_path: Path, layout: str
) -> None:
    change = LAYOUTS[layout]
    result = _trec(accepted, tmp_path, change(QRELS).encode(), change(RUN).encode())
    assert result["aggregate"] == EXPECTED


def test_unicode_ids_with_a_non_breaking_space_and_u2028_match_in_both_files(
    accepted: Any, tmp_path: Path
) -> None:
    ids = {"q1": "é\u00a01", "d1": "文書\u20281", "d3": "d\u00853"}  # U+0085 only in ids of JSON, not of TREC
    ids.pop("d3")
    qrels, run = QRELS, "# the exact reader reads this file, the fast one the qrels\n" + RUN
    for old, new in ids.items():
        qrels, run = qrels.replace(old + " ", new + " "), run.replace(old + " ", new + " ")
    result = _trec(accepted, tmp_path, qrels.encode(), run.encode())
    assert result["aggregate"] == EXPECTED
    assert set(result["per_query"]) == {"é\u00a01", "q2"}


def test_a_gzip_run_is_read(accepted: Any, tmp_path: Path) -> None:
    result = _trec(accepted, tmp_path, QRELS.encode(), gzip.compress(RUN.encode()), rname="run.gz")
    assert result["aggregate"] == EXPECTED


def test_trec_compat_truncates_a_fractional_relevance(accepted: Any, tmp_path: Path) -> None:
    qrels = QRELS.replace("q2 0 d3 2", "q2 0 d3 0.9")  # atol: 0, so q2 has no relevant document
    result = _trec(accepted, tmp_path, qrels.encode(), RUN.encode(), "--trec-compat")
    assert result["aggregate"] == {"map": 0.125, "precision@1": 0.0}


DATASET = """samples:
  - id: 0017
    expected_output: [0017, 1:30]
    metadata: {expected_answer: no}
  - id: 1:30
    expected_output: {no: 2, 0x1F: 1}
  - id: yes
    expected_output: [2024-01-01]
"""


@pytest.mark.parametrize("line_end", ["\n", "\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize("bom", ["", "\ufeff"], ids=["no BOM", "BOM"])
def test_yaml_ids_and_answers_keep_their_text(accepted: Any, tmp_path: Path, line_end: str, bom: str) -> None:
    (tmp_path / "d.yaml").write_text(bom + DATASET.replace("\n", line_end), encoding="utf-8", newline="")
    outputs = [
        {"id": "0017", "output": {"retrieved": ["1:30", "0017"], "answer": "no"}},
        {"id": "1:30", "output": ["0x1F", "no"]},
        {"id": "yes", "output": ["2024-01-01"]},
    ]
    text = line_end.join(json.dumps(o) for o in outputs) + line_end
    (tmp_path / "o.jsonl").write_text(bom + text, encoding="utf-8", newline="")
    out = accepted(
        ["eval", "-d", "d.yaml", "--outputs", "o.jsonl", "-m", "hit@1", "-m", "recall@2", "--json"]
    )
    result = json.loads(out)
    assert result["per_query"] == {
        "0017": {"hit@1": 1.0, "recall@2": 1.0},
        "1:30": {"hit@1": 1.0, "recall@2": 1.0},
        "yes": {"hit@1": 1.0, "recall@2": 1.0},
    }


def test_line_and_paragraph_separators_inside_json_strings_are_read(accepted: Any, tmp_path: Path) -> None:
    samples = [
        {"id": "q\u20281", "expected_output": ["d\u20291"], "input": "a\u0085b"},
        {"id": "q2", "expected_output": ["d2"]},
    ]
    (tmp_path / "d.jsonl").write_text(
        "\n\n".join(json.dumps(s, ensure_ascii=False) for s in samples) + "\n", encoding="utf-8"
    )
    outputs = [{"id": "q\u20281", "output": {"retrieved": ["x", "d\u20291"], "answer": "l1\u2028l2"}}]
    outputs.append({"id": "q2", "output": ["d2"]})
    (tmp_path / "o.jsonl").write_text("".join(json.dumps(o, ensure_ascii=False) + "\r\n" for o in outputs))
    result = json.loads(accepted(["eval", "-d", "d.jsonl", "--outputs", "o.jsonl", "-m", "mrr", "--json"]))
    assert result["per_query"] == {"q\u20281": {"mrr": 0.5}, "q2": {"mrr": 1.0}}


SYSTEM = '''
def answer(sample, k):
    """Answers with U+2028, U+2029 and U+0085 in its ids and text, as any system may."""
    doc = "doc\\u2028" + sample["id"]
    return {"retrieved": [{"id": doc, "text": "one\\u2028two\\u2029three\\x85four"}], "answer": "a\\u2028b"}
'''


def test_a_run_whose_system_answers_with_u2028_is_read_resumed_and_reported(
    accepted: Any, tmp_path: Path
) -> None:
    (tmp_path / "u2028_system.py").write_text(SYSTEM, encoding="utf-8")
    samples = [
        {"id": f"q{i}", "input": f"question {i}", "expected_output": [f"doc\u2028q{i}"]} for i in range(3)
    ]
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    (tmp_path / "s.yaml").write_text(
        "name: s\ndataset: d.jsonl\nsystem: {type: python, function: 'u2028_system:answer', python_path: ['.']}\n"
        "metrics: [hit@1]\nk: 1\nresults_dir: out\n",
        encoding="utf-8",
    )
    first = json.loads(accepted(["run", "s.yaml", "--no-record", "--no-report", "--json", "-q"]))
    assert first["aggregate"] == {"hit@1": 1.0}
    journal = tmp_path / "out" / "outputs.jsonl"
    lines = journal.read_bytes().split(b"\n")
    assert "\u2028".encode() in lines[0], "the outputs are written as they are (not escaped)"
    journal.write_bytes(lines[0] + b"\n")  # as if the run had been stopped after one question
    resumed = json.loads(
        accepted(["run", "s.yaml", "--resume", "--no-record", "--no-report", "--json", "-q"])
    )
    assert resumed["aggregate"] == {"hit@1": 1.0} and resumed["n_queries"] == 3
    again = json.loads(
        accepted(["eval", "-d", "d.jsonl", "--outputs", "out/outputs.jsonl", "-m", "hit@1", "--json"])
    )
    assert again["per_query"] == {f"q{i}": {"hit@1": 1.0} for i in range(3)}
    assert "wrote" in accepted(["report", "out", "--out", "r.html"])


def test_saved_results_with_a_byte_order_mark_and_crlf_are_read(
    accepted: Any, results_folder: Any, tmp_path: Path
) -> None:
    for name, value in (("a", 0.5), ("b", 1.0)):
        results_folder(tmp_path / name)
        for file in ("metrics.json", "per_query.jsonl"):
            path = tmp_path / name / file
            text = path.read_bytes().replace(b"0.5", str(value).encode())
            path.write_bytes(b"\xef\xbb\xbf" + text.replace(b"\n", b"\r\n"))
    assert "wrote" in accepted(["report", "a", "--out", "a.html"])
    compared = json.loads(accepted(["compare", "a", "b", "--resamples", "100", "--json"]))
    assert compared["n_shared_queries"] == 1
    (pair,) = compared["comparisons"]
    assert pair["metrics"][0]["delta"] == 0.5


def test_a_config_and_a_suite_with_a_byte_order_mark_and_crlf_are_read(accepted: Any, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_bytes(b"\xef\xbb\xbfmetrics:\r\n  retrieval:\r\n    default_k: 1\r\n")
    (tmp_path / "d.yaml").write_text("samples:\n  - {id: q1, expected_output: [d1]}\n", encoding="utf-8")
    (tmp_path / "o.jsonl").write_text('{"id": "q1", "output": ["x", "d1"]}\n', encoding="utf-8")
    result = json.loads(
        accepted(
            ["eval", "-d", "d.yaml", "--outputs", "o.jsonl", "-m", "hit", "--config", "c.yaml", "--json"]
        )
    )
    assert result["aggregate"] == {"hit@1": 0.0}, "default_k 1 from the config: d1 is second"


def test_a_trace_result_whose_url_urlsplit_refuses_is_kept_as_written(accepted: Any, tmp_path: Path) -> None:
    result = {"url": "https://a.examp]le/x", "title": "A"}
    trace = {
        "trace_id": "t1",
        "turns": [{"iterations": [{"searches": [{"query": "q", "results": [result]}]}]}],
    }
    (tmp_path / "t.jsonl").write_text(json.dumps(trace) + "\n", encoding="utf-8")
    (tmp_path / "l.jsonl").write_text(json.dumps({"trace_id": "t1", "url": result["url"], "gain": 3}) + "\n")
    out = json.loads(accepted(["agentic", "-t", "t.jsonl", "-l", "l.jsonl", "--json"]))
    assert out["aggregate"]["averages_at_n"]["CG"] == 3.0
