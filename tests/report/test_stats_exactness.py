"""The paired statistics to the last bit: exact/sampled switch, the +1 correction, scipy's intervals.

Where the answer is known exactly (enumeration in integers, a binomial tail, scipy's own
percentile bootstrap with the same seed) the tests compare exactly, not within a tolerance.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ragmeter.report.stats import (
    benjamini_hochberg,
    bootstrap_ci,
    holm,
    paired_percentile_ci,
    paired_percentile_pvalue,
    percentile_delta,
    permutation_pvalue,
)


def exact_integer_pvalue(ks: list[int]) -> float:
    """The sign-flip p-value of integer differences (no rounding anywhere), zeros dropped."""
    nonzero = [k for k in ks if k]
    if not nonzero:
        return 1.0
    observed = abs(sum(nonzero))
    patterns = list(itertools.product((1, -1), repeat=len(nonzero)))
    extreme = sum(
        abs(sum(s * k for s, k in zip(signs, nonzero, strict=True))) >= observed for signs in patterns
    )
    return extreme / len(patterns)


def rademacher_tail(n: int, observed: int) -> float:
    """P(|sum of n random signs| >= observed): the exact sign-flip p-value of n differences of size 1."""
    heads = np.arange(n + 1)
    extreme = np.abs(2 * heads - n) >= observed
    return float(sps.binom.pmf(heads[extreme], n, 0.5).sum())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-9, 9), min_size=1, max_size=10))
def test_exact_pvalue_of_decimal_differences_equals_integer_enumeration(ks: list[int]) -> None:
    # Differences like 0.1, 0.2, -0.3 tie in exact arithmetic but not always in floating point.
    assert permutation_pvalue([k / 10 for k in ks]) == exact_integer_pvalue(ks)


def test_the_exact_test_covers_16_distinct_differences_and_no_more() -> None:
    # Sizes with no common step (no lattice): 16 are enumerated, 17 sampled.
    sizes = np.random.default_rng(0).uniform(1.0, 2.0, 17)
    assert permutation_pvalue(sizes[:16]) == 2 / 2**16  # only the two constant sign patterns
    # 17: sampled. No random pattern of 999 is that extreme, so p = (0 + 1) / (999 + 1).
    assert permutation_pvalue(sizes, n_permutations=999) == 1 / 1000


def test_differences_of_one_size_stay_exact_at_any_n() -> None:
    # 0/1 metrics: every difference is +-1, the sums are a binomial: exact (McNemar), never sampled.
    assert permutation_pvalue([1.0] * 17, n_permutations=999) == 2 / 2**17
    assert permutation_pvalue([0.25] * 40, n_permutations=1) == 2 / 2**40


def test_zero_differences_do_not_count_towards_the_limit() -> None:
    assert permutation_pvalue([1.0] * 16 + [0.0] * 10) == 2 / 2**16
    assert permutation_pvalue([0.0] * 30 + [0.5]) == 1.0
    assert permutation_pvalue([0.0, -0.0]) == 1.0


@pytest.mark.parametrize("n_permutations", [1, 99, 1000])
def test_a_sampled_p_value_is_never_zero(n_permutations: int) -> None:
    diffs = np.random.default_rng(3).uniform(0.2, 0.3, 40)  # all one sign, no common step: sampled
    p = permutation_pvalue(diffs, n_permutations=n_permutations, seed=3)
    assert p == 1 / (n_permutations + 1)


@pytest.mark.parametrize(("n", "positive"), [(17, 13), (40, 27), (300, 170)])
def test_differences_of_size_1_give_the_exact_binomial_tail(n: int, positive: int) -> None:
    diffs = [1.0] * positive + [-1.0] * (n - positive)
    exact = rademacher_tail(n, abs(2 * positive - n))
    assert 0.01 < exact < 0.99
    for n_permutations in (100, 20_000):  # no sampling: the resamples play no part
        assert permutation_pvalue(diffs, n_permutations=n_permutations, seed=7) == pytest.approx(
            exact, rel=1e-9
        )


@pytest.mark.parametrize(("n", "n_permutations"), [(17, 4000), (40, 4000), (300, 10_000)])
def test_a_sampled_p_value_is_b_plus_one_over_B_plus_one_near_the_reference(
    n: int, n_permutations: int
) -> None:
    # Continuous differences: sampled (n = 300 in several chunks); scipy's permutation test as reference.
    diffs = np.random.default_rng(n).normal(0.3 / n**0.5, 0.3, n)  # about 1 standard error from 0
    p = permutation_pvalue(diffs, n_permutations=n_permutations, seed=7)
    extreme = p * (n_permutations + 1) - 1
    assert extreme == pytest.approx(round(extreme), abs=1e-6) and 0 <= round(extreme) <= n_permutations
    signs = np.random.default_rng(0).choice([-1.0, 1.0], size=(20_000, n))  # an independent sample
    ref = float(np.mean(np.abs(signs @ diffs) >= abs(diffs.sum()) - 1e-12))
    assert 0.01 < ref < 0.99
    assert abs(p - ref) < 4 * math.sqrt(ref * (1 - ref) / n_permutations) + 0.01


def test_the_sampled_p_value_is_seeded() -> None:
    diffs = np.random.default_rng(5).normal(0.05, 0.3, size=30)
    assert permutation_pvalue(diffs, n_permutations=500, seed=1) == permutation_pvalue(
        diffs, n_permutations=500, seed=1
    )
    assert permutation_pvalue(diffs, n_permutations=500, seed=1) != permutation_pvalue(
        diffs, n_permutations=500, seed=2
    )


@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("n", [7, 60, 1500])
def test_bootstrap_interval_is_scipys_percentile_bootstrap(confidence: float, n: int) -> None:
    sample = np.random.default_rng(n).normal(0.2, 0.5, size=n)
    ours = bootstrap_ci(sample, confidence=confidence, n_resamples=3000, seed=5)
    ref = sps.bootstrap(
        (sample,),
        np.mean,
        n_resamples=3000,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(5),
    ).confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("confidence", [0.8, 0.95])
def test_paired_percentile_interval_is_scipys_paired_bootstrap(confidence: float) -> None:
    rng = np.random.default_rng(2)
    base, cand = rng.exponential(1.0, size=1500), rng.exponential(1.2, size=1500)
    ours = paired_percentile_ci(base, cand, 95, confidence=confidence, n_resamples=2000, seed=4)

    def delta(b: np.ndarray, c: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.percentile(c, 95, axis=axis) - np.percentile(b, 95, axis=axis)

    ref = sps.bootstrap(
        (base, cand),
        delta,
        paired=True,
        vectorized=True,
        n_resamples=2000,
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(4),
    ).confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 95.0])
def test_confidence_must_lie_strictly_between_0_and_1(confidence: float) -> None:
    with pytest.raises(ValueError) as error:
        bootstrap_ci([0.1, 0.2], confidence=confidence)
    assert str(error.value) == f"confidence must be in (0, 1), got {confidence}"


def test_differences_must_be_one_dimensional_finite_and_paired() -> None:
    with pytest.raises(ValueError) as error:
        permutation_pvalue([[0.1, 0.2]])
    assert str(error.value) == "expected a one-dimensional sequence of differences"
    for bad in (float("inf"), float("nan")):
        with pytest.raises(ValueError) as error:
            permutation_pvalue([0.1, bad])
        assert str(error.value) == "differences must be finite numbers"
    with pytest.raises(ValueError) as error:
        percentile_delta([1.0, 2.0], [1.0], 50)
    assert str(error.value) == "baseline and candidate need the same number of paired values"
    with pytest.raises(ValueError) as error:
        paired_percentile_ci([], [], 50)
    assert str(error.value) == "no paired values to resample"
    with pytest.raises(ValueError) as error:
        bootstrap_ci([])
    assert str(error.value) == "no paired differences to resample"


def test_percentile_delta_is_candidate_minus_baseline() -> None:
    assert percentile_delta([1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0], 50) == 2.5
    assert percentile_delta([2.0, 4.0, 6.0, 8.0], [1.0, 2.0, 3.0, 4.0], 100) == -4.0


def brute_percentile_pvalue(base: list[float], cand: list[float], q: float) -> float:
    """Swap each differing pair or not, every way, one np.percentile at a time."""
    observed = abs(np.percentile(cand, q) - np.percentile(base, q))
    differ = [i for i in range(len(base)) if base[i] != cand[i]]
    extreme = total = 0
    for swap in itertools.product((False, True), repeat=len(differ)):
        b, c = list(base), list(cand)
        for i, s in zip(differ, swap, strict=True):
            if s:
                b[i], c[i] = c[i], b[i]
        total += 1
        extreme += abs(np.percentile(c, q) - np.percentile(b, q)) >= observed - 1e-12
    return extreme / total if differ else 1.0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=7),
    st.sampled_from([50.0, 90.0, 95.0]),
)
def test_exact_percentile_pvalue_equals_brute_force_swaps(pairs: list[tuple[int, int]], q: float) -> None:
    base = [b / 4 for b, _ in pairs]
    cand = [c / 4 for _, c in pairs]
    assert paired_percentile_pvalue(base, cand, q) == brute_percentile_pvalue(base, cand, q)


def counted_percentile_pvalue(n: int, extra: int, q: float) -> float:
    """The exact p-value for n pairs (0, 1) and ``extra`` pairs (5, 5): it only depends on how many ones stay."""

    def stat(kept: int) -> float:
        cand = [1.0] * kept + [0.0] * (n - kept) + [5.0] * extra
        base = [0.0] * kept + [1.0] * (n - kept) + [5.0] * extra
        return abs(float(np.percentile(cand, q) - np.percentile(base, q)))

    observed = stat(n)
    return sum(math.comb(n, kept) for kept in range(n + 1) if stat(kept) >= observed - 1e-12) / 2**n


@pytest.mark.parametrize(("extra", "q"), [(0, 50.0), (24, 20.0), (24, 30.0)])
def test_percentile_test_is_exact_up_to_16_differing_pairs(extra: int, q: float) -> None:
    # With 40 pairs the 2^16 swap patterns are enumerated in two chunks.
    p = paired_percentile_pvalue([0.0] * 16 + [5.0] * extra, [1.0] * 16 + [5.0] * extra, q)
    assert p == counted_percentile_pvalue(16, extra, q)
    assert 0 < p < 1


def test_percentile_test_samples_from_17_differing_pairs() -> None:
    # 18 pairs (0, 1): the medians tie only when 9 ones stay; exact p = 1 - C(18, 9) / 2^18.
    n_permutations = 3000
    p = paired_percentile_pvalue([0.0] * 18, [1.0] * 18, 50, n_permutations=n_permutations, seed=1)
    extreme = p * (n_permutations + 1) - 1
    assert extreme == pytest.approx(round(extreme), abs=1e-6)
    exact = 1 - math.comb(18, 9) / 2**18
    assert abs(p - exact) < 4 * math.sqrt(exact * (1 - exact) / n_permutations) + 1 / n_permutations
    # 17 pairs: every swap pattern moves the median by the full 1, so p = (B + 1) / (B + 1).
    assert paired_percentile_pvalue([0.0] * 17, [1.0] * 17, 50, n_permutations=99) == 1.0
    assert paired_percentile_pvalue([1.0, 2.0], [1.0, 2.0], 50) == 1.0


def holm_reference(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = max(min(1.0, (m - j) * p[order[j]]) for j in range(rank + 1))
    return out


def bh_reference(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = min(min(1.0, m * p[order[j]] / (j + 1)) for j in range(rank, m))
    return out


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from([0.001, 0.01, 0.02, 0.03, 0.04, 0.05, 0.2, 0.5, 0.9, 1.0]), max_size=9))
def test_holm_and_bh_equal_their_definitions(p: list[float]) -> None:
    assert holm(p) == pytest.approx(holm_reference(p), abs=1e-14)
    assert benjamini_hochberg(p) == pytest.approx(bh_reference(p), abs=1e-14)


def test_adjusted_p_values_are_rounded_to_clean_decimals() -> None:
    assert holm([0.1] * 7) == [0.7] * 7  # 7 * 0.1 is 0.7000000000000001 in binary
    assert benjamini_hochberg([0.1, 0.1, 0.1]) == [0.1, 0.1, 0.1]
    assert holm([0.3, 0.01]) == [0.3, 0.02]
    assert benjamini_hochberg([0.3, 0.01]) == [0.3, 0.02]
