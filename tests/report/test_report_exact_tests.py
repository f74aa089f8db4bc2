"""The paired sign-flip test: exact by enumeration where it can be, McNemar for 0/1 values, (b+1)/(B+1) otherwise."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from ragmeter.report import DEFAULT_RESAMPLES
from ragmeter.report.stats import (
    effect_size,
    min_attainable_pvalue,
    permutation_pvalue,
)


def brute_force(diffs: list[float]) -> float:
    nonzero = [d for d in diffs if d != 0]
    observed = abs(sum(nonzero))
    hits = total = 0
    for signs in itertools.product((1, -1), repeat=len(nonzero)):
        total += 1
        hits += abs(sum(s * d for s, d in zip(signs, nonzero, strict=True))) >= observed - 1e-9
    return hits / max(total, 1)


@pytest.mark.parametrize("seed", range(6))
def test_exact_on_tie_heavy_metric_values_equals_enumeration(seed: int) -> None:
    """Per-query differences of real metrics (thirds, tenths, reciprocal ranks) tie a lot; ties decide p."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 13))
    kinds = [
        rng.integers(-3, 4, n) / 3,  # recall with three relevant items
        rng.integers(-5, 6, n) / 10,  # precision@10
        1 / rng.integers(1, 6, n) - 1 / rng.integers(1, 6, n),  # reciprocal ranks
        rng.normal(0, 0.3, n),  # continuous
    ]
    for diffs in kinds:
        assert permutation_pvalue(diffs) == pytest.approx(brute_force(list(diffs)), abs=1e-12)


@pytest.mark.parametrize(("better", "worse"), [(9, 1), (30, 12), (0, 5), (400, 350), (900, 850)])
def test_on_0_1_metrics_it_is_the_exact_mcnemar_test(better: int, worse: int) -> None:
    """Only discordant queries count; the test is exact however many there are (no Monte Carlo)."""
    diffs = [1.0] * better + [-1.0] * worse + [0.0] * 50
    assert permutation_pvalue(diffs, seed=1) == pytest.approx(
        sps.binomtest(better, better + worse).pvalue, rel=1e-12
    )
    assert permutation_pvalue(diffs, seed=1) == permutation_pvalue(
        diffs, seed=2
    )  # exact: the seed plays no part


def test_precision_at_10_stays_exact_with_many_queries() -> None:
    rng = np.random.default_rng(3)
    diffs = rng.integers(-3, 4, 400) / 10 + 0.02 * (rng.random(400) < 0.2)
    diffs = np.round(diffs, 2)
    p = permutation_pvalue(diffs, seed=1)
    assert p == permutation_pvalue(diffs, seed=99)  # exact (seed-free)
    signs = np.random.default_rng(0).choice([-1.0, 1.0], size=(20_000, len(diffs)))  # a sampled reference
    ref = float(np.mean(np.abs(signs @ diffs) >= abs(diffs.sum()) - 1e-9))
    assert 0.01 < ref < 0.99
    assert p == pytest.approx(ref, abs=0.015)


def test_monte_carlo_p_is_never_0_and_is_b_plus_1_over_b_plus_1() -> None:
    rng = np.random.default_rng(4)
    diffs = rng.normal(1.0, 0.1, 40)  # far from 0, continuous: no permutation is as extreme
    p = permutation_pvalue(diffs, n_permutations=999)
    assert p == 1 / 1000
    assert DEFAULT_RESAMPLES == 10_000
    assert permutation_pvalue(diffs) == 1 / (DEFAULT_RESAMPLES + 1)


def test_min_attainable_pvalue_and_effect_size() -> None:
    assert [min_attainable_pvalue(n) for n in (0, 1, 5, 6)] == [1.0, 1.0, 0.0625, 0.03125]
    assert permutation_pvalue([0.2] * 5) == min_attainable_pvalue(5)
    rng = np.random.default_rng(2)
    d = rng.normal(0.1, 0.3, 25)
    assert effect_size(d) == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
    t = sps.ttest_1samp(d, 0.0).statistic
    assert effect_size(d) == pytest.approx(t / np.sqrt(len(d)), rel=1e-12)  # Sakai: ES = |t| / sqrt(n)
    assert effect_size([0.3, 0.3, 0.3]) is None and effect_size([0.1]) is None
