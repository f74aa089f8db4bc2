"""The CLI's error messages, exactly, and its documentation.

Every bad input gives exactly one line on stderr, ``Error: <where>: <what>``, exit code 2, nothing
on stdout and no traceback (``--debug`` shows one). Rows marked xfail are findings: the message
asserted is the one ragmeter should print.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from ragmeter.cli import app, main
from ragmeter.metrics.registry import METRICS

SAMPLES = "samples:\n  - id: q-1\n    expected_output: [a, b]\n  - id: q-2\n    expected_output: {a: 2}\n"
OUTPUTS = '{"id": "q-1", "output": ["a", "x"]}\n{"id": "q-2", "output": ["x", "a"]}\n'
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"
RUN = "q1 Q0 d1 1 1.5 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d1 1 1.0 r\n"
GOOD = {"samples.yaml": SAMPLES, "outputs.jsonl": OUTPUTS, "qrels.trec": QRELS, "run.trec": RUN}
DATASET_ARGS = ["eval", "--dataset", "samples.yaml", "--outputs", "outputs.jsonl"]
TREC_ARGS = ["eval", "--qrels", "qrels.trec", "--run", "run.trec"]


def finding(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"finding: {reason}")


# (id, files written over GOOD, argv, the exact stderr line)
CASES: list[object] = [
    pytest.param(
        {"run.trec": "q1 Q0 d1 1 1.5 r\nq1 Q0 d2 2 NaN r\n"},
        TREC_ARGS,
        "Error: run.trec:2: score must be a finite number, got 'NaN'",
        id="nan-score",
    ),
    pytest.param(
        {"run.trec": "q1 Q0 d1 1 1.5 r\nq1 Q0 d2 2 0.5 r\nq1 Q0 d3 3 -inf r\n"},
        TREC_ARGS,
        "Error: run.trec:3: score must be a finite number, got '-inf'",
        id="inf-score",
    ),
    pytest.param(
        {"run.trec": "q1 Q0 d1 1 1.5 r\nq1 Q0 d2 2 0.5\n"},
        TREC_ARGS,
        "Error: run.trec:2: expected 6 fields (qid Q0 docid rank score tag), got 5",
        id="run-5-fields",
    ),
    pytest.param(
        {"run.trec": "q1 Q0 d1 1 high r\n"},
        TREC_ARGS,
        "Error: run.trec:1: score 'high' is not a plain decimal number",
        id="run-non-numeric-score",
    ),
    pytest.param(
        {"qrels.trec": "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n"},
        TREC_ARGS,
        "Error: qrels.trec:3: duplicate judgment for topic 'q1' and document 'd1' (first at line 1)",
        id="qrels-duplicate",
    ),
    pytest.param(
        {"qrels.trec": "q1 0 d1 1\nq1 d2 0\n"},
        TREC_ARGS,
        "Error: qrels.trec:2: expected 4 fields (qid iter docid rel), got 3",
        id="qrels-3-fields",
    ),
    pytest.param(
        {"qrels.trec": "q1 0 d1 yes\n"},
        TREC_ARGS,
        "Error: qrels.trec:1: relevance 'yes' is not a whole number",
        id="qrels-non-numeric",
    ),
    pytest.param(
        {"outputs.jsonl": '{"id": "q-1", "output": ["a"]}\n{"id": "q-9", "output": ["a"]}\n'},
        DATASET_ARGS,
        "Error: outputs.jsonl:2: output for unknown sample id 'q-9' (not in the dataset)",
        id="unknown-sample-id-jsonl",
    ),
    pytest.param(
        {"outputs.json": '{"q-1": ["a"], "17": ["a"]}'},
        ["eval", "--dataset", "samples.yaml", "--outputs", "outputs.json"],
        "Error: outputs.json (sample '17'): output for unknown sample id '17' (not in the dataset)",
        id="unknown-sample-id-json",
    ),
    pytest.param(
        {
            "samples.yaml": "samples:\n  - id: q-1\n    expected_output: [a]\n  - id: q-1\n    expected_output: [b]\n"
        },
        ["eval", "--dataset", "samples.yaml"],
        "Error: samples.yaml:4: duplicate sample id 'q-1' (first at samples.yaml:2)",
        id="duplicate-sample-id",
    ),
    pytest.param(
        {"outputs.jsonl": '{"id": "q-1", "output": ["a"]}\n{"id": "q-1", "output": ["b"]}\n'},
        DATASET_ARGS,
        "Error: outputs.jsonl:2: second output for sample 'q-1' (first at outputs.jsonl:1)",
        id="duplicate-output-id-jsonl",
    ),
    pytest.param(
        {"outputs.json": '{"q-1": ["a"], "q-1": ["b"]}'},
        ["eval", "--dataset", "samples.yaml", "--outputs", "outputs.json"],
        "Error: outputs.json:1: duplicate key 'q-1' in one object",
        id="duplicate-output-id-json",
    ),
    pytest.param(
        {"samples.yaml": "samples:\n  - id: q-1\n    expected_output: {a: 1, a: 2}\n"},
        ["eval", "--dataset", "samples.yaml"],
        "Error: samples.yaml:3: duplicate key 'a' (first at line 3)",
        id="duplicate-key-in-gain-map",
    ),
    pytest.param(
        {"samples.yaml": "samples:\n  - id: q-1\n    expected_output: [a, a]\n"},
        ["eval", "--dataset", "samples.yaml"],
        "Error: samples.yaml:2 (sample 'q-1'): expected_output: id 'a' is listed twice",
        id="duplicate-id-in-truth-list",
    ),
    pytest.param(
        {"outputs.jsonl": '{"id": "q-1", "output": ["a"]}\n{"id": "q-2", "output": ["b"\n'},
        DATASET_ARGS,
        "Error: outputs.jsonl:2: invalid JSON (Expecting ',' delimiter at column 29)",
        id="invalid-json-line",
    ),
    pytest.param(
        {"outputs.jsonl": '{"id": "q-1"}\n'},
        DATASET_ARGS,
        "Error: outputs.jsonl:1: record for sample 'q-1' has no 'output'",
        id="output-record-without-output",
    ),
    pytest.param(
        {"outputs.jsonl": '{"id": "q-1", "output": 5}\n'},
        DATASET_ARGS,
        "Error: outputs.jsonl:1 (sample 'q-1'): output must be {\"retrieved\": [...]}, an id array, "
        "or that JSON as a string; got int",
        id="output-wrong-type",
    ),
    pytest.param(
        {"outputs.jsonl": '{"id": "q-1", "output": {"retrieved": [{"id": "a", "score": NaN}]}}\n'},
        DATASET_ARGS,
        "Error: outputs.jsonl:1: output.retrieved[0].score: NaN is not a number JSON allows "
        "(numbers must be finite; write null for no value)",
        id="output-nan-score",
    ),
    pytest.param(
        {"samples.yaml": "samples:\n  - id: q-1\n    expected_output: a: b\n"},
        ["eval", "--dataset", "samples.yaml"],
        "Error: samples.yaml:3: invalid YAML (mapping values are not allowed here)",
        id="yaml-syntax-error",
    ),
    pytest.param(
        {"samples.yaml": "samples:\n  - expected_output: [a]\n"},
        ["eval", "--dataset", "samples.yaml"],
        "Error: samples.yaml:2: sample has no 'id'",
        id="sample-without-id",
    ),
    pytest.param(
        {"samples.yaml": ""},
        ["eval", "--dataset", "samples.yaml"],
        "Error: samples.yaml: file is empty",
        id="empty-dataset",
    ),
    pytest.param(
        {"samples.yaml": "samples: []\n"},
        ["eval", "--dataset", "samples.yaml"],
        "Error: samples.yaml: no records under 'samples'",
        id="dataset-without-samples",
    ),
    pytest.param(
        {"outputs.jsonl": "\n"}, DATASET_ARGS, "Error: outputs.jsonl: file is empty", id="empty-outputs"
    ),
    pytest.param(
        {"run.trec": ""},
        TREC_ARGS,
        "Error: run.trec: file is empty (no judgment or result lines)",
        id="empty-run",
    ),
    pytest.param(
        {"qrels.trec": "# only a comment\n\n"},
        TREC_ARGS,
        "Error: qrels.trec: file is empty (no judgment or result lines)",
        id="empty-qrels",
    ),
    pytest.param(
        {}, ["eval", "--dataset", "missing.yaml"], "Error: missing.yaml: file not found", id="missing-dataset"
    ),
    pytest.param(
        {},
        ["eval", "--qrels", "qrels.trec", "--run", "missing.trec"],
        "Error: missing.trec: file not found",
        id="missing-run",
    ),
    pytest.param(
        {},
        ["eval", "--dataset", "."],
        "Error: .: is a directory, expected a file, a BEIR folder (qrels/<split>.tsv) or a saved Hugging "
        "Face dataset (save_to_disk)",
        id="dataset-is-a-directory",
    ),
    pytest.param(
        {},
        [*DATASET_ARGS, "-k", "0"],
        "Error: Invalid value for '-k': Input should be greater than or equal to 1",
        id="k-zero",
    ),
    pytest.param(
        {},
        [*DATASET_ARGS, "-m", "ndgc@10"],
        "Error: unknown metric 'ndgc@10'; did you mean 'ndcg@10'?",
        id="unknown-metric-did-you-mean",
    ),
    pytest.param(
        {},
        [*DATASET_ARGS, "-m", "recip_rank@3"],
        "Error: unknown metric 'recip_rank@3'; did you mean 'mrr@3'?",
        id="unknown-metric-suggests-itself",
    ),
    pytest.param(
        {},
        [*DATASET_ARGS, "-m", "r-precision@5"],
        "Error: metric 'r-precision@5': r-precision takes no cutoff",
        id="r-precision-with-cutoff",
    ),
    pytest.param(
        {},
        [*DATASET_ARGS, "-m", "ndcg@0"],
        "Error: metric 'ndcg@0': the cutoff k must be >= 1, got 0",
        id="metric-cutoff-zero",
    ),
    pytest.param(
        {},
        ["eval", "--dataset", "samples.yaml", "--qrels", "qrels.trec", "--run", "run.trec"],
        "Error: give either --dataset/--outputs or --qrels/--run, not both",
        id="dataset-and-qrels",
    ),
    pytest.param(
        {},
        ["eval", "--qrels", "qrels.trec"],
        "Error: TREC evaluation needs both --qrels and --run",
        id="qrels-without-run",
    ),
    pytest.param(
        {},
        ["eval", "--outputs", "outputs.jsonl"],
        "Error: nothing to evaluate: give --dataset (with --outputs) or --qrels and --run",
        id="outputs-without-dataset",
    ),
    pytest.param(
        {},
        [*DATASET_ARGS, "--complete"],
        "Error: --complete applies to TREC runs (--qrels/--run) only",
        id="complete-without-trec",
    ),
    pytest.param(
        {"samples.yaml": "samples:\n  - id: q-1\n    expected_output: {a: high}\n"},
        ["eval", "--dataset", "samples.yaml"],
        "Error: samples.yaml:2 (sample 'q-1'): expected_output: gain of 'a' must be a number, got 'high'",
        id="gain-not-a-number",
    ),
    pytest.param(
        {"samples.json": '[{"id": "q-1", "expected_output": {"a": NaN}}]'},
        ["eval", "--dataset", "samples.json"],
        "Error: samples.json:1: [0].expected_output.a: NaN is not a number JSON allows "
        "(numbers must be finite; write null for no value)",
        id="gain-nan",
    ),
    pytest.param(
        {
            "samples.yaml": "- id: q-1\n  expected_output: [a]\n- id: q-2\n  expected_output: [b]\n  metadata: {k: 0}\n"
        },
        ["eval", "--dataset", "samples.yaml"],
        "Error: samples.yaml:3 (sample 'q-2'): metadata.k: Input should be greater than or equal to 1",
        id="metadata-k-zero",
    ),
    pytest.param(
        {
            "samples.yaml": "samples:\n  - id: q-1\n    metadata: {expected_answer: x}\n",
            "outputs.jsonl": '{"id": "q-1", "output": {"retrieved": [{"id": "a", "text": "y"}, {"id": "b"}]}}\n',
        },
        DATASET_ARGS,
        "Error: outputs.jsonl:1 (sample 'q-1'): retrieved item at rank 2 has no 'text', which containment@k needs",
        id="containment-item-without-text",
    ),
    pytest.param(
        {
            "samples.yaml": "samples:\n  - id: q-1\n    metadata: {expected_answer: ''}\n",
            "outputs.jsonl": '{"id": "q-1", "output": {"retrieved": [{"id": "a", "text": "y"}]}}\n',
        },
        [*DATASET_ARGS, "-m", "containment@1"],
        "Error: samples.yaml:2 (sample 'q-1'): metadata.expected_answer: must be a non-blank string or a list of non-blank strings",
        id="blank-expected-answer",
    ),
    pytest.param(
        {"bad.yaml": "metrics:\n  retrieval:\n    default_kk: 3\n"},
        [*DATASET_ARGS, "--config", "bad.yaml"],
        "Error: bad.yaml: metrics.retrieval.default_kk: unknown setting; did you mean 'default_k'?",
        id="config-unknown-key",
    ),
    pytest.param(
        {"bad.yaml": "metrcs:\n  retrieval:\n    default_k: 3\n"},
        [*DATASET_ARGS, "--config", "bad.yaml"],
        "Error: bad.yaml: metrcs: unknown setting; did you mean 'metrics'?",
        id="config-misspelt-section",
    ),
    pytest.param(
        {},
        [*DATASET_ARGS, "--breakdowns", "catgory"],
        "Error: --breakdowns: unknown dimension 'catgory'; did you mean 'category'?",
        id="breakdowns-misspelt",
    ),
    pytest.param(
        {"bad.yaml": "reports:\n  title: x\n"},
        [*DATASET_ARGS, "--config", "bad.yaml"],
        "Error: bad.yaml: reports: unknown setting (known: metrics, pricing, index_stats, judge)",
        id="config-unknown-section",
    ),
    pytest.param(
        {"bad.yaml": "metrics:\n  retreival:\n    default_k: 3\n"},
        [*DATASET_ARGS, "--config", "bad.yaml"],
        "Error: bad.yaml: metrics.retreival: unknown setting; did you mean 'retrieval'?",
        id="config-misspelt-family",
    ),
    pytest.param(
        {"bad.yaml": "metrics:\n  retrieval:\n    default_k: 0\n"},
        [*DATASET_ARGS, "--config", "bad.yaml"],
        "Error: bad.yaml: metrics.retrieval.default_k: Input should be greater than or equal to 1",
        id="config-k-zero",
    ),
    pytest.param(
        {},
        [*DATASET_ARGS, "--config", "nope.yaml"],
        "Error: nope.yaml: config file not found",
        id="config-missing",
    ),
    pytest.param(
        {},
        [*DATASET_ARGS, "--relevance-level", "0"],
        "Error: the relevance level (--relevance-level / relevance_level) must be > 0, got 0.0",
        id="relevance-level-zero",
    ),
]


@pytest.mark.parametrize(("files", "argv", "message"), CASES)
def test_cli_error_message(
    files: dict[str, str],
    argv: list[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in {**GOOD, **files}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert captured.err == message + "\n"
    assert captured.out == ""
    assert exc.value.code == 2


def test_a_ragmeter_yaml_in_the_working_directory_is_validated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, text in GOOD.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "ragmeter.yaml").write_text("metrics:\n  retrieval:\n    default_kk: 3\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exc:
        main(DATASET_ARGS)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.startswith(f"Error: {tmp_path / 'ragmeter.yaml'}: metrics.retrieval.default_kk: ")
    assert err.count("\n") == 1


def _ragmeter_command() -> list[str]:
    script = Path(sys.executable).with_name("ragmeter")
    if script.exists():
        return [str(script)]
    found = shutil.which("ragmeter")
    assert found, "the ragmeter console script is not installed"
    return [found]


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RAGMETER_DEBUG"}
    return subprocess.run(
        [*_ragmeter_command(), *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_errors_in_a_real_process_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    (tmp_path / "run.trec").write_text("q1 Q0 d1 1 1.5 r\nq1 Q0 d2 2 0.5\n", encoding="utf-8")
    (tmp_path / "qrels.trec").write_text(QRELS, encoding="utf-8")
    plain = _run(TREC_ARGS, tmp_path)
    assert (plain.returncode, plain.stdout) == (2, "")
    assert plain.stderr == "Error: run.trec:2: expected 6 fields (qid Q0 docid rank score tag), got 5\n"
    debug = _run(["--debug", *TREC_ARGS], tmp_path)
    assert debug.returncode == 1
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.rstrip().endswith(
        "ragmeter.errors.InputError: run.trec:2: expected 6 fields (qid Q0 docid rank score tag), got 5"
    )


# --- help and documentation ------------------------------------------------------------------------


def _commands() -> dict[str, object]:
    from ragmeter.cli import _register_commands

    _register_commands()
    group = typer.main.get_command(app)
    commands: dict[str, object] = group.commands  # type: ignore[attr-defined]
    return commands


def test_help_lists_every_command(cli: Any) -> None:
    code, out, err = cli(["--help"])
    assert (code, err) == (0, "")
    assert "Usage: ragmeter" in out
    for name in _commands():
        assert re.search(rf"^ +{re.escape(name)}( |$)", out, flags=re.MULTILINE), name
    assert cli([])[:2] == (0, out)  # no arguments: the same help


def test_every_command_and_option_is_documented(cli: Any) -> None:
    commands = _commands()
    assert {"eval", "metrics"} <= set(commands)
    for name, command in commands.items():
        assert (getattr(command, "help", None) or "").strip(), f"command {name!r} has no help text"
        for param in getattr(command, "params", []):
            if getattr(param, "param_type_name", "") == "option":
                assert (getattr(param, "help", None) or "").strip(), (
                    f"option {param.name!r} of {name!r} has no help"
                )
        code, out, err = cli([name, "--help"])
        assert (code, err) == (0, ""), name
        assert f"Usage: ragmeter {name}" in out


def test_eval_help_shows_every_option(cli: Any) -> None:
    code, out, _ = cli(["eval", "--help"])
    assert code == 0
    for option in (
        "--dataset",
        "--outputs",
        "--qrels",
        "--run",
        "--metric",
        "-k",
        "--relevance-level",
        "--config",
        "--json",
        "--out",
        "--trec-compat",
        "--complete",
    ):
        assert option in out, option


def test_every_metric_is_documented_in_the_registry() -> None:
    for metric in METRICS:
        assert metric.formula.strip(), f"{metric.family} has no formula"
        assert metric.description.strip(), f"{metric.family} has no description"
    assert len({m.family for m in METRICS}) == len(METRICS)


def _metric_words(out: str) -> set[str]:
    return set(out.replace("│", " ").replace(",", " ").split())


def test_metrics_command_lists_every_metric(monkeypatch: pytest.MonkeyPatch, cli: Any) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    code, out, err = cli(["metrics"])
    assert (code, err) == (0, "")
    words = _metric_words(out)
    for metric in METRICS:
        assert metric.family in words, f"{metric.family} missing from 'ragmeter metrics'"
        for alias in metric.aliases:
            assert alias in words, f"alias {alias} of {metric.family} missing from 'ragmeter metrics'"


def test_metrics_command_keeps_names_whole_in_80_columns(monkeypatch: pytest.MonkeyPatch, cli: Any) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli(["metrics"])
    assert code == 0
    words = _metric_words(out)
    assert [m.family for m in METRICS if m.family not in words] == []


def test_metrics_json_documents_every_metric(cli: Any) -> None:
    code, out, err = cli(["metrics", "--json"])
    assert (code, err) == (0, "")
    rows = json.loads(out)
    assert [row["name"] for row in rows] == [m.family for m in METRICS]
    by_name = {m.family: m for m in METRICS}
    for row in rows:
        metric = by_name[row["name"]]
        assert row["formula"] == metric.formula and row["formula"].strip()
        assert row["description"] == metric.description and row["description"].strip()
        assert row["aliases"] == list(metric.aliases)
        assert row["cutoff"] in {"default", "optional", "none"}
        assert row["higher_is_better"] is metric.higher_is_better
