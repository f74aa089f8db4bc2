"""Statistics and power at their edges: the common step of the differences, defaults, messages, tiny spreads."""

from __future__ import annotations

import numpy as np
import pytest

from ragmeter.report.power import (
    mde_t,
    n_for_delta_t,
    n_for_delta_z,
    one_run_power,
    paired_power,
    t_power,
    t_quantile,
    t_sf,
)
from ragmeter.report.stats import _quantum, permutation_pvalue


@pytest.mark.parametrize(
    ("sizes", "quantum"),
    [([1.5, 3.0], 1.5), ([0.7, 2.1], 0.7), ([2.5], 2.5), ([0.2, 0.5, 0.3], 0.1), ([4.0, 6.0], 2.0)],
)
def test_the_common_step_is_the_largest_one(sizes: list[float], quantum: float) -> None:
    assert _quantum(np.array(sizes)) == quantum


def test_the_default_seed_is_0() -> None:
    diffs = np.random.default_rng(5).normal(0.05, 0.3, size=30)  # continuous: sampled
    assert permutation_pvalue(diffs, n_permutations=300) == permutation_pvalue(
        diffs, n_permutations=300, seed=0
    )


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mde_t(0.15, 1), "a paired t-test needs at least 2 pairs, got 1"),
        (lambda: mde_t(0.0, 10), "the standard deviation must be positive, got 0.0"),
        (lambda: n_for_delta_t(0.1, 0.0), "a change of 0 cannot be detected"),
        (lambda: n_for_delta_t(0.0, 0.1), "the standard deviation must be positive, got 0.0"),
        (lambda: t_power(0.5, 1), "a paired t-test needs at least 2 pairs, got 1"),
        (lambda: t_sf(1.0, 0), "degrees of freedom must be at least 1, got 0"),
        (lambda: t_quantile(1.5, 5), "p must be in (0, 1), got 1.5"),
    ],
)
def test_what_power_refuses_says_why(call: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        call()  # type: ignore[operator]
    assert str(caught.value) == message


@pytest.mark.parametrize("alpha", [0.01, 0.1])
def test_power_at_a_change_uses_the_comparisons_alpha(alpha: float) -> None:
    graded = paired_power([0.2, 0.4, 0.6, 0.8] * 10, [0.3, 0.4, 0.5, 0.9] * 10, alpha=alpha)
    assert graded.spread is not None
    assert graded.power_at(0.05) == t_power(0.05 / graded.spread, 40, alpha=alpha)


def test_a_spread_just_above_the_noise_floor_is_a_spread() -> None:
    # An sd below 1e-12 of the values' scale (at least 1) is rounding noise; one of 1.16e-12 is not.
    kept = one_run_power([0.0, 2.2e-12] * 5)
    assert kept.method == "one run, t" and kept.mde is not None
    assert one_run_power([0.0, 1.2e-12] * 5).mde is None


def test_queries_needed_by_the_normal_approximation_is_symmetric() -> None:
    assert n_for_delta_z(0.2, 0.05) == n_for_delta_z(0.2, -0.05) == 126


ALPHA, POWER = 0.01, 0.9  # not the defaults: every step must pass them on


def test_a_pairs_power_is_at_the_alpha_and_power_asked_for() -> None:
    graded = paired_power([0.2, 0.4, 0.6, 0.8] * 10, [0.3, 0.4, 0.5, 0.9] * 10, alpha=ALPHA, power=POWER)
    assert graded.method == "paired t" and graded.spread is not None
    assert graded.mde == mde_t(graded.spread, 40, alpha=ALPHA, power=POWER)
    assert t_power(graded.mde / graded.spread, 40, alpha=ALPHA) == pytest.approx(POWER, abs=1e-9)
    assert graded.queries_for(0.05) == n_for_delta_t(graded.spread, 0.05, alpha=ALPHA, power=POWER)
    assert graded.detects(graded.mde) and not graded.detects(graded.mde * (1 - 1e-9))  # at the MDE: detected


@pytest.mark.parametrize("values", [[0.0, 1.0] * 50, [0.0, 0.0, 1.0] * 30])
def test_one_runs_mcnemar_plan_is_at_the_alpha_and_power_asked_for(values: list[float]) -> None:
    from ragmeter.report.power import mcnemar_mde, mcnemar_n

    plan = one_run_power(values, alpha=ALPHA, power=POWER)
    assert plan.method == "one run, McNemar" and plan.spread is not None
    assert plan.mde == mcnemar_mde(plan.spread, len(values), alpha=ALPHA, power=POWER)
    assert plan.queries_for(0.1) == mcnemar_n(plan.spread, 0.1, alpha=ALPHA, power=POWER)


def test_why_there_is_no_mde_names_the_case() -> None:
    assert (
        one_run_power([0.4] * 10).reason
        == "every query has the same value: the spread of the differences is unknown"
    )
    same = paired_power([0.0, 1.0] * 5, [0.0, 1.0] * 5)  # 0/1 runs that never disagree: one run's bound
    assert same.method == "one run, McNemar" and same.mde is not None


def test_rounding_noise_on_large_values_is_no_spread() -> None:
    # An sd of 5e-11 on values near 1000 is below 1e-12 of their scale: no spread, no MDE.
    assert one_run_power([1000.0, 1000.0 + 1e-10] * 5).mde is None
    assert one_run_power([1000.0, 1000.1] * 5).mde is not None
