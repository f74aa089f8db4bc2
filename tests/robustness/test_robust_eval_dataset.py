"""``ragmeter eval --dataset``: unknown shapes, conflicting sources, bad options and paths are one line.

Every refused case asserts exit 2, one ``Error:`` line naming the file (and line or field), no
traceback and no file left behind; the accepted cases check the numbers.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

DATASET = "samples:\n  - id: q1\n    expected_output: [d1, d2]\n  - id: q2\n    expected_output: [d3]\n"
OUTPUTS = '{"id": "q1", "output": ["d1", "x"]}\n{"id": "q2", "output": ["d3"]}\n'


def _files(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


def _eval(folder: Path, outputs_name: str, outputs: str, *extra: str) -> list[str]:
    _files(folder, {"d.yaml": DATASET, outputs_name: outputs})
    return ["eval", "-d", "d.yaml", "--outputs", outputs_name, "--out", "res", *extra]


# -- outputs in a shape ragmeter does not read ---------------------------------------------------------

ACCEPTED = "accepted: JSON Lines"
UNKNOWN_SHAPES = {
    "list-of-records": ("o.json", '[{"id": "q1", "output": ["d1"]}]', "it is a list"),
    "scalar": ("o.json", "3", "it is a number"),
    "string": ("o.json", '"d1 d2"', "it is a text"),
    "runs-with-text-scores": ("o.json", '{"q1": {"d1": "high"}}', "its first value is an object"),
    "values-are-numbers": ("o.json", '{"q1": 1, "q2": 2}', "its first value is a number, not an output"),
    "values-are-null": ("o.yaml", "q1:\nq2:\n", "its first value is null"),
    "jsonl-keyed-by-qid": ("o.jsonl", '{"q1": ["d1"]}\n', "its first line is an object with keys 'q1'"),
    "jsonl-trec-rows": (
        "o.jsonl",
        '{"qid": "q1", "docid": "d1", "score": 1}\n',
        "keys 'qid', 'docid', 'score'",
    ),
    "jsonl-of-lists": ("o.jsonl", '["d1", "d2"]\n', "its first line is a list"),
}


@pytest.mark.parametrize("case", list(UNKNOWN_SHAPES), ids=list(UNKNOWN_SHAPES))
def test_outputs_in_an_unknown_shape_name_the_accepted_shapes(
    refused: Any, tmp_path: Path, case: str
) -> None:
    name, text, looks = UNKNOWN_SHAPES[case]
    refused(_eval(tmp_path, name, text), f"{name}: not a shape of outputs", looks, ACCEPTED)


BAD_OUTPUTS = {
    "no-output-field": (
        "o.json",
        '{"q1": {"docs": ["d1"]}, "q2": ["d3"]}',
        "o.json (sample 'q1')",
        "output has none of the output fields",
    ),
    "jsonl-no-output-field": (
        "o.jsonl",
        '{"id": "q1", "output": {"hits": ["d1"]}}\n',
        "o.jsonl:1 (sample 'q1')",
        "got 'hits'",
    ),
    "misspelt-field": (
        "o.jsonl",
        '{"id": "q1", "output": {"retreived": ["d1"]}}\n',
        "o.jsonl:1",
        "did you mean 'retrieved'",
    ),
    "second-line-without-id": (
        "o.jsonl",
        '{"id": "q1", "output": ["d1"]}\n{"output": ["d3"]}\n',
        "o.jsonl:2",
        "id",
    ),
    "no-output-key": ("o.jsonl", '{"id": "q1", "retrieved": ["d1"]}\n', "o.jsonl:1", "has no 'output'"),
    "duplicate-id": (
        "o.jsonl",
        '{"id": "q1", "output": ["d1"]}\n{"id": "q1", "output": ["d2"]}\n',
        "o.jsonl:2",
        "second output for sample 'q1'",
    ),
    "unknown-sample": ("o.jsonl", '{"id": "q9", "output": ["d1"]}\n', "o.jsonl:1", "unknown sample id 'q9'"),
    "id-is-a-list": ("o.jsonl", '{"id": ["q1"], "output": ["d1"]}\n', "o.jsonl:1", "id must be"),
    "retrieved-not-a-list": (
        "o.jsonl",
        '{"id": "q1", "output": {"retrieved": 7}}\n',
        "o.jsonl:1",
        "retrieved",
    ),
    "item-id-not-a-string": (
        "o.jsonl",
        '{"id": "q1", "output": {"retrieved": [{"id": [1]}]}}\n',
        "o.jsonl:1",
        "id must be a string or an integer",
    ),
    "item-is-a-float": ("o.jsonl", '{"id": "q1", "output": [1.5]}\n', "o.jsonl:1", "retrieved[0]"),
    "output-string-not-json": (
        "o.jsonl",
        '{"id": "q1", "output": "d1, d2"}\n',
        "o.jsonl:1",
        "not valid JSON",
    ),
    "abstained-not-bool": (
        "o.jsonl",
        '{"id": "q1", "output": {"answer": "a", "abstained": "maybe"}}\n',
        "o.jsonl:1",
        "abstained",
    ),
    "negative-latency": (
        "o.jsonl",
        '{"id": "q1", "output": {"answer": "a", "latency": -1}}\n',
        "o.jsonl:1",
        "latency",
    ),
    "keyed-entry-null": ("o.json", '{"q1": null, "q2": ["d3"]}', "o.json (sample 'q1')", "got NoneType"),
}


@pytest.mark.parametrize("case", list(BAD_OUTPUTS), ids=list(BAD_OUTPUTS))
def test_a_bad_output_names_its_line_and_field(refused: Any, tmp_path: Path, case: str) -> None:
    name, text, where, what = BAD_OUTPUTS[case]
    refused(_eval(tmp_path, name, text), where, what)


# -- two sources of outputs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dataset", "name"),
    [
        ("samples:\n  - id: q1\n    expected_output: [d1]\n    actual_output: [d1]\n", "d.yaml"),
        ('{"samples": [{"id": "q1", "expected_output": ["d1"], "actual_output": ["x"]}]}', "d.json"),
        ('{"id": "q1", "expected_output": ["d1"], "actual_output": {"retrieved": []}}\n', "d.jsonl"),
    ],
    ids=["yaml", "json", "jsonl"],
)
def test_embedded_outputs_and_an_outputs_file_are_refused(
    refused: Any, tmp_path: Path, dataset: str, name: str
) -> None:
    _files(tmp_path, {name: dataset, "o.jsonl": '{"id": "q1", "output": ["d1"]}\n'})
    line = refused(
        ["eval", "-d", name, "--outputs", "o.jsonl"], f"{name}: sample 'q1': actual_output", "o.jsonl"
    )
    assert "keep one source" in line


def test_embedded_outputs_alone_are_read(accepted: Any, tmp_path: Path) -> None:
    _files(tmp_path, {"d.yaml": "- id: q1\n  expected_output: [d1, d2]\n  actual_output: [x, d1]\n"})
    out = json.loads(accepted(["eval", "-d", "d.yaml", "-m", "mrr", "--json"]))
    assert out["aggregate"] == {"mrr": 0.5}


# -- datasets in a shape ragmeter does not read ------------------------------------------------------

BAD_DATASETS = {
    "qrels-mapping": ("d.yaml", "q1: [d1]\nq2: [d3]\n", "d.yaml", "'samples'"),
    "samples-not-a-list": ("d.yaml", "samples: {q1: [d1]}\n", "d.yaml", "expected a list of records"),
    "scalar": ("d.json", "12", "d.json", "expected a list of records"),
    "empty-list": ("d.json", '{"samples": []}', "d.json", "no records"),
    "sample-without-id": ("d.yaml", "- expected_output: [d1]\n", "d.yaml:1", "sample has no 'id'"),
    "sample-is-a-string": ("d.yaml", "- q1\n", "d.yaml:1", "a sample must be an object"),
    "duplicate-id": (
        "d.yaml",
        "- id: q1\n  expected_output: [d1]\n- id: q1\n  expected_output: [d2]\n",
        "d.yaml:3",
        "duplicate sample id 'q1'",
    ),
    "expected-output-number": ("d.yaml", "- id: q1\n  expected_output: 3\n", "d.yaml:1", "expected_output"),
    "misspelt-field": (
        "d.yaml",
        "- id: q1\n  expected_outptu: [d1]\n",
        "d.yaml:1",
        "did you mean 'expected_output'",
    ),
    "id-is-a-mapping": ("d.yaml", "- id: {a: 1}\n  expected_output: [d1]\n", "d.yaml:1", "id"),
    "jsonl-line-not-object": (
        "d.jsonl",
        '{"id": "q1", "expected_output": ["d1"]}\n[1]\n',
        "d.jsonl:2",
        "object",
    ),
}


@pytest.mark.parametrize("case", list(BAD_DATASETS), ids=list(BAD_DATASETS))
def test_a_dataset_in_an_unknown_shape_is_refused(refused: Any, tmp_path: Path, case: str) -> None:
    name, text, where, what = BAD_DATASETS[case]
    _files(tmp_path, {name: text, "o.jsonl": OUTPUTS})
    refused(["eval", "-d", name, "--outputs", "o.jsonl", "--out", "res"], where, what)


# -- paths, options, config and the judge: block --------------------------------------------------------


@pytest.mark.parametrize(
    ("flag", "fragments"),
    [
        ("-d", ("D: is a directory",)),
        ("--outputs", ("D: is a directory",)),
        ("--index-stats", ("D: is a directory",)),
        ("--config", ("D: is a directory, expected a config file",)),
        ("--judge-config", ("D: is a directory",)),
        ("--judge-log", ("'--judge-log'", "D is a directory")),
        ("--history", ("D: is a directory", "run history")),
    ],
)
def test_a_directory_where_a_file_is_expected_says_so(
    refused: Any, tmp_path: Path, flag: str, fragments: tuple[str, ...]
) -> None:
    (tmp_path / "D").mkdir()
    argv = _eval(tmp_path, "o.jsonl", OUTPUTS)
    if flag in ("-d", "--outputs"):
        argv[argv.index(flag) + 1] = "D"
    else:
        argv += [flag, "D"]
    refused(argv, *fragments)


def test_out_under_a_file_is_refused_before_any_work(refused: Any, tmp_path: Path) -> None:
    (tmp_path / "res").write_text("not a folder", encoding="utf-8")
    argv = _eval(tmp_path, "o.jsonl", OUTPUTS)
    refused(argv, "'--out'", "res is not a folder")


@pytest.mark.parametrize(
    ("option", "value", "fragment"),
    [
        ("--relevance-level", "nan", "'--relevance-level'"),
        ("--relevance-level", "inf", "'--relevance-level'"),
        ("--max-cost", "inf", "'--max-cost'"),
        ("--max-cost", "nan", "'--max-cost'"),
        ("--max-cost", "0", "--max-cost"),
        ("-k", "0", "'-k'"),
        ("-k", "many", "'-k'"),
        ("--breakdowns", "bogus", "--breakdowns"),
        ("-m", "ndgc@5", "ndgc"),
        ("--judges", "groundedness", "judge"),
    ],
)
def test_a_bad_option_names_the_option(
    refused: Any, tmp_path: Path, option: str, value: str, fragment: str
) -> None:
    refused([*_eval(tmp_path, "o.jsonl", OUTPUTS), option, value], fragment)


JUDGE_BLOCKS = {
    "text": (
        "judge: yes please\n",
        "judge: must be a mapping of judge settings",
        "got the text 'yes please'",
    ),
    "boolean": ("judge: true\n", "judge: must be a mapping", "got true"),
    "list": ("judge: [a, b]\n", "judge: must be a mapping", "got a list"),
    "typo": (
        "judge:\n  base_url: http://127.0.0.1:9/v1\n  modle: m\n",
        "judge: modle: unknown setting",
        "did you mean 'model'",
    ),
    "no-host": ("judge:\n  base_url: 'http://'\n  model: m\n", "judge: base_url: has no host", "'http://'"),
    "bad-scheme": (
        "judge:\n  base_url: ftp://h/v1\n  model: m\n",
        "base_url: must start with http://",
        "ftp://h/v1",
    ),
    "bad-port": (
        "judge:\n  base_url: http://h:99999/v1\n  model: m\n",
        "base_url: has an invalid port",
        "h:99999",
    ),
    "temperature": (
        "judge:\n  base_url: http://h/v1\n  model: m\n  temperature: 0.5\n",
        "temperature",
        "0.5",
    ),
    "reliability-typo": (
        "judge:\n  base_url: http://h/v1\n  model: m\n  reliability: {fractoin: 0.1}\n",
        "reliability.fractoin: unknown setting",
        "did you mean 'fraction'",
    ),
    "reliability-url": (
        "judge:\n  base_url: http://h/v1\n  model: m\n  reliability: {base_url: 'https://'}\n",
        "reliability.base_url: has no host",
        "https://",
    ),
}


@pytest.mark.parametrize("case", list(JUDGE_BLOCKS), ids=list(JUDGE_BLOCKS))
@pytest.mark.parametrize("where", ["config", "judge-config"])
def test_a_bad_judge_block_says_what_judge_must_be(
    refused: Any, tmp_path: Path, case: str, where: str
) -> None:
    text, *fragments = JUDGE_BLOCKS[case]
    if where == "config":
        _files(tmp_path, {"ragmeter.yaml": text})
        refused(_eval(tmp_path, "o.jsonl", OUTPUTS), "ragmeter.yaml: ", *fragments)
    else:
        _files(tmp_path, {"j.yaml": text})
        refused([*_eval(tmp_path, "o.jsonl", OUTPUTS), "--judge-config", "j.yaml"], "j.yaml: ", *fragments)


def test_a_config_judge_block_with_only_a_cache_path_is_read(accepted: Any, tmp_path: Path) -> None:
    _files(
        tmp_path, {"ragmeter.yaml": "judge:\n  cache_path: c.sqlite\n", "d.yaml": DATASET, "o.jsonl": OUTPUTS}
    )
    out = json.loads(
        accepted(["eval", "-d", "d.yaml", "--outputs", "o.jsonl", "-m", "mrr", "--no-judge", "--json"])
    )
    assert out["aggregate"] == {"mrr": 1.0}


# -- the history database of --record ------------------------------------------------------------------


def _foreign_db(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER, name TEXT)")
        conn.execute("INSERT INTO customers VALUES (1, 'a')")
    conn.close()


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (_foreign_db, "another program's SQLite database (tables: customers)"),
        (lambda p: p.write_text("name,score\na,1\n", encoding="utf-8"), "not a SQLite database"),
        (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 84), "not a usable run history"),
    ],
    ids=["other-program", "csv", "truncated-sqlite"],
)
def test_record_into_a_file_that_is_not_a_ragmeter_history_is_refused(
    refused: Any, tmp_path: Path, make: Any, fragment: str
) -> None:
    make(tmp_path / "h.db")
    refused([*_eval(tmp_path, "o.jsonl", OUTPUTS), "--record", "--history", "h.db"], "h.db: ", fragment)


def test_a_judge_cache_path_naming_another_programs_database_is_refused(refused: Any, tmp_path: Path) -> None:
    _foreign_db(tmp_path / "app.db")
    judge = "judge:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  cache_path: app.db\n"
    _files(tmp_path, {"ragmeter.yaml": judge})
    outputs = '{"id": "q1", "output": {"retrieved": [{"id": "d1", "text": "t"}], "answer": "a"}}\n'
    refused(_eval(tmp_path, "o.jsonl", outputs), "app.db: another program's SQLite database", "judge cache")


# -- unanswerable questions: a failed call is not a hallucination ----------------------------------------


def test_a_failed_call_on_an_unanswerable_question_is_unscored_not_a_hallucination(
    accepted: Any, tmp_path: Path
) -> None:
    _files(
        tmp_path,
        {
            "d.yaml": "- {id: u1, answerable: false}\n- {id: u2, answerable: false}\n- {id: a1}\n",
            "o.jsonl": '{"id": "u1", "output": {"answer": "", "abstained": false, "error": "HTTP 500"}}\n'
            '{"id": "u2", "output": {"answer": "I cannot tell", "abstained": true}}\n'
            '{"id": "a1", "output": {"answer": "", "abstained": true, "timed_out": true}}\n',
        },
    )
    metrics = [
        "hallucination_rate_unanswerable",
        "abstention_accuracy",
        "false_abstention_rate",
        "error_rate",
    ]
    argv = ["eval", "-d", "d.yaml", "--outputs", "o.jsonl", "--json", "--out", "res"]
    out = json.loads(accepted([*argv, *(f"-m{m}" for m in metrics)]))
    assert out["aggregate"] == {
        "hallucination_rate_unanswerable": 0.0,
        "abstention_accuracy": 1.0,
        "false_abstention_rate": None,
        "error_rate": 2 / 3,
    }
    assert out["n_scored"]["hallucination_rate_unanswerable"] == 1
    lines = [json.loads(line) for line in (tmp_path / "res" / "per_query.jsonl").read_text().splitlines()]
    assert lines[0]["unscored"]["hallucination_rate_unanswerable"] == "no answer: the call failed"
    assert lines[2]["unscored"]["false_abstention_rate"] == "no answer: the call failed"
