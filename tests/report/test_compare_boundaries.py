"""A paired comparison at its edges: a p-value exactly at alpha, the settings it records, the ones it refuses."""

from __future__ import annotations

import pytest

from ragmeter.report.compare import MetricComparison, apply_correction, compare_results
from ragmeter.report.gate import check_rules, parse_rule
from ragmeter.results import EvalResult


def hits(values: list[float]) -> EvalResult:
    return EvalResult(
        aggregate={"hit@1": sum(values) / len(values)},
        per_query={f"q{i}": {"hit@1": v} for i, v in enumerate(values)},
        n_queries=len(values),
        n_scored={"hit@1": len(values)},
        n_skipped={"hit@1": 0},
    )


# Five queries the candidate finds and the baseline does not: the exact (McNemar) p-value is 2 / 2^5.
BASE, CAND = hits([0.0] * 5 + [1.0] * 3), hits([1.0] * 8)
P = 2 / 2**5


@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_a_p_value_exactly_at_alpha_is_not_significant(correction: str) -> None:
    at = compare_results(BASE, CAND, alpha=P, correction=correction, n_resamples=100).metrics[0]
    assert (at.p_value, at.p_adjusted, at.significant, at.untestable) == (P, P, False, None)
    above = compare_results(BASE, CAND, alpha=P * 1.001, correction=correction, n_resamples=100).metrics[0]
    assert above.significant is True


def test_the_gate_lets_a_change_with_p_exactly_at_alpha_pass() -> None:
    # hit@1 rose by 0.625 > 0.5: the rule is hit, but p = alpha is not significant.
    def gate(alpha: float) -> tuple[bool, str]:
        comparison = compare_results(CAND, BASE, alpha=alpha, n_resamples=100)  # the candidate lost the five
        [outcome] = check_rules(comparison, [parse_rule("hit@1<-0.5")], alpha=alpha)
        return outcome.failed, outcome.reason

    assert gate(P) == (
        False,
        f"ok: hit@1 changed by -0.6250 [hit@1<-0.5] (p = 0.0625, not significant at {P})",
    )
    assert gate(P * 1.001)[0]


def test_the_comparison_records_the_settings_it_was_made_with() -> None:
    c = compare_results(BASE, CAND, alpha=0.1, power=0.9, n_resamples=300, seed=4, confidence=0.8)
    assert (c.alpha, c.power, c.n_resamples, c.seed, c.confidence) == (0.1, 0.9, 300, 4, 0.8)
    [m] = c.metrics
    assert m.power is not None and (m.power.alpha, m.power.power) == (0.1, 0.9)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"alpha": 0.0}, "alpha must be between 0 and 1 (exclusive), got 0.0"),
        ({"alpha": 1.0}, "alpha must be between 0 and 1 (exclusive), got 1.0"),
        ({"power": 0.0}, "power must be between 0 and 1 (exclusive), got 0.0"),
        ({"power": 1.0}, "power must be between 0 and 1 (exclusive), got 1.0"),
        ({"power": 1.5}, "power must be between 0 and 1 (exclusive), got 1.5"),
        ({"correction": "bonferroni"}, "correction must be 'holm', 'bh' or 'none', got 'bonferroni'"),
    ],
)
def test_settings_it_refuses(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        compare_results(BASE, CAND, n_resamples=100, **options)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_a_correction_it_does_not_know_is_refused() -> None:
    tested = [compare_results(BASE, CAND, n_resamples=100).metrics[0]]
    with pytest.raises(ValueError) as caught:
        apply_correction(tested, "sidak", alpha=0.05)
    assert str(caught.value) == "correction must be 'holm', 'bh' or 'none', got 'sidak'"
    assert apply_correction(list[MetricComparison](), "holm", alpha=0.05) == 0


def test_no_shared_metric_names_what_each_run_has() -> None:
    from ragmeter.errors import InputError

    left = EvalResult(
        aggregate={"mrr": 0.5}, per_query={"q": {"mrr": 0.5}}, n_queries=1, n_scored={}, n_skipped={}
    )
    right = EvalResult(aggregate={}, per_query={"q": {}}, n_queries=1, n_scored={}, n_skipped={})
    with pytest.raises(InputError) as caught:
        compare_results(left, right)
    assert str(caught.value) == "baseline (mrr) and candidate (no metric) share no metric: nothing to compare"


def test_an_absolute_rule_on_a_metric_no_query_scored_names_the_rule() -> None:
    from ragmeter.errors import ConfigError

    base = EvalResult(
        aggregate={"hit@1": 0.5, "mrr": None},
        per_query={"q": {"hit@1": 0.5}},
        n_queries=1,
        n_scored={},
        n_skipped={},
    )
    comparison = compare_results(base, base, n_resamples=100)
    with pytest.raises(ConfigError) as caught:
        check_rules(comparison, [parse_rule("mrr<0.5")])
    assert str(caught.value) == (
        "gate rule 'mrr<0.5': candidate has no value for mrr (no query was scored); a gate never passes on nothing"
    )
