"""Paired statistics for comparing two runs over the same queries.

All functions are pure and seeded: the same inputs and seed give the same
numbers on every machine. Every resampling uses :data:`DEFAULT_RESAMPLES` unless told
otherwise (the CLI, ``ragmeter.compare`` and ``ragmeter.testing`` alike).

* :func:`bootstrap_ci` — percentile bootstrap confidence interval of the mean
  paired difference.
* :func:`permutation_pvalue` — two-sided paired randomisation (sign-flip) test
  of the mean difference: exact whenever the distribution of the sign patterns is small
  enough to enumerate (always for binary values, where it is the exact McNemar test),
  seeded Monte Carlo with p = (b + 1) / (B + 1) otherwise.
* :func:`min_attainable_pvalue` and :func:`too_few_to_test` — whether any test could call
  ``n`` non-zero differences significant at all.
* :func:`effect_size` — the standardised mean difference d_z = mean(d) / sd(d).
* :func:`paired_percentile_ci` and :func:`paired_percentile_pvalue` — the same two
  for the difference of a percentile (``latency_p95``), resampling and swapping whole pairs.
* :func:`holm` and :func:`benjamini_hochberg` — multiple-comparison corrections.

>>> d = [0.1, 0.2, 0.0, 0.3, 0.1]
>>> permutation_pvalue(d)   # exact: the zero is dropped; 2 of the 16 sign patterns are as extreme
0.125
>>> holm([0.01, 0.04, 0.03])
[0.03, 0.06, 0.06]
>>> too_few_to_test(5, alpha=0.05), too_few_to_test(6, alpha=0.05)   # 2/32 > 0.05 >= 2/64
(True, False)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from ragmeter.report import DEFAULT_RESAMPLES

EXACT_LIMIT = 16
"""Up to this many differing pairs the percentile test enumerates all 2^n swap patterns."""
EXACT_SUPPORT = 1 << 16
"""The sign-flip test of the mean is exact while the distribution of the signed sums has at most
this many distinct values: any 16 non-zero differences, and far more when they are whole multiples
of a common step (0/1 metrics at any size, precision@10 up to thousands of queries)."""


def _as_array(values: Sequence[float] | NDArray[np.float64]) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError("expected a one-dimensional sequence of differences")
    if not np.all(np.isfinite(arr)):
        raise ValueError("differences must be finite numbers")
    return arr


def bootstrap_ci(
    diffs: Sequence[float] | NDArray[np.float64],
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval for the mean of paired differences.

    >>> bootstrap_ci([0.5, 0.5, 0.5])
    (0.5, 0.5)
    """
    arr = _as_array(diffs)
    if len(arr) == 0:
        raise ValueError("no paired differences to resample")
    return _bootstrap_interval(
        len(arr), lambda idx: arr[idx].mean(axis=1), confidence=confidence, n_resamples=n_resamples, seed=seed
    )


def _bootstrap_interval(
    n: int,
    statistic: Callable[[NDArray[np.int64]], NDArray[np.float64]],
    *,
    confidence: float,
    n_resamples: int,
    seed: int,
) -> tuple[float, float]:
    """Percentile interval of ``statistic`` over ``n_resamples`` resamples (rows of indices into ``n`` items)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    values = np.empty(n_resamples, dtype=np.float64)
    chunk = max(1, 2_000_000 // n)
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        values[start:stop] = statistic(rng.integers(0, n, size=(stop - start, n)))
    alpha = (1 - confidence) / 2
    low, high = np.quantile(values, [alpha, 1 - alpha])
    return float(low), float(high)


def permutation_pvalue(
    diffs: Sequence[float] | NDArray[np.float64],
    *,
    n_permutations: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> float:
    """Two-sided p-value of the paired sign-flip test for a zero mean difference.

    Zero differences carry no sign information and are dropped. The p-value is exact
    whenever the distribution of the signed sums has at most :data:`EXACT_SUPPORT` values
    (any 18 differences; any number of differences that take few distinct sizes — for 0/1
    metrics it is the exact McNemar test on the discordant pairs); otherwise it is a
    seeded Monte Carlo estimate with the +1 correction, (b + 1) / (m + 1), never 0.

    >>> permutation_pvalue([0.0, 0.0])
    1.0
    >>> permutation_pvalue([1.0] * 9 + [-1.0] * 1)   # McNemar: 9 discordant pairs one way, 1 the other
    0.021484375
    """
    arr = _as_array(diffs)
    arr = arr[arr != 0]
    n = len(arr)
    if n == 0:
        return 1.0
    scale = float(np.abs(arr).sum())
    exact = _exact_sign_flip_pvalue(arr, scale)
    if exact is not None:
        return exact
    observed = abs(float(arr.sum()))
    tolerance = 1e-12 * max(1.0, scale)
    rng = np.random.default_rng(seed)
    extreme = 0
    chunk = max(1, 2_000_000 // n)
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        signs = rng.integers(0, 2, size=(size, n)).astype(np.float64) * 2 - 1
        extreme += int(np.count_nonzero(np.abs(signs @ arr) >= observed - tolerance))
    return (extreme + 1) / (n_permutations + 1)


def _exact_sign_flip_pvalue(nonzero: NDArray[np.float64], scale: float) -> float | None:
    """P(|sum of ±|d_i|| >= |sum of d_i|) under random signs, or ``None`` when the support is too large.

    The sizes |d_i| are put on a common quantum (their approximate greatest common divisor:
    0.1 for precision@10, 1 for 0/1 metrics) so that sums equal in exact arithmetic are equal
    here; sizes with no common quantum go on a grid of 1e-10 of their total, and sums within
    one grid step per difference count as equal. Differences of one size are grouped: a group
    of ``c`` differences of size ``m`` adds ``m * (2j - c)`` with probability ``C(c, j) / 2^c``.
    """
    sizes = np.abs(nonzero)
    quantum = _quantum(sizes)
    grid = quantum if quantum is not None else 1e-10 * scale
    slack = 0 if quantum is not None else len(sizes)
    units = np.round(sizes / grid).astype(np.int64)
    observed = abs(int(np.where(nonzero > 0, units, -units).sum()))
    keys, counts = np.unique(units, return_counts=True)
    bound = min(math.prod(c + 1 for c in counts.tolist()), 2 * int(units.sum()) + 1)
    if bound > EXACT_SUPPORT:
        return None
    values: NDArray[np.int64] = np.zeros(1, dtype=np.int64)
    probs: NDArray[np.float64] = np.ones(1, dtype=np.float64)
    for key, count in zip(keys.tolist(), counts.tolist(), strict=True):
        steps = np.arange(count + 1, dtype=np.int64)
        merged = (values[:, None] + key * (2 * steps - count)[None, :]).ravel()
        values, inverse = np.unique(merged, return_inverse=True)
        weights = probs[:, None] * _binomial_half_pmf(count)[None, :]
        probs = np.bincount(inverse.ravel(), weights=weights.ravel()).astype(np.float64)
    return min(1.0, float(probs[np.abs(values) >= observed - slack].sum()))


def _quantum(sizes: NDArray[np.float64]) -> float | None:
    """The largest q of which every size is a whole multiple (to 1e-9 of the largest), if it is not tiny.

    >>> _quantum(np.array([0.2, 0.5, 0.3])), _quantum(np.array([1.0, 2.0, 2.0]))
    (0.1, 1.0)
    >>> _quantum(np.array([0.2, 0.123456789])) is None
    True
    """
    top = float(sizes.max())
    tol = 1e-9 * top
    quantum = 0.0
    for size in np.unique(sizes).tolist():
        a, b = max(quantum, size), min(quantum, size)
        while b > tol:
            remainder = math.fmod(a, b)
            if b - remainder <= tol:
                remainder = 0.0
            a, b = b, remainder
        quantum = a
        if quantum < top / EXACT_SUPPORT:
            return None
    multiples = sizes / quantum
    if np.max(np.abs(multiples - np.round(multiples))) * quantum > 10 * tol:
        return None
    return round(quantum, 12) if abs(quantum - round(quantum, 12)) <= tol else quantum


def _binomial_half_pmf(n: int) -> NDArray[np.float64]:
    """P(X = j) for X ~ Binomial(n, 1/2), j = 0..n (exact ratios up to n = 1,000, log-gamma beyond)."""
    if n <= 1_000:
        return np.array([math.comb(n, j) / 2**n for j in range(n + 1)], dtype=np.float64)
    j = np.arange(n + 1, dtype=np.float64)
    log_comb = math.lgamma(n + 1) - np.array([math.lgamma(x + 1) + math.lgamma(n - x + 1) for x in j])
    out: NDArray[np.float64] = np.exp(log_comb - n * math.log(2.0))
    return out


def min_attainable_pvalue(n_nonzero: int) -> float:
    """The smallest two-sided p-value any paired test of ``n_nonzero`` non-zero differences can reach.

    Only the two patterns with every sign alike are as extreme as all signs alike, so it is
    2 / 2^n (1 with no difference at all).

    >>> min_attainable_pvalue(5), min_attainable_pvalue(0)
    (0.0625, 1.0)
    """
    if n_nonzero <= 0:
        return 1.0
    return min(1.0, 2.0 ** (1 - n_nonzero))


def too_few_to_test(n_nonzero: int, *, alpha: float) -> bool:
    """Whether ``n_nonzero`` non-zero differences are too few for any test to be significant at ``alpha``.

    >>> too_few_to_test(6, alpha=0.05), too_few_to_test(6, alpha=0.01)
    (False, True)
    """
    return min_attainable_pvalue(n_nonzero) > alpha


def effect_size(diffs: Sequence[float] | NDArray[np.float64]) -> float | None:
    """Cohen's d_z of paired differences: mean(d) / sd(d) (sd with n - 1); ``None`` when sd is 0 or n < 2.

    >>> effect_size([0.1, 0.3])
    1.4142135623730951
    >>> effect_size([0.2, 0.2]) is None
    True
    """
    arr = _as_array(diffs)
    if len(arr) < 2:
        return None
    sd = float(np.std(arr, ddof=1))
    if sd <= 1e-12 * max(1.0, float(np.abs(arr).max())):
        return None
    return float(arr.mean()) / sd


def _pairs(
    baseline: Sequence[float] | NDArray[np.float64], candidate: Sequence[float] | NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    base, cand = _as_array(baseline), _as_array(candidate)
    if len(base) != len(cand):
        raise ValueError("baseline and candidate need the same number of paired values")
    if len(base) == 0:
        raise ValueError("no paired values to resample")
    return base, cand


def percentile_delta(
    baseline: Sequence[float] | NDArray[np.float64],
    candidate: Sequence[float] | NDArray[np.float64],
    q: float,
) -> float:
    """``percentile(candidate, q) - percentile(baseline, q)`` (numpy's default linear method).

    >>> percentile_delta([1.0, 2.0, 3.0], [1.0, 2.0, 5.0], 50)
    0.0
    """
    base, cand = _pairs(baseline, candidate)
    return float(np.percentile(cand, q) - np.percentile(base, q))


def paired_percentile_ci(
    baseline: Sequence[float] | NDArray[np.float64],
    candidate: Sequence[float] | NDArray[np.float64],
    q: float,
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the difference of the ``q``-th percentiles, resampling pairs.

    >>> paired_percentile_ci([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], 95)
    (1.0, 1.0)
    """
    base, cand = _pairs(baseline, candidate)

    def delta(idx: NDArray[np.int64]) -> NDArray[np.float64]:
        out: NDArray[np.float64] = np.percentile(cand[idx], q, axis=1) - np.percentile(base[idx], q, axis=1)
        return out

    return _bootstrap_interval(len(base), delta, confidence=confidence, n_resamples=n_resamples, seed=seed)


def paired_percentile_pvalue(
    baseline: Sequence[float] | NDArray[np.float64],
    candidate: Sequence[float] | NDArray[np.float64],
    q: float,
    *,
    n_permutations: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> float:
    """Two-sided paired randomisation test of a zero difference of the ``q``-th percentiles.

    Under the null the two values of a pair are exchangeable, so each pair is swapped
    (or not) at random and the percentile difference recomputed. Only pairs whose
    values differ can change anything: with at most :data:`EXACT_LIMIT` of them every
    swap pattern is enumerated (exact); otherwise a seeded Monte Carlo estimate with the
    +1 correction is returned.

    >>> paired_percentile_pvalue([1.0, 2.0], [1.0, 2.0], 95)
    1.0
    """
    base, cand = _pairs(baseline, candidate)
    observed = abs(percentile_delta(base, cand, q))
    differ = np.flatnonzero(base != cand)
    n = len(differ)
    if n == 0:
        return 1.0
    tolerance = 1e-12 * max(1.0, float(np.abs(np.concatenate([base, cand])).max()))

    def extreme_count(swap: NDArray[np.bool_]) -> int:
        b = np.broadcast_to(base, (len(swap), len(base))).copy()
        c = np.broadcast_to(cand, (len(swap), len(cand))).copy()
        b[:, differ] = np.where(swap, cand[differ], base[differ])
        c[:, differ] = np.where(swap, base[differ], cand[differ])
        stats = np.abs(np.percentile(c, q, axis=1) - np.percentile(b, q, axis=1))
        return int(np.count_nonzero(stats >= observed - tolerance))

    chunk = max(1, 2_000_000 // len(base))
    if n <= EXACT_LIMIT:
        total = 1 << n
        extreme = 0
        for start in range(0, total, chunk):
            codes = np.arange(start, min(start + chunk, total))
            extreme += extreme_count(((codes[:, None] >> np.arange(n)) & 1).astype(bool))
        return extreme / total
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        extreme += extreme_count(rng.integers(0, 2, size=(size, n)).astype(bool))
    return (extreme + 1) / (n_permutations + 1)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (family-wise error rate), in input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m, dtype=np.float64)
    running = 0.0
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[idx]))
        adjusted[idx] = running
    return [round(float(x), 15) for x in adjusted]


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (false discovery rate), in input order.

    >>> benjamini_hochberg([0.01, 0.04, 0.03])
    [0.03, 0.04, 0.04]
    """
    p = np.asarray(pvalues, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")[::-1]
    adjusted = np.empty(m, dtype=np.float64)
    running = 1.0
    for position, idx in enumerate(order):
        rank = m - position
        running = min(running, p[idx] * m / rank)
        adjusted[idx] = running
    return [round(float(x), 15) for x in adjusted]
