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
