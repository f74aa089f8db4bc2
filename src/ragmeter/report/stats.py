"""Paired statistics for comparing two runs over the same queries.

All functions are pure and seeded: the same inputs and seed give the same
numbers on every machine.

* :func:`bootstrap_ci` — percentile bootstrap confidence interval of the mean
  paired difference.
* :func:`permutation_pvalue` — two-sided paired randomisation (sign-flip) test
  of the mean difference; exact enumeration for small n, Monte Carlo otherwise.
* :func:`paired_percentile_ci` and :func:`paired_percentile_pvalue` — the same two
  for the difference of a percentile (``latency_p95``), resampling and swapping whole pairs.
* :func:`holm` and :func:`benjamini_hochberg` — multiple-comparison corrections.

>>> d = [0.1, 0.2, 0.0, 0.3, 0.1]
>>> permutation_pvalue(d)   # exact: the zero is dropped; 2 of the 16 sign patterns are as extreme
0.125
>>> holm([0.01, 0.04, 0.03])
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

EXACT_LIMIT = 16
"""Up to this many non-zero differences the permutation test enumerates all 2^n sign patterns."""


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
    n_resamples: int = 10_000,
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
    n_permutations: int = 10_000,
    seed: int = 0,
) -> float:
    """Two-sided p-value of the paired sign-flip test for a zero mean difference.

    Zero differences carry no sign information and are dropped. With at most
    :data:`EXACT_LIMIT` non-zero differences every sign pattern is enumerated
    (an exact p-value); otherwise a seeded Monte Carlo estimate with the +1
    correction, (b + 1) / (m + 1), is returned.

    >>> permutation_pvalue([0.0, 0.0])
    1.0
    """
    arr = _as_array(diffs)
    arr = arr[arr != 0]
    n = len(arr)
    if n == 0:
        return 1.0
    observed = abs(arr.sum())
    tolerance = 1e-12 * max(1.0, float(np.abs(arr).sum()))
    if n <= EXACT_LIMIT:
        patterns = ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.float64) * 2 - 1
        sums = np.abs(patterns @ arr)
        return float(np.count_nonzero(sums >= observed - tolerance) / len(sums))
    rng = np.random.default_rng(seed)
    extreme = 0
    chunk = max(1, 2_000_000 // n)
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        signs = rng.integers(0, 2, size=(size, n)).astype(np.float64) * 2 - 1
        extreme += int(np.count_nonzero(np.abs(signs @ arr) >= observed - tolerance))
    return (extreme + 1) / (n_permutations + 1)


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
    n_resamples: int = 10_000,
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
    n_permutations: int = 10_000,
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
