"""What a test set can detect: the minimum detectable effect (MDE) and the queries a change needs.

The MDE is the smallest true change in a metric's mean that a two-sided paired test at level
``alpha`` detects with probability ``power`` (α = 0.05 and 80% by default), given the spread
of the per-query differences and the number of queries. It is never "observed power": power
is only ever computed at a change the user names (``--delta``, a gate's threshold).

* Values of any kind — the paired t-test's power, exactly (noncentral t, by numerical
  integration over the χ distribution of the sample standard deviation; no scipy needed),
  from the standard deviation ``s_d`` of the paired differences.
* 0/1 values (hit@k, success) — McNemar's test on the discordant pairs (Connor 1987): the
  share ψ of queries where the two runs disagree sets the spread.
* One run, no pair — ``s_d = s·√2`` (the two runs uncorrelated, conservative when they
  correlate positively, as Sakai recommends), or ψ = 2p(1 − p) for 0/1 values.
* With fewer queries than any test needs to reach α (2 / 2^n > α: 5 queries at α = 0.05)
  there is no MDE (``mde is None``) and :attr:`Power.reason` says why.

Sanity anchors (power_anchors.md): s_d = 0.10 needs 199 queries for a change of 0.02,
s_d = 0.20 needs 787; ψ = 0.5 and a change of 0.4 need 23 (Connor's example).

>>> n_for_delta_t(0.10, 0.02), n_for_delta_t(0.20, 0.02), mcnemar_n(0.5, 0.4)
(199, 787, 23)
>>> round(mde_t(0.15, 50), 3), round(mcnemar_mde(0.2, 100), 3)
(0.061, 0.124)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from ragmeter.report.stats import too_few_to_test

ALPHA = 0.05
POWER = 0.80
_NORMAL = NormalDist()
_PANELS = 8
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(40)

Method = Literal["paired t", "McNemar", "one run, t", "one run, McNemar"]


def normal_quantile(p: float) -> float:
    """The standard normal quantile (``statistics.NormalDist``).

    >>> round(normal_quantile(0.975), 6)
    1.959964
    """
    return _NORMAL.inv_cdf(p)


def _normal_cdf(x: NDArray[np.float64]) -> NDArray[np.float64]:
    scaled = (-x / math.sqrt(2)).tolist()
    return np.fromiter(map(math.erfc, scaled), dtype=np.float64, count=len(scaled)) / 2


@lru_cache(maxsize=1024)
def _chi_scale(df: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Nodes and weights (summing to 1) of S = sqrt(V / df), V ~ χ²(df): the sample sd over the true one."""
    spread = 1 / math.sqrt(2 * df)
    low, high = max(0.0, 1 - 12 * spread), 1 + 12 * spread
    edges = np.linspace(low, high, _PANELS + 1)
    if low == 0:  # few degrees of freedom: S near 0 sets the far tail of t, so resolve it finely
        edges = np.concatenate([[0.0], np.geomspace(1e-7, edges[1], 16), edges[2:]])
    half = (edges[1:] - edges[:-1]) / 2
    mid = (edges[1:] + edges[:-1]) / 2
    nodes = (mid[:, None] + half[:, None] * _NODES[None, :]).ravel()
    weights = (half[:, None] * _WEIGHTS[None, :]).ravel()
    log_density = (df - 1) * np.log(nodes) - df * nodes**2 / 2
    density = weights * np.exp(log_density - log_density.max())
    keep = density > 1e-18 * density.max()  # nodes where S never is cost time and add nothing
    return nodes[keep], density[keep] / density[keep].sum()


def _check_df(df: int) -> None:
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {df}")


def t_sf(x: float, df: int, *, noncentrality: float = 0.0) -> float:
    """P(T > x) for T noncentral t with ``df`` degrees of freedom (central when ``noncentrality`` is 0).

    T = (Z + λ) / S, so P(T > x) = E[Φ(λ - x·S)] over the χ scale S.

    >>> round(t_sf(2.0, 10), 6)
    0.036694
    """
    _check_df(df)
    nodes, weights = _chi_scale(df)
    return float(weights @ _normal_cdf(noncentrality - x * nodes))


def _solve(f: Callable[[float], float], low: float, high: float) -> float:
    """The root of an increasing ``f`` with ``f(low) < 0 < f(high)`` (Illinois regula falsi, to machine precision)."""
    f_low, f_high = f(low), f(high)
    side = 0
    for _ in range(200):
        x = (low * f_high - high * f_low) / (f_high - f_low)
        if not low < x < high:
            x = (low + high) / 2
        fx = f(x)
        if fx == 0 or high - low <= 1e-15 * max(abs(low), abs(high)):
            return x
        if fx < 0:
            low, f_low = x, fx
            if side == -1:
                f_high /= 2
            side = -1
        else:
            high, f_high = x, fx
            if side == 1:
                f_low /= 2
            side = 1
    return (low + high) / 2


@lru_cache(maxsize=1024)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom.

    >>> round(t_quantile(0.975, 10), 6)
    2.228139
    """
    _check_df(df)
    if not 0 < p < 1:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    high = 1.0
    while t_sf(high, df) > 1 - p:
        high *= 2
    return _solve(lambda x: (1 - p) - t_sf(x, df), 0.0, high)


def t_power(effect: float, n: int, *, alpha: float = ALPHA) -> float:
    """Power of the two-sided paired t-test at level ``alpha`` for a true change of ``effect`` sd's.

    ``effect`` is δ / s_d; with ``n`` pairs the statistic is noncentral t with n - 1 degrees
    of freedom and noncentrality √n·δ/s_d.

    >>> round(t_power(0.5, 34), 4)
    0.8078
    """
    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 pairs, got {n}")
    df = n - 1
    critical = t_quantile(1 - alpha / 2, df)
    shift = math.sqrt(n) * effect
    nodes, weights = _chi_scale(df)
    return float(weights @ (_normal_cdf(shift - critical * nodes) + _normal_cdf(-shift - critical * nodes)))


def mde_z(sd: float, n: int, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The normal-approximation MDE, (z_{1-α/2} + z_{power})·s_d / √n (2.8016·s_d/√n at the defaults).

    >>> round(mde_z(1.0, 1), 4)
    2.8016
    """
    return (normal_quantile(1 - alpha / 2) + normal_quantile(power)) * sd / math.sqrt(n)


def mde_t(sd: float, n: int, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest change the paired t-test detects with probability ``power`` (exact noncentral t).

    >>> round(mde_t(0.15, 10), 3), round(mde_t(0.15, 100), 3)
    (0.149, 0.042)
    """
    if sd <= 0:
        raise ValueError(f"the standard deviation must be positive, got {sd}")
    if n < 2:
        raise ValueError(f"a paired t-test needs at least 2 pairs, got {n}")
    low = mde_z(1.0, n, alpha=alpha, power=power)  # the t-test always needs more than the z-test
    high = 2 * low
    while t_power(high, n, alpha=alpha) < power:
        high *= 2
    return sd * _solve(lambda e: t_power(e, n, alpha=alpha) - power, low, high)


def n_for_delta_z(sd: float, delta: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """Queries the normal approximation needs: ⌈((z_{1-α/2} + z_{power})·s_d / δ)²⌉.

    >>> n_for_delta_z(0.10, 0.02)
    197
    """
    z = normal_quantile(1 - alpha / 2) + normal_quantile(power)
    return max(2, math.ceil((z * sd / abs(delta)) ** 2))


def n_for_delta_t(sd: float, delta: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """The fewest queries with which the paired t-test detects ``delta`` with probability ``power``.

    >>> n_for_delta_t(1.0, 0.5)   # a judge's 0-5 scale: s_d = 1, a change of half a point
    34
    """
    if delta == 0:
        raise ValueError("a change of 0 cannot be detected")
    if sd <= 0:
        raise ValueError(f"the standard deviation must be positive, got {sd}")
    effect = abs(delta) / sd
    n = max(2, n_for_delta_z(sd, delta, alpha=alpha, power=power))
    while t_power(effect, n, alpha=alpha) < power:
        n += 1
    while n > 2 and t_power(effect, n - 1, alpha=alpha) >= power:
        n -= 1
    return _at_least_testable(n, alpha)


def _at_least_testable(n: int, alpha: float) -> int:
    """``n``, raised until a paired test of n differences can reach ``alpha`` at all."""
    while too_few_to_test(n, alpha=alpha):
        n += 1
    return n


def _mcnemar_n_exact(psi: float, delta: float, alpha: float, power: float) -> float:
    za, zb = normal_quantile(1 - alpha / 2), normal_quantile(power)
    delta = abs(delta)
    return (za * math.sqrt(psi) + zb * math.sqrt(max(0.0, psi - delta**2))) ** 2 / delta**2


def mcnemar_n(psi: float, delta: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """Queries McNemar's test needs (Connor 1987) for a change ``delta`` with discordant share ``psi``.

    ``psi`` = p10 + p01 (the share of queries on which the runs disagree), ``delta`` = p10 - p01.
    ``psi`` is raised to ``|delta|`` when smaller (the change itself needs that much disagreement).

    >>> mcnemar_n(0.2, 0.05)
    626
    """
    if delta == 0:
        raise ValueError("a change of 0 cannot be detected")
    psi = min(1.0, max(psi, abs(delta)))
    return _at_least_testable(math.ceil(_mcnemar_n_exact(psi, delta, alpha, power) - 1e-9), alpha)


def mcnemar_mde(psi: float, n: int, *, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The smallest p10 - p01 McNemar's test detects with ``n`` queries and discordant share ``psi``.

    A change δ needs at least δ of the queries to disagree, so the share used for a δ above
    ``psi`` is δ itself. ``None`` when not even a change of 1 (every query better) would be
    detected.

    >>> round(mcnemar_mde(0.1, 1000), 3), round(mcnemar_mde(0.05, 20), 3)
    (0.028, 0.348)
    """
    if not 0 < psi <= 1:
        raise ValueError(f"the discordant share must be in (0, 1], got {psi}")

    def needed(delta: float) -> float:
        return _mcnemar_n_exact(max(psi, delta), delta, alpha, power)

    if needed(1.0) > n:
        return None
    return _solve(lambda d: n - needed(d), 1e-12, 1.0)


def mcnemar_power(psi: float, delta: float, n: int, *, alpha: float = ALPHA) -> float:
    """Power of McNemar's test (Connor's normal approximation) for ``delta`` with ``n`` queries.

    >>> round(mcnemar_power(0.5, 0.4, 23), 2)
    0.82
    """
    psi = min(1.0, max(psi, abs(delta)))
    za = normal_quantile(1 - alpha / 2)
    spread = math.sqrt(max(psi - delta**2, 1e-300))
    return _NORMAL.cdf((abs(delta) * math.sqrt(n) - za * math.sqrt(psi)) / spread)


class Power(BaseModel):
    """What one metric's comparison (or one run) can detect.

    ``spread`` is s_d (t methods) or the discordant share ψ (McNemar methods).
    """

    method: Method
    n: int
    spread: float | None
    alpha: float
    power: float
    mde: float | None
    reason: str | None = None
    """Why there is no MDE (too few queries, no variation)."""

    def queries_for(self, delta: float) -> int | None:
        """Queries the same spread needs to detect ``delta`` (``None`` without a spread)."""
        if self.spread is None or self.spread <= 0 or delta == 0:
            return None
        if self.method in ("McNemar", "one run, McNemar"):
            return mcnemar_n(self.spread, delta, alpha=self.alpha, power=self.power)
        return n_for_delta_t(self.spread, delta, alpha=self.alpha, power=self.power)

    def power_at(self, delta: float) -> float | None:
        """The chance of detecting a true change ``delta`` with the current queries (a plan, never observed)."""
        if self.spread is None or self.spread <= 0 or self.n < 2 or too_few_to_test(self.n, alpha=self.alpha):
            return None
        if self.method in ("McNemar", "one run, McNemar"):
            return mcnemar_power(self.spread, delta, self.n, alpha=self.alpha)
        return t_power(abs(delta) / self.spread, self.n, alpha=self.alpha)

    def detects(self, delta: float) -> bool:
        """Whether a change of ``delta`` can be told from noise: at least the MDE.

        Unknown (no spread to judge by: every difference alike) counts as detectable unless
        there are too few queries for any test.
        """
        if self.mde is None:
            return self.spread is None and not too_few_to_test(self.n, alpha=self.alpha)
        return abs(delta) >= self.mde


def is_binary(*arrays: Sequence[float] | NDArray[np.float64]) -> bool:
    """Whether every value is 0 or 1 (then McNemar's discordant pairs set the power).

    >>> is_binary([0, 1, 1], [1.0, 0.0]), is_binary([0, 0.5])
    (True, False)
    """
    return all(bool(np.all((np.asarray(a) == 0) | (np.asarray(a) == 1))) for a in arrays)


def _sd(values: NDArray[np.float64]) -> float:
    if len(values) < 2:
        return 0.0
    sd = float(np.std(values, ddof=1))
    return sd if sd > 1e-12 * max(1.0, float(np.abs(values).max())) else 0.0


def _finish(method: Method, n: int, spread: float, alpha: float, power: float) -> Power:
    binary = "McNemar" in method
    one_run = method.startswith("one run")
    if n < 2 or too_few_to_test(n, alpha=alpha):
        return Power(
            method=method,
            n=n,
            spread=spread if spread > 0 else None,
            alpha=alpha,
            power=power,
            mde=None,
            reason=f"{n} {'query is' if n == 1 else 'queries are'} too few for any test to reach α = {alpha:g}",
        )
    if spread <= 0:
        what = (
            "every query has the same value"
            if one_run
            else "the runs never disagree on any query"
            if binary
            else "no query's value varies"
        )
        return Power(
            method=method,
            n=n,
            spread=None,
            alpha=alpha,
            power=power,
            mde=None,
            reason=f"{what}: the spread of the differences is unknown",
        )
    if binary:
        mde = mcnemar_mde(spread, n, alpha=alpha, power=power)
        reason = None if mde is not None else f"{n} queries cannot detect even a change of 1"
        return Power(method=method, n=n, spread=spread, alpha=alpha, power=power, mde=mde, reason=reason)
    mde = mde_t(spread, n, alpha=alpha, power=power)
    return Power(method=method, n=n, spread=spread, alpha=alpha, power=power, mde=mde)


def one_run_power(
    values: Sequence[float] | NDArray[np.float64], *, alpha: float = ALPHA, power: float = POWER
) -> Power:
    """What a comparison against a run like this one could detect, from its per-query values alone.

    s_d = s·√2 (an uncorrelated second run), or ψ = 2p(1 - p) for 0/1 values.

    >>> p = one_run_power([0.0, 1.0] * 50)
    >>> p.method, round(p.spread, 2), round(p.mde, 3)
    ('one run, McNemar', 0.5, 0.196)
    """
    arr = np.asarray(values, dtype=np.float64)
    n = len(arr)
    if n and is_binary(arr):
        p = float(arr.mean())
        return _finish("one run, McNemar", n, 2 * p * (1 - p), alpha, power)
    return _finish("one run, t", n, _sd(arr) * math.sqrt(2), alpha, power)


def paired_power(
    baseline: Sequence[float] | NDArray[np.float64],
    candidate: Sequence[float] | NDArray[np.float64],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
) -> Power:
    """What the paired comparison of these two runs can detect, from their per-query differences.

    0/1 values use McNemar's discordant share; others the sd of the differences. When the
    differences do not vary (identical runs, or a constant shift), the baseline's own spread
    gives the one-run bound instead of an MDE of 0.

    >>> p = paired_power([0.2, 0.4, 0.6, 0.8] * 10, [0.3, 0.4, 0.5, 0.9] * 10)
    >>> p.method, round(p.spread, 4), round(p.mde, 4)
    ('paired t', 0.084, 0.0381)
    """
    base = np.asarray(baseline, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    if base.shape != cand.shape:
        raise ValueError("baseline and candidate need the same number of paired values")
    n = len(base)
    if n and is_binary(base, cand):
        psi = float(np.count_nonzero(base != cand)) / n
        if psi > 0:
            return _finish("McNemar", n, psi, alpha, power)
        return one_run_power(base, alpha=alpha, power=power)
    sd = _sd(cand - base)
    if sd > 0:
        return _finish("paired t", n, sd, alpha, power)
    return one_run_power(base, alpha=alpha, power=power)
