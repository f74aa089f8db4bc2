from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from ragmeter.errors import ConfigError
from ragmeter.report.compare import compare_results
from ragmeter.report.gate import check_rules, junit_xml, parse_rule
from ragmeter.report.history import load_history, record_run
from ragmeter.results import EvalResult
from ragmeter.testing import assert_no_regression


def make_result(
    values: dict[str, dict[str, float | None]], extra: dict[str, float] | None = None
) -> EvalResult:
    metrics = sorted({m for row in values.values() for m in row})
    aggregate: dict[str, float | None] = {}
    for m in metrics:
        scored = [row[m] for row in values.values() if row.get(m) is not None]
        aggregate[m] = sum(v for v in scored if v is not None) / len(scored) if scored else None
    aggregate.update(extra or {})
    return EvalResult(
        aggregate=aggregate,
        per_query=values,
        n_queries=len(values),
        n_scored={m: sum(row.get(m) is not None for row in values.values()) for m in metrics},
        n_skipped={m: 0 for m in metrics},
    )


BASE = {f"q{i}": {"ndcg@10": 0.6, "mrr": 0.5} for i in range(12)}
WORSE = {f"q{i}": {"ndcg@10": 0.5, "mrr": 0.5} for i in range(12)}


@pytest.mark.parametrize(
    ("text", "metric", "mode", "op", "threshold"),
    [
        ("ndcg@10<-0.02", "ndcg@10", "delta", "<", -0.02),
        ("nDCG@10 < -0.02", "ndcg@10", "delta", "<", -0.02),
        ("error_rate>0.01", "error_rate", "absolute", ">", 0.01),
        ("error_rate>+0.005", "error_rate", "delta", ">", 0.005),
        ("delta(mrr)<=0", "mrr", "delta", "<=", 0.0),
        ("abs(P_10)<0.3", "precision@10", "absolute", "<", 0.3),
        ("mrr<-5%", "mrr", "relative", "<", -0.05),
    ],
)
def test_rule_grammar(text: str, metric: str, mode: str, op: str, threshold: float) -> None:
    rule = parse_rule(text)
    assert (rule.metric, rule.mode, rule.op) == (metric, mode, op)
    assert rule.threshold == pytest.approx(threshold)


@pytest.mark.parametrize("text", ["ndcg@10", "ndcg@10 << 1", "abs(mrr)<-5%", "mrr<5%", "<0.1"])
def test_bad_rules_are_config_errors(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_rule(text)


def test_delta_and_absolute_rules() -> None:
    comparison = compare_results(
        make_result(BASE, {"error_rate": 0.0}), make_result(WORSE, {"error_rate": 0.02})
    )
    outcomes = check_rules(
        comparison,
        [parse_rule("ndcg@10<-0.02"), parse_rule("mrr<-0.02"), parse_rule("error_rate>0.01")],
    )
    assert [o.failed for o in outcomes] == [True, False, True]
    assert outcomes[0].value == pytest.approx(-0.1)
    assert outcomes[2].value == pytest.approx(0.02)
    assert outcomes[0].reason == "FAIL: ndcg@10 changed by -0.1000 [ndcg@10<-0.02]"


def test_unknown_metric_in_a_rule_is_an_error_not_a_pass() -> None:
    comparison = compare_results(make_result(BASE), make_result(WORSE))
    with pytest.raises(ConfigError, match="no metric 'ndgc@10'"):
        check_rules(comparison, [parse_rule("ndgc@10<-0.02")])


def test_alpha_requires_significance() -> None:
    tiny_base = {"q1": {"mrr": 0.5}, "q2": {"mrr": 0.5}}
    tiny_worse = {"q1": {"mrr": 0.4}, "q2": {"mrr": 0.4}}
    comparison = compare_results(make_result(tiny_base), make_result(tiny_worse))
    [plain] = check_rules(comparison, [parse_rule("mrr<-0.05")])
    [significant] = check_rules(comparison, [parse_rule("mrr<-0.05")], alpha=0.05)
    assert plain.failed and not significant.failed  # 2 queries: exact p = 0.5
    assert "not significant" in significant.reason


def test_junit_xml_has_one_case_per_rule() -> None:
    comparison = compare_results(make_result(BASE), make_result(WORSE))
    outcomes = check_rules(comparison, [parse_rule("ndcg@10<-0.02"), parse_rule("mrr<-0.02")])
    root = ET.fromstring(junit_xml(outcomes).split("\n", 1)[1])
    suite = root.find("testsuite")
    assert suite is not None
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["ndcg@10<-0.02", "mrr<-0.02"]
    assert cases[0].find("failure") is not None and cases[1].find("failure") is None


def test_gate_cli_exit_codes_and_junit(tmp_path: Path, cli: Any) -> None:
    base = make_result(BASE).write(tmp_path / "base")
    cand = make_result(WORSE).write(tmp_path / "cand")
    junit = tmp_path / "out" / "gate.xml"
    code, out, err = cli(
        [
            "gate",
            str(base),
            str(cand),
            "--fail-on",
            "ndcg@10<-0.02",
            "--fail-on",
            "mrr<-0.02",
            "--junit",
            str(junit),
        ]
    )
    assert code == 1
    assert "FAIL: ndcg@10 changed by -0.1000 [ndcg@10<-0.02]" in err
    assert "gate failed: 1 of 2 rule(s)" in err
    assert junit.is_file()
    code, out, _ = cli(["gate", str(base), str(base), "--fail-on", "ndcg@10<-0.02"])
    assert code == 0 and "gate passed: 1 rule(s)" in out
    code, _, err = cli(["gate", str(base), str(cand), "--fail-on", "ndcg@10 <<"])
    assert code == 2 and err.startswith("Error: gate rule 'ndcg@10 <<' does not parse")
    code, _, err = cli(["gate", str(tmp_path / "nope"), str(cand), "--fail-on", "mrr<0"])
    assert code == 2 and "results folder not found" in err


def test_compare_cli_on_differing_query_sets(tmp_path: Path, cli: Any) -> None:
    base = make_result(BASE).write(tmp_path / "base")
    cand_rows = {q: v for q, v in WORSE.items() if q != "q0"} | {"extra": {"ndcg@10": 1.0, "mrr": 1.0}}
    cand = make_result(cand_rows).write(tmp_path / "cand")
    code, out, _ = cli(["compare", str(base), str(cand), "--resamples", "500"])
    assert code == 0
    assert "11 shared queries" in out
    assert "1 only in base, 1 only in cand" in out
    code, out, _ = cli(["compare", str(base), str(cand), "--json", "--resamples", "500"])
    assert '"n_shared_queries": 11' in out


def test_history_across_three_runs(tmp_path: Path, cli: Any) -> None:
    db = tmp_path / "h.sqlite"
    for label, rows in (("one", BASE), ("two", WORSE), ("three", BASE)):
        record_run(make_result(rows), db=db, label=label)
    entries = load_history(db)
    assert [e.label for e in entries] == ["one", "two", "three"]
    assert [e.aggregate["ndcg@10"] for e in entries] == pytest.approx([0.6, 0.5, 0.6])
    code, out, _ = cli(["history", "--db", str(db), "-m", "ndcg@10"])
    assert code == 0
    assert "0.5000 ↓" in out and "0.6000 ↑" in out
    assert [e.label for e in load_history(db, last=2)] == ["two", "three"]
    code, _, err = cli(["history", "--db", str(tmp_path / "none.sqlite")])
    assert code == 2 and "no history database here yet" in err


def test_assert_no_regression_reads_result_folders(tmp_path: Path) -> None:
    base = make_result(BASE).write(tmp_path / "base")
    cand = make_result(WORSE).write(tmp_path / "cand")
    assert_no_regression(base, base, rules=["ndcg@10<-0.02"])
    with pytest.raises(AssertionError, match=r"FAIL: ndcg@10 changed by -0.1000"):
        assert_no_regression(base, cand, rules=["ndcg@10<-0.02"])


# -- metrics that exist only as totals (an error rate, a cost total) -------------------------------------

PAIRED = {"q1": {"mrr": 0.5}, "q2": {"mrr": 1.0}}


def totals_comparison(base: dict[str, float | None], cand: dict[str, float | None]) -> Any:
    """Runs whose per-query rows hold only mrr; ``base``/``cand`` are totals with no per-query values."""
    return compare_results(make_result(PAIRED, base), make_result(PAIRED, cand), n_resamples=200)


@pytest.mark.parametrize(
    ("base", "cand", "rule", "value"),
    [
        # exact binary fractions: a flipped sign, a ratio to the candidate or a missed fallback all differ
        (0.25, 0.75, "error_rate>+0.1", 0.5),
        (0.5, 0.125, "error_rate<-0.1", -0.375),
        (0.25, 0.75, "error_rate>+10%", 2.0),  # (0.75 - 0.25) / 0.25; over the candidate: 0.667
        (0.5, 0.125, "error_rate<-10%", -0.75),  # (0.125 - 0.5) / 0.5; over the candidate: -3
        (2.0, 3.0, "delta(cost_usd)>=1", 1.0),
    ],
)
def test_a_totals_only_metric_changes_by_its_totals(
    base: float, cand: float, rule: str, value: float
) -> None:
    metric = parse_rule(rule).metric
    comparison = totals_comparison({metric: base}, {metric: cand})
    assert comparison.totals_only == [metric]
    [outcome] = check_rules(comparison, [parse_rule(rule)])
    assert outcome.value == value
    assert outcome.failed


def test_a_totals_only_change_below_its_threshold_passes_and_the_reason_says_by_how_much() -> None:
    comparison = totals_comparison({"error_rate": 0.25}, {"error_rate": 0.375})
    [worse, better] = check_rules(comparison, [parse_rule("error_rate>+0.25"), parse_rule("error_rate<-0.1")])
    assert (worse.value, worse.failed) == (0.125, False)
    assert worse.reason == "ok: error_rate changed by +0.1250 [error_rate>+0.25]"
    assert (better.value, better.failed) == (0.125, False)


def test_alpha_does_not_excuse_a_totals_only_rule() -> None:
    """No per-query values, no significance test: the threshold alone decides, and the reason says so."""
    comparison = totals_comparison({"error_rate": 0.25}, {"error_rate": 0.75})
    [outcome] = check_rules(comparison, [parse_rule("error_rate>+0.1")], alpha=0.05)
    assert outcome.failed and outcome.value == 0.5
    assert "totals only" in outcome.reason


@pytest.mark.parametrize(
    ("base", "cand", "rule", "message"),
    [
        ({}, {"error_rate": 0.5}, "error_rate>+0.1", "baseline has no total for error_rate"),
        (
            {"error_rate": 0.5},
            {"error_rate": None},
            "error_rate>+0.1",
            "candidate has no total for error_rate",
        ),
        ({"error_rate": float("nan")}, {"error_rate": 0.5}, "error_rate>+0.1", "baseline has a total of nan"),
        (
            {"error_rate": 0.5},
            {"error_rate": float("inf")},
            "error_rate<-0.1",
            "candidate has a total of inf",
        ),
        ({"error_rate": 0.0}, {"error_rate": 0.5}, "error_rate>+10%", "from a baseline error_rate of 0"),
    ],
)
def test_a_totals_only_rule_without_two_finite_totals_is_an_error(
    base: dict[str, float | None], cand: dict[str, float | None], rule: str, message: str
) -> None:
    comparison = totals_comparison(base, cand)
    with pytest.raises(ConfigError, match=re.escape(message)):
        check_rules(comparison, [parse_rule(rule)])


def test_a_totals_only_rule_needs_shared_queries() -> None:
    comparison = totals_comparison({"error_rate": 0.25}, {"error_rate": 0.75}).model_copy(
        update={"n_shared_queries": 0}
    )
    with pytest.raises(ConfigError, match="share no query"):
        check_rules(comparison, [parse_rule("error_rate>+0.1")])


def test_a_metric_with_per_query_values_changes_over_the_paired_queries_only() -> None:
    """The totals differ by 2/3 (q3 is only in the baseline); the paired change is exactly 0.5."""
    base = make_result({"q1": {"mrr": 0.5}, "q2": {"mrr": 0.5}, "q3": {"mrr": 0.0}})
    cand = make_result({"q1": {"mrr": 1.0}, "q2": {"mrr": 1.0}})
    comparison = compare_results(base, cand, n_resamples=200)
    assert comparison.totals_only == []
    [delta, relative] = check_rules(comparison, [parse_rule("mrr>+0.1"), parse_rule("mrr>+10%")])
    assert (delta.value, relative.value) == (0.5, 1.0)


def test_per_query_values_in_one_run_only_are_no_totals_fallback() -> None:
    """A metric the baseline has per query is never compared by its totals, even if the candidate lacks them."""
    base = make_result({"q1": {"mrr": 0.5, "error_rate": 0.0}, "q2": {"mrr": 1.0, "error_rate": 1.0}})
    cand = make_result(PAIRED, {"error_rate": 0.75})
    comparison = compare_results(base, cand, n_resamples=200)
    assert comparison.totals_only == []
    with pytest.raises(ConfigError, match="no query has a value for error_rate in both"):
        check_rules(comparison, [parse_rule("error_rate>+0.1")])


def test_gate_cli_on_a_totals_only_metric(tmp_path: Path, cli: Any) -> None:
    base = make_result(PAIRED, {"error_rate": 0.25}).write(tmp_path / "base")
    cand = make_result(PAIRED, {"error_rate": 0.75}).write(tmp_path / "cand")
    code, _, err = cli(["gate", str(base), str(cand), "--fail-on", "error_rate>+10%", "--resamples", "200"])
    assert code == 1
    assert "FAIL: error_rate changed by +200.00% [error_rate>+10%]" in err
    code, out, _ = cli(["gate", str(base), str(cand), "--fail-on", "error_rate>+0.5", "--resamples", "200"])
    assert code == 0 and "ok: error_rate changed by +0.5000" in out
