"""Regression tests for defects found by using the CLI as a user would (QA pass).

Each test names the command line that misbehaved and what it did before the fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragmeter.errors import ConfigError, InputError
from ragmeter.io.datasets import load_dataset
from ragmeter.io.outputs import load_outputs
from ragmeter.report.compare import compare_results
from ragmeter.report.gate import check_rules, parse_rule
from ragmeter.report.history import record_run
from ragmeter.report.stats import paired_percentile_ci, paired_percentile_pvalue
from ragmeter.results import EvalResult


def latency_result(latencies: list[float], *, extra: dict[str, float] | None = None) -> EvalResult:
    per_query: dict[str, dict[str, float | None]] = {
        f"q{i}": {"latency_p95": v, "latency_p50": v, "mrr": 0.5} for i, v in enumerate(latencies)
    }
    aggregate: dict[str, float | None] = {
        "latency_p95": float(np.percentile(latencies, 95)),
        "latency_p50": float(np.percentile(latencies, 50)),
        "mrr": 0.5,
        **(extra or {}),
    }
    return EvalResult(
        aggregate=aggregate,
        per_query=per_query,
        n_queries=len(latencies),
        n_scored=dict.fromkeys(aggregate, len(latencies)),
        n_skipped=dict.fromkeys(aggregate, 0),
    )


def write_results(folder: Path, result: EvalResult) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    result.write(folder)
    return folder


# --- compare / gate: percentile metrics --------------------------------------------------------------


def test_compare_uses_the_percentile_for_latency_p95_not_the_mean() -> None:
    """`ragmeter compare` printed the mean latency under latency_p95 (0.0083 where metrics.json had 0.0191)."""
    base_lat = [0.1] * 18 + [2.0, 10.0]  # two slow queries: the p95 is far above the mean
    cand_lat = [0.1] * 18 + [0.2, 0.3]
    comparison = compare_results(latency_result(base_lat), latency_result(cand_lat), n_resamples=500)
    p95 = comparison.get("latency_p95")
    assert p95 is not None and p95.statistic == "p95"
    assert p95.baseline_mean == pytest.approx(np.percentile(base_lat, 95))
    assert p95.candidate_mean == pytest.approx(np.percentile(cand_lat, 95))
    assert p95.delta == pytest.approx(np.percentile(cand_lat, 95) - np.percentile(base_lat, 95))
    assert p95.delta is not None and p95.ci_low is not None and p95.ci_high is not None
    assert p95.ci_low <= p95.delta <= p95.ci_high
    p50 = comparison.get("latency_p50")
    assert p50 is not None and p50.statistic == "p50" and p50.delta == pytest.approx(0.0)
    mrr = comparison.get("mrr")
    assert mrr is not None and mrr.statistic == "mean"


def test_gate_delta_rule_on_latency_p95_compares_the_p95() -> None:
    """`gate --fail-on 'latency_p95>+1'` compared mean latencies: a tail regression passed the gate."""
    base = latency_result([0.1] * 20)
    cand = latency_result([0.1] * 18 + [5.0, 9.0])  # mean +0.69, p95 +4.9
    comparison = compare_results(base, cand, n_resamples=500)
    (outcome,) = check_rules(comparison, [parse_rule("latency_p95>+1")])
    assert outcome.failed
    assert outcome.value == pytest.approx(np.percentile([0.1] * 18 + [5.0, 9.0], 95) - 0.1)


def test_paired_percentile_tests_against_brute_force() -> None:
    rng = np.random.default_rng(1)
    base = rng.exponential(1.0, size=10)
    cand = base.copy()
    cand[[2, 5, 7]] += 3.0
    # exact: every swap pattern of the three differing pairs, by hand
    observed = abs(np.percentile(cand, 95) - np.percentile(base, 95))
    extreme = 0
    for code in range(8):
        b, c = base.copy(), cand.copy()
        for bit, i in enumerate([2, 5, 7]):
            if code >> bit & 1:
                b[i], c[i] = c[i], b[i]
        extreme += int(abs(np.percentile(c, 95) - np.percentile(b, 95)) >= observed - 1e-12)
    assert paired_percentile_pvalue(base, cand, 95) == pytest.approx(extreme / 8)
    assert paired_percentile_pvalue(base, base, 95) == 1.0
    low, high = paired_percentile_ci(base, cand, 95, n_resamples=2000, seed=3)
    assert low <= high
    assert (low, high) == paired_percentile_ci(base, cand, 95, n_resamples=2000, seed=3)


def test_compare_metric_option_rejects_unknown_names_and_resolves_aliases() -> None:
    """`compare -m bogus` printed a row of dashes; `-m recall_any@5` did not find hit@5."""
    base = EvalResult(
        aggregate={"hit@5": 1.0}, per_query={"q": {"hit@5": 1.0}}, n_queries=1, n_scored={}, n_skipped={}
    )
    with pytest.raises(ConfigError, match="'bogus': no such metric in either run"):
        compare_results(base, base, metrics=["bogus"])
    assert [m.metric for m in compare_results(base, base, metrics=["recall_any@5"]).metrics] == ["hit@5"]


def test_compare_notes_metrics_only_one_run_has() -> None:
    base = latency_result([0.1, 0.2])
    cand = latency_result([0.1, 0.2], extra={"scope_miss_rate": 0.5})
    notes = compare_results(base, cand, baseline_label="b", candidate_label="c", n_resamples=100).notes
    assert "only in c, not compared: scope_miss_rate" in notes


def test_compare_table_keeps_metric_names_and_every_column_at_80_columns(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80 columns the metric names were cut to `latency…`, so six latency rows looked alike."""
    monkeypatch.setenv("COLUMNS", "80")
    names = [
        "latency_p95.folder_selection",
        "latency_p50.folder_selection",
        "hallucination_rate_unanswerable",
    ]
    values = {f"q{i}": dict.fromkeys(names, float(i)) for i in range(5)}
    result = EvalResult(
        aggregate=dict.fromkeys(names, 2.0), per_query=values, n_queries=5, n_scored={}, n_skipped={}
    )
    base = write_results(tmp_path / "base", result)
    cand = write_results(tmp_path / "cand", result)
    code, out, _ = cli(["compare", str(base), str(cand), "--resamples", "100"])
    assert code == 0
    for name in names:
        assert name in out
    assert "95% CI" in out and "p (holm)" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_gate_rejects_an_alpha_that_can_never_be_significant(tmp_path: Path, cli: Any) -> None:
    """`gate --alpha -1` silently turned every delta rule off."""
    folder = write_results(tmp_path / "r", latency_result([0.1, 0.2]))
    code, _, err = cli(["gate", str(folder), str(folder), "--fail-on", "mrr<-0.1", "--alpha", "-1"])
    assert code == 2 and err.strip() == "Error: --alpha must be between 0 and 1 (exclusive), got -1"


def test_gate_junit_to_a_folder_fails_before_comparing(tmp_path: Path, cli: Any) -> None:
    folder = write_results(tmp_path / "r", latency_result([0.1, 0.2]))
    code, _, err = cli(["gate", str(folder), str(folder), "--fail-on", "mrr<-0.1", "--junit", str(folder)])
    assert code == 2 and err.strip() == f"Error: {folder}: is a directory; expected a file name"


# --- history -----------------------------------------------------------------------------------------


def test_history_with_many_metrics_is_readable_at_80_columns(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ragmeter history` after the demo printed 25 empty columns (every header squeezed to nothing)."""
    monkeypatch.setenv("COLUMNS", "80")
    db = tmp_path / "h.sqlite"
    names = [f"latency_p95.stage_{i}" for i in range(12)] + ["hit@5", "mrr"]
    for label, value in (("first", 0.5), ("second", 0.75)):
        r = EvalResult(
            aggregate=dict.fromkeys(names, value), per_query={}, n_queries=3, n_scored={}, n_skipped={}
        )
        record_run(r, db=db, label=label)
    code, out, _ = cli(["history", "--db", str(db)])
    assert code == 0
    for name in [*names, "first", "second"]:
        assert name in out
    assert "0.7500 ↑" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_history_metric_option_checks_names_and_filters_json(tmp_path: Path, cli: Any) -> None:
    """`history -m nonexist` showed a column of dashes; `--json -m mrr` printed every metric."""
    db = tmp_path / "h.sqlite"
    r = EvalResult(aggregate={"hit@5": 1.0, "mrr": 0.5}, per_query={}, n_queries=1, n_scored={}, n_skipped={})
    record_run(r, db=db, label="one")
    code, _, err = cli(["history", "--db", str(db), "-m", "nonexist"])
    assert (
        code == 2 and "Error: --metric 'nonexist': no recorded run has this metric (have: hit@5, mrr)" in err
    )
    code, out, _ = cli(["history", "--db", str(db), "-m", "recall_any@5", "--json"])
    assert code == 0 and json.loads(out)[0]["aggregate"] == {"hit@5": 1.0}


# --- report ------------------------------------------------------------------------------------------


def test_report_accepts_a_metrics_json_path_and_an_out_folder(tmp_path: Path, cli: Any) -> None:
    """`report results/demo/metrics.json` and `report results/demo --out results/demo` crashed (traceback)."""
    folder = write_results(tmp_path / "r", latency_result([0.1, 0.2]))
    code, out, _ = cli(["report", str(folder / "metrics.json")])
    assert (code, out.strip()) == (0, f"wrote {folder / 'report.html'}")
    code, out, _ = cli(["report", str(folder), "--out", str(folder)])
    assert (code, out.strip()) == (0, f"wrote {folder / 'report.html'}")
    code, _, err = cli(["report", str(folder), "--out", str(folder / "metrics.json" / "x.html")])
    assert code == 2
    assert err.strip() == (
        f"Error: {folder / 'metrics.json' / 'x.html'}: cannot create it: {folder / 'metrics.json'} is a file, "
        "not a folder"
    )


# --- metrics -----------------------------------------------------------------------------------------


def test_metrics_table_shows_formula_cutoff_and_aliases_at_80_columns(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ragmeter metrics` at 80 columns squeezed aliases, cutoff and formula to zero width."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli(["metrics"])
    assert code == 0
    assert "formula: hit@k = 1 if" in out
    assert "aliases: hit_rate, success" in out
    assert "cutoff: NAME@K" in out
    assert "hallucination_rate_unanswerable" in out


# --- agentic -----------------------------------------------------------------------------------------


def test_agentic_out_to_a_folder_fails_before_scoring(tmp_path: Path, cli: Any) -> None:
    """`agentic -o FOLDER` scored (and paid any judge) first, then crashed with IsADirectoryError."""
    traces = Path(__file__).parents[2] / "examples" / "agentic" / "traces.jsonl"
    code, _, err = cli(["agentic", "-t", str(traces), "-o", str(tmp_path)])
    assert code == 2 and err.strip() == f"Error: {tmp_path}: is a directory; expected a file name"


def test_agentic_invalid_json_names_the_line(tmp_path: Path, cli: Any) -> None:
    """A broken first record gave `Error: bad.jsonl: invalid JSON (... at line 2 column 1)`: no file:line."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"trace_id": 1\n', encoding="utf-8")
    code, _, err = cli(["agentic", "-t", str(bad)])
    assert code == 2 and err.startswith(f"Error: {bad}:2: invalid JSON (")


def test_non_utf8_names_the_line(tmp_path: Path, cli: Any) -> None:
    traces = tmp_path / "t.jsonl"
    first = b'{"trace_id": "t", "turns": [{"user": "u", "iterations": []}]}\n'
    traces.write_bytes(first + b'{"b": "\xff"}\n')
    code, _, err = cli(["agentic", "-t", str(traces), "-f", "native"])
    message = "not UTF-8 text: byte 0xff (column 8) cannot be decoded; save the file as UTF-8"
    assert code == 2 and err.strip() == f"Error: {traces}:2: {message}"
    traces.write_bytes(b'{"a": 1}\n{"b": "\xff"}\n')
    with pytest.raises(InputError, match=r"t\.jsonl:2: not UTF-8 text: byte 0xff \(column 8\)"):
        load_outputs(traces)


# --- datasets and outputs: misspelt fields -----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("expected_outptu: [a]", "unknown field 'expected_outptu'; did you mean 'expected_output'?"),
        ("gold_suports: [{rel_path: a.md}]", "unknown field 'gold_suports'; did you mean 'gold_supports'?"),
        (
            "expected_output: [a]\n    expected_answer: a",
            "'expected_answer' belongs under 'metadata' (metadata: {expected_answer: ...})",
        ),
    ],
)
def test_a_misspelt_sample_field_is_an_error_not_a_skipped_query(
    tmp_path: Path, body: str, message: str
) -> None:
    """`expected_outptu:` was kept as an extra field: the query had no ground truth and was silently skipped."""
    dataset = tmp_path / "d.yaml"
    dataset.write_text(f"samples:\n  - id: q-1\n    {body}\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_dataset(dataset)
    assert str(exc.value) == f"{dataset}:2 (sample 'q-1'): {message}"


def test_other_sample_fields_are_still_allowed(tmp_path: Path) -> None:
    dataset = tmp_path / "d.yaml"
    dataset.write_text(
        "samples:\n  - id: q-1\n    expected_output: [a]\n    question: Why?\n    query: x\n"
        "    candidates: [a, b]\n    verification: {}\n",
        encoding="utf-8",
    )
    assert [s.id for s in load_dataset(dataset)] == ["q-1"]


def test_a_misspelt_output_field_is_an_error_not_a_zero(tmp_path: Path) -> None:
    """`{"retreived": [...]}` scored as an empty ranking: 0 for every metric, no warning."""
    outputs = tmp_path / "o.jsonl"
    outputs.write_text('{"id": "q-1", "output": {"retreived": ["a"], "debug": 1}}\n', encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_outputs(outputs)
    assert str(exc.value) == (
        f"{outputs}:1 (sample 'q-1'): output has an unknown field 'retreived'; did you mean 'retrieved'?"
    )
    outputs.write_text('{"id": "q-1", "output": {"retrieved": ["a"], "debug": 1}}\n', encoding="utf-8")
    assert [i.id for i in load_outputs(outputs)["q-1"].retrieved] == ["a"]


def test_an_output_with_a_null_id_says_so(tmp_path: Path) -> None:
    """`{"id": null, ...}` was reported as `output for unknown sample id 'None'`."""
    outputs = tmp_path / "o.jsonl"
    outputs.write_text('{"id": null, "output": ["a"]}\n', encoding="utf-8")
    with pytest.raises(
        InputError, match=r"o\.jsonl:1: id must be a non-blank string or an integer, got None"
    ):
        load_outputs(outputs)


# --- calibrate ---------------------------------------------------------------------------------------


def test_calibrate_checks_every_pair_before_loading_the_model(
    tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pair without a reference failed only after the model had loaded (seconds), as `no reference sentences`."""
    import ragmeter.judges.bertscore as bertscore

    def no_model(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model must not be used before every pair is checked")

    monkeypatch.setattr(bertscore, "coverage", no_model)
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        '{"answer": "a b c", "reference": "a b c", "label": true}\n{"answer": "x", "label": false}\n',
        encoding="utf-8",
    )
    code, _, err = cli(["calibrate", "bertscore", str(pairs)])
    assert (
        code == 2 and err.strip() == f"Error: {pairs}:2: a pair needs a non-blank 'reference' or 'references'"
    )
