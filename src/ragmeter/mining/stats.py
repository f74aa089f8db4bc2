"""Exact and interval statistics for Monte Carlo relevance verification (no scipy at runtime).

Every function here is pure and works on plain counts:

- :func:`fisher_one_sided` — one-sided Fisher exact test "passes more often with the document";
- :func:`fisher3` — the best of three exact tests (all trials, partner present, partner absent), x3;
- :func:`holm` — Holm's step-down adjustment across a candidate pool;
- :func:`wilson_interval` and :func:`newcombe_interval` — 95% intervals for a pass rate and for
  Delta_P (Newcombe's hybrid score interval, method 10 of Newcombe 1998);
- :func:`log_norm_cdf` — ``ln Φ(z)`` without underflow, vectorised.

>>> fisher_one_sided(5, 5, 0, 5) * 252
1.0
>>> [round(x, 4) for x in newcombe_interval(56, 70, 48, 80)]
[0.0524, 0.3339]
>>> holm([0.01, 0.04, 0.03])
[0.03, 0.06, 0.06]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

Z95 = 1.959963984540054
"""The two-sided 95% standard normal quantile."""


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


@lru_cache(maxsize=65536)
def fisher_one_sided(passes_in: int, n_in: int, passes_out: int, n_out: int) -> float:
    """One-sided Fisher exact p-value that the pass rate is higher with the document than without.

    Under the null, the passes among the ``n_in`` trials with the document follow a
    hypergeometric law given the total passes; the p-value is ``P(X >= passes_in)``.
    An empty group gives 1 (no evidence).

    >>> round(fisher_one_sided(5, 5, 0, 5), 6), round(1 / 252, 6)
    (0.003968, 0.003968)
    >>> fisher_one_sided(0, 0, 3, 10)
    1.0
    """
    for name, value in (
        ("passes_in", passes_in),
        ("n_in", n_in),
        ("passes_out", passes_out),
        ("n_out", n_out),
    ):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value}")
    if passes_in > n_in or passes_out > n_out:
        raise ValueError("passes cannot exceed trials")
    if n_in == 0 or n_out == 0:
        return 1.0
    total = n_in + n_out
    passes = passes_in + passes_out
    top = min(passes, n_in)
    if passes_in > top:
        return 0.0
    if total <= 5000:  # exact integer arithmetic, one correctly rounded division
        numerator = sum(
            math.comb(passes, k) * math.comb(total - passes, n_in - k)
            for k in range(passes_in, top + 1)
            if n_in - k <= total - passes
        )
        return min(1.0, numerator / math.comb(total, n_in))
    log_denominator = _log_comb(total, n_in)
    logs = [
        _log_comb(passes, k) + _log_comb(total - passes, n_in - k) - log_denominator
        for k in range(passes_in, top + 1)
        if n_in - k <= total - passes
    ]
    if not logs:
        return 0.0
    peak = max(logs)
    p = math.exp(peak) * math.fsum(math.exp(v - peak) for v in logs)
    return min(1.0, p)


def wilson_interval(passes: int, n: int, *, z: float = Z95) -> tuple[float, float] | None:
    """Wilson score interval of a pass rate; ``None`` when there are no trials.

    >>> [round(x, 4) for x in wilson_interval(56, 70)]
    [0.6918, 0.877]
    >>> wilson_interval(0, 0) is None
    True
    """
    if n <= 0:
        return None
    p = passes / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if passes == 0 else max(0.0, centre - half)  # exact at the ends (no rounding residue)
    high = 1.0 if passes == n else min(1.0, centre + half)
    return (low, high)


def newcombe_interval(
    passes_in: int, n_in: int, passes_out: int, n_out: int, *, z: float = Z95
) -> tuple[float, float] | None:
    """Newcombe's hybrid score interval for ``rate_in - rate_out``; ``None`` if a group is empty.

    >>> [round(x, 4) for x in newcombe_interval(56, 70, 48, 80)]
    [0.0524, 0.3339]
    """
    wilson_in = wilson_interval(passes_in, n_in, z=z)
    wilson_out = wilson_interval(passes_out, n_out, z=z)
    if wilson_in is None or wilson_out is None:
        return None
    p1, p2 = passes_in / n_in, passes_out / n_out
    (l1, u1), (l2, u2) = wilson_in, wilson_out
    delta = p1 - p2
    lower = delta - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    upper = delta + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (max(-1.0, lower), min(1.0, upper))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (monotone, capped at 1).

    >>> holm([])
    []
    >>> holm([0.5])
    [0.5]
    """
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: (pvalues[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


def _log_erfc(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``ln erfc(x)`` (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7), never underflowing."""
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.5 * a)
    poly = -1.26551223 + t * (
        1.00002368
        + t
        * (
            0.37409196
            + t
            * (
                0.09678418
                + t
                * (
                    -0.18628806
                    + t
                    * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))
                )
            )
        )
    )
    log_upper = np.log(t) - a * a + poly  # ln erfc(|x|)
    upper = np.exp(log_upper)
    result: npt.NDArray[np.float64] = np.where(x >= 0, log_upper, np.log(2.0 - upper))
    return result


def log_norm_cdf(z: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """``ln Φ(z)`` for an array of z, accurate in the far left tail.

    >>> [round(float(v), 4) for v in log_norm_cdf([0.0, -40.0, 3.0])]
    [-0.6931, -804.6084, -0.0014]
    """
    values = np.asarray(z, dtype=np.float64)
    result: npt.NDArray[np.float64] = np.log(0.5) + _log_erfc(-values / math.sqrt(2.0))
    return result


def association_z(passes_in: int, n_in: int, passes_out: int, n_out: int) -> float:
    """Two-proportion z statistic of "passes with the document" vs "without" (0 when undefined).

    >>> round(association_z(8, 10, 2, 10), 3)
    2.683
    """
    n = n_in + n_out
    if n_in == 0 or n_out == 0:
        return 0.0
    pooled = (passes_in + passes_out) / n
    variance = pooled * (1 - pooled) * (1 / n_in + 1 / n_out)
    if variance <= 0:
        return 0.0
    return (passes_in / n_in - passes_out / n_out) / math.sqrt(variance)


@dataclass(frozen=True)
class Fisher3:
    """The ``fisher3`` test of one document: ``p`` (Bonferroni x3), ``partner`` index, winning ``view``."""

    p: float
    partner: int | None
    view: str


def fisher3_all(inclusion: npt.ArrayLike, passed: npt.ArrayLike) -> list[Fisher3]:
    """The ``fisher3`` test of every document of a pool.

    ``inclusion`` is a trials x documents 0/1 matrix, ``passed`` the trials' outcomes. For
    document d the partner e is the *other* document most associated with pass/fail (largest
    |z|, chosen without looking at d); the p-value is ``min(1, 3 * min(p_all, p_e_in, p_e_out))``
    of three one-sided Fisher tests. With a single document there is no partner and the plain
    test is used (no x3).

    >>> X = [[1, 0], [1, 1], [0, 1], [0, 0]] * 3
    >>> y = [1, 1, 0, 0] * 3
    >>> [(round(t.p, 4), t.partner, t.view) for t in fisher3_all(X, y)]
    [(0.0032, 1, 'all_trials'), (1.0, 0, 'all_trials')]
    """
    matrix = np.asarray(inclusion, dtype=bool)
    outcome = np.asarray(passed, dtype=bool)
    if matrix.ndim != 2 or matrix.shape[0] != outcome.size:
        raise ValueError("inclusion must be trials x documents and match the outcomes")
    n, m = matrix.shape
    xi = matrix.astype(np.int64)
    yi = outcome.astype(np.int64)
    t = int(yi.sum())
    n_in = xi.sum(axis=0)
    p_in = xi.T @ yi
    z = np.array(
        [abs(association_z(int(p_in[j]), int(n_in[j]), t - int(p_in[j]), n - int(n_in[j]))) for j in range(m)]
    )
    joint_n = xi.T @ xi
    joint_s = xi.T @ (xi * yi[:, None])
    results: list[Fisher3] = []
    for d in range(m):
        nd, pd = int(n_in[d]), int(p_in[d])
        p_all = fisher_one_sided(pd, nd, t - pd, n - nd)
        if m == 1:
            results.append(Fisher3(p=p_all, partner=None, view="all_trials"))
            continue
        others = z.copy()
        others[d] = -1.0
        e = int(np.argmax(others))  # the first of the largest: ties go to the lower index
        ne, pe = int(n_in[e]), int(p_in[e])
        both_n, both_s = int(joint_n[d, e]), int(joint_s[d, e])
        views = {
            "all_trials": p_all,
            "partner_present": fisher_one_sided(both_s, both_n, pe - both_s, ne - both_n),
            "partner_absent": fisher_one_sided(
                pd - both_s, nd - both_n, (t - pe) - (pd - both_s), (n - ne) - (nd - both_n)
            ),
        }
        best = min(views, key=lambda v: (views[v], list(views).index(v)))
        results.append(Fisher3(p=min(1.0, 3 * views[best]), partner=e, view=best))
    return results
