from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from ragmeter.report.stats import benjamini_hochberg, bootstrap_ci, holm, permutation_pvalue


def brute_force_pvalue(diffs: list[float]) -> float:
    """Enumerate every sign pattern by hand: the definition, written the slow way."""
    observed = abs(sum(diffs))
    extreme = total = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        total += 1
        extreme += abs(sum(s * d for s, d in zip(signs, diffs, strict=True))) >= observed - 1e-12
    return extreme / total


@pytest.mark.parametrize(
    "diffs",
    [
        [0.1, 0.2, 0.3, 0.1],
        [0.5, -0.25, 0.125, 0.75, -0.5, 0.25],
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
        [0.3, -0.1, 0.2, 0.0, 0.4, -0.2, 0.1],
    ],
)
def test_exact_permutation_pvalue_matches_enumeration_and_scipy(diffs: list[float]) -> None:
    ours = permutation_pvalue(diffs)
    nonzero = [d for d in diffs if d != 0]
    assert ours == pytest.approx(brute_force_pvalue(nonzero), abs=1e-12)
    x = np.asarray(diffs)
    ref = sps.permutation_test(
        (x, np.zeros_like(x)),
        lambda a, b: np.mean(a - b),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    assert ours == pytest.approx(min(1.0, ref.pvalue), abs=1e-9)


def test_monte_carlo_pvalue_is_close_to_exact_and_seeded() -> None:
    rng = np.random.default_rng(3)
    diffs = rng.normal(0.05, 0.2, size=40)
    a = permutation_pvalue(diffs, n_permutations=20_000, seed=1)
    assert a == permutation_pvalue(diffs, n_permutations=20_000, seed=1)
    ref = sps.permutation_test(
        (diffs, np.zeros_like(diffs)),
        lambda x, y: np.mean(x - y),
        permutation_type="samples",
        n_resamples=50_000,
        alternative="two-sided",
        rng=np.random.default_rng(0),
    )
    assert a == pytest.approx(ref.pvalue, abs=0.02)


def test_no_difference_gives_p_one() -> None:
    assert permutation_pvalue([0.0, 0.0, 0.0]) == 1.0
    assert permutation_pvalue([]) == 1.0


def test_bootstrap_ci_covers_the_true_mean_about_95_percent() -> None:
    rng = np.random.default_rng(7)
    true_mean, covered, trials = 0.1, 0, 200
    for t in range(trials):
        sample = rng.normal(true_mean, 0.3, size=40)
        low, high = bootstrap_ci(sample, n_resamples=2_000, seed=t)
        covered += low <= true_mean <= high
    assert 0.90 <= covered / trials <= 0.99


def test_bootstrap_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="no paired differences"):
        bootstrap_ci([])
    with pytest.raises(ValueError, match="finite"):
        bootstrap_ci([float("nan")])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci([1.0], confidence=1.5)


def test_holm_and_bh_by_hand() -> None:
    # Holm: sorted 0.01, 0.03, 0.04 → 3·0.01, max(0.03, 2·0.03), max(0.06, 1·0.04)
    assert holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert holm([0.5, 0.9]) == [1.0, 1.0]
    # BH: 0.04·3/3, 0.03·3/2 = 0.045 → min with 0.04, 0.01·3/1
    assert benjamini_hochberg([0.01, 0.04, 0.03]) == [0.03, 0.04, 0.04]
    assert holm([]) == [] and benjamini_hochberg([]) == []
