"""The statistics of Monte Carlo verification: worked values, scipy agreement, invariants."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import log_ndtr
from scipy.stats import fisher_exact

from ragmeter.mining.stats import (
    association_z,
    fisher3_all,
    fisher_one_sided,
    holm,
    log_norm_cdf,
    newcombe_interval,
    wilson_interval,
)
from ragmeter.mining.structures import structure_posterior


def test_fisher_five_of_five_vs_none_of_five_is_one_in_252() -> None:
    assert fisher_one_sided(5, 5, 0, 5) == pytest.approx(1 / 252, rel=1e-15)


def _scipy_greater(passes_in: int, n_in: int, passes_out: int, n_out: int) -> float:
    table = [[passes_in, n_in - passes_in], [passes_out, n_out - passes_out]]
    return float(fisher_exact(table, alternative="greater").pvalue)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 60).flatmap(lambda n_in: st.tuples(st.just(n_in), st.integers(0, n_in))),
    st.integers(1, 60).flatmap(lambda n_out: st.tuples(st.just(n_out), st.integers(0, n_out))),
)
def test_fisher_agrees_with_scipy(inside: tuple[int, int], outside: tuple[int, int]) -> None:
    (n_in, p_in), (n_out, p_out) = inside, outside
    assert fisher_one_sided(p_in, n_in, p_out, n_out) == pytest.approx(
        _scipy_greater(p_in, n_in, p_out, n_out), rel=1e-9, abs=1e-300
    )


@pytest.mark.parametrize("table", [(2900, 3000, 2800, 3000), (1500, 3000, 1490, 3100), (10, 4000, 0, 4000)])
def test_fisher_log_space_path_agrees_with_scipy(table: tuple[int, int, int, int]) -> None:
    assert fisher_one_sided(*table) == pytest.approx(_scipy_greater(*table), rel=1e-7, abs=1e-300)


def test_fisher_empty_group_is_no_evidence() -> None:
    assert fisher_one_sided(0, 0, 4, 9) == 1.0
    assert fisher_one_sided(3, 9, 0, 0) == 1.0
    with pytest.raises(ValueError, match="passes cannot exceed trials"):
        fisher_one_sided(6, 5, 0, 5)


# Newcombe (1998), "Interval estimation for the difference between independent proportions",
# Statistics in Medicine 17:873-890, Table II, method 10 (hybrid score).
NEWCOMBE = [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((6, 7, 2, 7), (0.0582, 0.8062)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0000)),
    ((10, 10, 0, 10), (0.6075, 1.0000)),
]


@pytest.mark.parametrize(("counts", "expected"), NEWCOMBE)
def test_newcombe_published_examples(
    counts: tuple[int, int, int, int], expected: tuple[float, float]
) -> None:
    interval = newcombe_interval(*counts)
    assert interval is not None
    assert interval[0] == pytest.approx(expected[0], abs=5e-5)
    assert interval[1] == pytest.approx(expected[1], abs=5e-5)


def test_newcombe_undefined_without_trials_on_one_side() -> None:
    assert newcombe_interval(3, 5, 0, 0) is None
    assert wilson_interval(0, 0) is None


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_rate_and_stays_in_unit_interval(counts: tuple[int, int]) -> None:
    passes, n = counts
    interval = wilson_interval(passes, n)
    assert interval is not None
    low, high = interval
    assert 0.0 <= low <= passes / n <= high <= 1.0


def test_holm_worked_example() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3*0.01, max(0.03, 2*0.03), max(0.06, 1*0.04)
    assert holm([0.04, 0.01, 0.03]) == pytest.approx([0.06, 0.03, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_is_monotone_and_at_least_the_raw_p(pvalues: list[float]) -> None:
    adjusted = holm(pvalues)
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    assert all(adjusted[i] >= pvalues[i] - 1e-15 for i in range(len(pvalues)))
    assert all(adjusted[a] <= adjusted[b] + 1e-15 for a, b in itertools.pairwise(order))
    assert all(v <= 1.0 for v in adjusted)


def test_log_norm_cdf_matches_scipy_over_the_tails() -> None:
    z = np.linspace(-60, 8, 400)
    assert np.allclose(log_norm_cdf(z), log_ndtr(z), rtol=2e-6, atol=1e-7)


def test_association_z_is_zero_when_undefined() -> None:
    assert association_z(0, 0, 3, 6) == 0.0
    assert association_z(5, 5, 5, 5) == 0.0
    assert association_z(9, 10, 1, 10) > 3


def test_fisher3_takes_the_best_view_times_three() -> None:
    rng = np.random.default_rng(4)
    x = rng.random((64, 5)) < 0.5
    y = (x[:, 0] | x[:, 1]) & (rng.random(64) < 0.95)  # an OR structure of docs 0 and 1
    tests = fisher3_all(x, y)
    for d, test in enumerate(tests):
        e = test.partner
        assert e is not None and e != d
        views = {
            "all_trials": np.ones(64, dtype=bool),
            "partner_present": x[:, e],
            "partner_absent": ~x[:, e],
        }
        ps = {}
        for name, mask in views.items():
            xs, ys = x[mask, d], y[mask]
            n_in, n_out = int(xs.sum()), int((~xs).sum())
            p_in, p_out = int((xs & ys).sum()), int((~xs & ys).sum())
            ps[name] = 1.0 if n_in == 0 or n_out == 0 else _scipy_greater(p_in, n_in, p_out, n_out)
        assert test.p == pytest.approx(min(1.0, 3 * min(ps.values())), rel=1e-9)
        assert ps[test.view] == pytest.approx(min(ps.values()), rel=1e-9)
    # the partner of an OR document is its OR partner; the best view is "partner absent"
    assert tests[0].partner == 1 and tests[0].view == "partner_absent"


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 8),
    st.integers(0, 80),
    st.integers(0, 2**32 - 1),
    st.floats(0.0, 0.6),
    st.floats(0.05, 0.95),
)
def test_posterior_sums_to_one(m: int, n: int, seed: int, gap: float, prior_none: float) -> None:
    rng = np.random.default_rng(seed)
    x = rng.random((n, m)) < 0.5
    y = rng.random(n) < 0.5
    post = structure_posterior(x, y, gap=gap, prior_none=prior_none)
    assert post.total() == pytest.approx(1.0, abs=1e-9)
    assert np.all(post.p_relevant >= -1e-12) and np.all(post.p_relevant <= 1 + 1e-9)
    assert post.p_single.size == m and post.p_or.size == post.p_and.size == m * (m - 1) // 2


def test_posterior_identifies_single_or_and_structures() -> None:
    rng = np.random.default_rng(11)
    x = rng.random((160, 6)) < 0.5
    noise = rng.random(160) < 0.05
    for kind, truth in (("single", x[:, 2]), ("or", x[:, 1] | x[:, 4]), ("and", x[:, 1] & x[:, 4])):
        post = structure_posterior(x, truth ^ noise, gap=0.3, prior_none=0.5)
        top = post.top()
        assert top.kind == kind
        assert top.docs == ((2,) if kind == "single" else (1, 4))
        assert top.posterior > 0.9


def test_posterior_prefers_none_when_nothing_matters() -> None:
    rng = np.random.default_rng(5)
    x = rng.random((96, 10)) < 0.5
    y = rng.random(96) < 0.9
    post = structure_posterior(x, y, gap=0.3, prior_none=0.5)
    assert post.top().kind == "none" and post.p_none > 0.9
    assert math.isclose(post.total(), 1.0)


def test_single_document_pool_drops_the_pair_classes() -> None:
    x = np.array([[True], [False]] * 10)
    post = structure_posterior(x, x[:, 0], gap=0.3, prior_none=0.5)
    assert post.pairs == () and post.total() == pytest.approx(1.0)
    assert post.top().kind == "single"
