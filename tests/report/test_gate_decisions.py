"""What the regression gate decides, rule by rule: values, significance, totals, JUnit counts.

The comparisons are built by hand, so every value and p-value is known exactly.
"""

from __future__ import annotations

import pytest

from ragmeter.errors import ConfigError
from ragmeter.report.compare import Comparison, MetricComparison
from ragmeter.report.gate import check_rules, junit_xml, parse_rule


def paired(
    metric: str, base: float, cand: float, *, p: float | None, p_adjusted: float | None = None
) -> MetricComparison:
    return MetricComparison(
        metric=metric,
        higher_is_better=True,
        n_pairs=10,
        baseline_mean=base,
        candidate_mean=cand,
        delta=cand - base,
        ci_low=None,
        ci_high=None,
        p_value=p,
        p_adjusted=p_adjusted,
    )


def comparison(
    metrics: list[MetricComparison],
    base: dict[str, float | None] | None = None,
    cand: dict[str, float | None] | None = None,
) -> Comparison:
    return Comparison(
        baseline="base",
        candidate="cand",
        n_shared_queries=10,
        only_baseline=0,
        only_candidate=0,
        correction="holm",
        confidence=0.95,
        metrics=metrics,
        baseline_aggregate={m.metric: m.baseline_mean for m in metrics} | (base or {}),
        candidate_aggregate={m.metric: m.candidate_mean for m in metrics} | (cand or {}),
        # A metric given only as aggregates has no per-query values: it exists only as totals.
        totals_only=sorted((set(base or {}) | set(cand or {})) - {m.metric for m in metrics}),
    )


def decide(c: Comparison, *rules: str, alpha: float | None = None) -> list[tuple[float | None, bool, str]]:
    return [
        (o.value, o.failed, o.reason) for o in check_rules(c, [parse_rule(r) for r in rules], alpha=alpha)
    ]


# An error rate exists only as a total (no per-query values): 4% in the baseline, 5% in the candidate.
TOTALS = comparison([], {"error_rate": 0.04}, {"error_rate": 0.05})


def test_a_totals_only_metric_is_compared_by_the_change_of_its_totals() -> None:
    [(value, failed, reason)] = decide(TOTALS, "error_rate>+0.005")
    assert value == pytest.approx(0.01, abs=1e-15)
    assert failed
    assert reason == "FAIL: error_rate changed by +0.0100 [error_rate>+0.005]"
    [(value, failed, reason)] = decide(TOTALS, "error_rate<-0.005")
    assert value == pytest.approx(0.01, abs=1e-15) and not failed
    assert reason == "ok: error_rate changed by +0.0100 [error_rate<-0.005]"


def test_a_relative_rule_on_totals_divides_by_the_baseline() -> None:
    # +0.01 on 0.04 is +25% (on the candidate's 0.05 it would be +20%).
    [(value, failed, reason)] = decide(TOTALS, "error_rate>+22%")
    assert value == pytest.approx(0.25, abs=1e-12) and failed
    assert reason == "FAIL: error_rate changed by +25.00% [error_rate>+22%]"
    [(value, failed, _)] = decide(TOTALS, "error_rate>+26%")
    assert value == pytest.approx(0.25, abs=1e-12) and not failed


def test_an_absolute_rule_reads_the_candidate_value_not_the_change() -> None:
    [(value, failed, reason)] = decide(TOTALS, "error_rate>0.045")
    assert value == 0.05 and failed
    assert reason == "FAIL: error_rate = 0.0500 [error_rate>0.045]"
    c = comparison([paired("mrr", 0.5, 0.25, p=0.01)])
    [(value, failed, reason)] = decide(c, "mrr<0.3")
    assert value == 0.25 and failed
    assert reason == "FAIL: mrr = 0.2500 [mrr<0.3]"


def test_an_absolute_rule_on_a_metric_only_the_candidate_has() -> None:
    c = comparison([], {"mrr": 0.5}, {"mrr": 0.5, "error_rate": 0.02})
    [(value, failed, _)] = decide(c, "error_rate>0.01")
    assert value == 0.02 and failed


def test_a_change_needs_the_metric_in_both_runs() -> None:
    c = comparison([], {"mrr": 0.5}, {"mrr": 0.5, "error_rate": 0.02})
    for rule in ("error_rate>+0.01", "error_rate>+5%"):
        with pytest.raises(ConfigError) as error:
            check_rules(c, [parse_rule(rule)])
        assert str(error.value) == (
            f"gate rule '{rule}': base has no total for error_rate (it has no per-query values); "
            "a gate never passes on nothing"
        )
    c = comparison([], {"error_rate": 0.02}, {"error_rate": None})
    with pytest.raises(ConfigError, match="cand has no total for error_rate"):
        check_rules(c, [parse_rule("error_rate>+0.01")])


@pytest.mark.parametrize("rule", ["mrr<-5%", "error_rate>+5%"])
def test_a_relative_change_from_zero_is_an_error(rule: str) -> None:
    c = comparison([paired("mrr", 0.0, 0.5, p=0.01)], {"error_rate": 0.0}, {"error_rate": 0.1})
    with pytest.raises(ConfigError, match=r"a relative change from a baseline .* of 0 is undefined"):
        check_rules(c, [parse_rule(rule)])


def test_a_missing_value_stops_the_gate_whatever_the_other_rules_say() -> None:
    c = comparison([paired("mrr", 0.5, 0.4, p=0.01)], {"error_rate": None}, {"error_rate": None})
    for rules in (["error_rate>+0.01", "mrr<-0.05"], ["mrr<-0.05", "error_rate>+0.01"]):
        with pytest.raises(ConfigError, match="error_rate"):
            check_rules(c, [parse_rule(r) for r in rules])


def test_paired_changes_come_from_the_paired_comparison() -> None:
    # The aggregates disagree with the paired means on purpose: the paired delta wins.
    c = comparison([paired("mrr", 0.5, 0.4, p=0.01)], {"mrr": 0.9}, {"mrr": 0.1})
    [(value, _, reason)] = decide(c, "mrr<-0.05")
    assert value == pytest.approx(-0.1, abs=1e-15)
    assert reason == "FAIL: mrr changed by -0.1000 [mrr<-0.05]"
    [(value, failed, reason)] = decide(c, "mrr<-15%")
    assert value == pytest.approx(-0.2, abs=1e-15) and failed
    assert reason == "FAIL: mrr changed by -20.00% [mrr<-15%]"


def test_alpha_filters_delta_rules_by_the_adjusted_p_value() -> None:
    # Raw p = 0.01 would be significant; Holm-adjusted 0.2 is not, and the gate reads the adjusted one.
    c = comparison([paired("mrr", 0.5, 0.4, p=0.01, p_adjusted=0.2)])
    [(_, failed, reason)] = decide(c, "mrr<-0.05", alpha=0.05)
    assert not failed
    assert reason == "ok: mrr changed by -0.1000 [mrr<-0.05] (p = 0.2, not significant at 0.05)"
    c = comparison([paired("mrr", 0.5, 0.4, p=0.2, p_adjusted=0.01)])
    [(_, failed, reason)] = decide(c, "mrr<-0.05", alpha=0.05)
    assert failed
    assert reason == "FAIL: mrr changed by -0.1000 [mrr<-0.05] (p = 0.01)"


def test_without_an_adjusted_p_value_the_raw_one_is_used() -> None:
    c = comparison([paired("mrr", 0.5, 0.4, p=0.01)])
    [(_, failed, reason)] = decide(c, "mrr<-0.05", alpha=0.05)
    assert failed and reason.endswith("(p = 0.01)")
    c = comparison([paired("mrr", 0.5, 0.4, p=0.3)])
    [(_, failed, _)] = decide(c, "mrr<-0.05", alpha=0.05)
    assert not failed


@pytest.mark.parametrize(("p", "significant"), [(0.05, False), (0.0499999, True), (0.0500001, False)])
def test_p_exactly_at_alpha_is_not_significant(p: float, significant: bool) -> None:
    c = comparison([paired("mrr", 0.5, 0.4, p=p, p_adjusted=p)])
    [(_, failed, _)] = decide(c, "mrr<-0.05", alpha=0.05)
    assert failed is significant


def test_alpha_never_filters_absolute_rules() -> None:
    c = comparison([paired("mrr", 0.5, 0.25, p=0.9, p_adjusted=0.9)])
    [(_, failed, reason)] = decide(c, "mrr<0.3", alpha=0.05)
    assert failed
    assert reason == "FAIL: mrr = 0.2500 [mrr<0.3]"


def test_alpha_only_matters_when_a_rule_is_hit() -> None:
    c = comparison([paired("mrr", 0.5, 0.49, p=0.9)])
    [(_, failed, reason)] = decide(c, "mrr<-0.05", alpha=0.05)
    assert not failed
    assert reason == "ok: mrr changed by -0.0100 [mrr<-0.05]"


def test_alpha_on_totals_has_no_p_value_to_filter_by() -> None:
    [(_, failed, reason)] = decide(TOTALS, "error_rate>+0.005", alpha=0.05)
    assert failed
    assert reason == (
        "FAIL: error_rate changed by +0.0100 [error_rate>+0.005] "
        "(totals only: no per-query values to test significance on)"
    )


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5])
def test_alpha_must_lie_strictly_between_0_and_1(alpha: float) -> None:
    c = comparison([paired("mrr", 0.5, 0.4, p=0.01)])
    with pytest.raises(ConfigError) as error:
        check_rules(c, [parse_rule("mrr<-0.05")], alpha=alpha)
    assert str(error.value) == f"--alpha must be between 0 and 1 (exclusive), got {alpha:g}"


@pytest.mark.parametrize("alpha", [1e-9, 0.999999])
def test_alpha_close_to_the_bounds_is_accepted(alpha: float) -> None:
    c = comparison([paired("mrr", 0.5, 0.4, p=1e-12, p_adjusted=1e-12)])
    [(_, failed, _)] = decide(c, "mrr<-0.05", alpha=alpha)
    assert failed


def test_an_unknown_metric_names_every_metric_of_either_run() -> None:
    c = comparison([], {"mrr": 0.5, "recall@5": 0.2}, {"mrr": 0.5, "error_rate": 0.1})
    with pytest.raises(ConfigError) as error:
        check_rules(c, [parse_rule("ndgc@10<-0.02")])
    assert str(error.value) == (
        "gate rule 'ndgc@10<-0.02': no metric 'ndgc@10' in the runs (have: error_rate, mrr, recall@5)"
    )


def test_delta_with_a_percent_threshold_is_relative() -> None:
    rule = parse_rule("delta(mrr)<5%")
    assert (rule.mode, rule.threshold) == ("relative", 0.05)
    with pytest.raises(ConfigError) as error:
        parse_rule("mrr<5%")
    assert str(error.value) == (
        "gate rule 'mrr<5%': a % threshold is a relative delta; write it signed, e.g. '-2%'"
    )


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites name="ragmeter.gate" tests="3" failures="2">
  <testsuite name="ragmeter.gate" tests="3" failures="2" errors="0">
    <testcase classname="ragmeter.gate" name="mrr&lt;-0.05">
      <failure message="FAIL: mrr changed by -0.1000 [mrr&lt;-0.05]" type="RegressionGate">FAIL: mrr changed by -0.1000 [mrr&lt;-0.05]</failure>
    </testcase>
    <testcase classname="ragmeter.gate" name="mrr&lt;-0.5">
      <system-out>ok: mrr changed by -0.1000 [mrr&lt;-0.5]</system-out>
    </testcase>
    <testcase classname="ragmeter.gate" name="error_rate&gt;0.045">
      <failure message="FAIL: error_rate = 0.0500 [error_rate&gt;0.045]" type="RegressionGate">FAIL: error_rate = 0.0500 [error_rate&gt;0.045]</failure>
    </testcase>
  </testsuite>
</testsuites>
"""


def test_junit_report_counts_every_failed_rule() -> None:
    c = comparison([paired("mrr", 0.5, 0.4, p=0.01)], {"error_rate": 0.04}, {"error_rate": 0.05})
    outcomes = check_rules(c, [parse_rule(r) for r in ("mrr<-0.05", "mrr<-0.5", "error_rate>0.045")])
    assert junit_xml(outcomes) == JUNIT


def test_junit_report_of_all_passing_rules() -> None:
    c = comparison([paired("mrr", 0.5, 0.4, p=0.01)])
    xml = junit_xml(check_rules(c, [parse_rule("mrr<-0.5")]), suite="ci")
    assert '<testsuites name="ci" tests="1" failures="0">' in xml
    assert '<testcase classname="ci" name="mrr&lt;-0.5">' in xml
    assert "<failure" not in xml


def test_alpha_with_no_paired_query_is_an_error_not_a_crash() -> None:
    # Both runs have an aggregate, but no query has the metric in both: there is nothing to compare.
    unpaired = MetricComparison(
        metric="mrr",
        higher_is_better=True,
        n_pairs=0,
        baseline_mean=None,
        candidate_mean=None,
        delta=None,
        ci_low=None,
        ci_high=None,
        p_value=None,
    )
    c = comparison([unpaired], {"mrr": 0.5}, {"mrr": 0.3})
    with pytest.raises(ConfigError) as error:
        check_rules(c, [parse_rule("mrr<-0.1")], alpha=0.05)
    assert str(error.value) == (
        "gate rule 'mrr<-0.1': no query has a value for mrr in both base and cand; a gate never passes on nothing"
    )


@pytest.mark.parametrize(
    ("rule", "failed"),
    [
        ("x<=+0.25", True),
        ("x<+0.25", False),
        ("x>=+0.25", True),
        ("x>+0.25", False),
        ("x>=0.5", True),
        ("x>0.5", False),
        ("x<=0.5", True),
        ("x<0.5", False),
    ],
)
def test_a_value_equal_to_the_threshold_fails_only_inclusive_rules(rule: str, failed: bool) -> None:
    c = comparison([], {"x": 0.25}, {"x": 0.5})  # exact in binary: the change is exactly +0.25
    [(value, outcome, _)] = decide(c, rule)
    assert value in (0.25, 0.5) and outcome is failed
