"""The Bayesian structure posterior of the ``bayes`` design (research/montecarlo.md §4.2).

The relevant documents of a question form one *structure* that explains its pass/fail record:
none, one document ``{d}``, ``d OR e`` or ``d AND e``. Each structure s splits the trials by its
condition g_s (d in S / d or e in S / d and e in S) into n1 trials where it holds (s1 passes)
and n0 where it does not (s0 passes). With pass rates θ1, θ0 uniform on ``θ1 - θ0 >= gap``::

    ln ML_s = lnB(s1+1, n1-s1+1) + lnB(s0+1, n0-s0+1) - ln((1-gap)²/2)
              + ln Φ((μ1 - μ0 - gap) / sqrt(v1 + v0))
    ln ML_∅ = lnB(t+1, n-t+1)

μ, v are the mean and variance of each Beta posterior. The prior puts ``prior_none`` on ∅ and
spreads the rest evenly over the three classes and, within a class, over its members (with one
document there are no pairs: those classes are dropped and the prior renormalised).

>>> import numpy as np
>>> X = np.array([[1, 0], [0, 1], [1, 1], [0, 0]] * 6, dtype=bool)
>>> y = X[:, 0].copy()
>>> post = structure_posterior(X, y, gap=0.3, prior_none=0.5)
>>> post.top().kind, post.top().docs, round(post.top().posterior, 3)
('single', (0,), 1.0)
>>> round(float(post.p_relevant.sum() >= post.top().posterior), 1)
1.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from ragmeter.mining.stats import log_norm_cdf

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Structure:
    """One structure: ``kind`` (none / single / or / and), its document indices, its posterior."""

    kind: str
    docs: tuple[int, ...]
    posterior: float

    def holds(self, inclusion: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """The structure's condition g_s for each trial of a trials x documents matrix."""
        if self.kind == "none":
            return np.zeros(inclusion.shape[0], dtype=bool)
        if self.kind == "single":
            return np.asarray(inclusion[:, self.docs[0]], dtype=bool)
        first, second = inclusion[:, self.docs[0]], inclusion[:, self.docs[1]]
        return np.asarray(first | second if self.kind == "or" else first & second, dtype=bool)


@dataclass(frozen=True)
class StructurePosterior:
    """Posterior over all structures of a pool of ``m`` documents (probabilities sum to 1)."""

    m: int
    p_none: float
    p_single: FloatArray
    pairs: tuple[tuple[int, int], ...]
    p_or: FloatArray
    p_and: FloatArray

    @property
    def p_relevant(self) -> FloatArray:
        """``P(d relevant) = P({d}) + Σ_e [P(d∨e) + P(d∧e)]`` for every document."""
        out = self.p_single.copy()
        for k, (i, j) in enumerate(self.pairs):
            both = self.p_or[k] + self.p_and[k]
            out[i] += both
            out[j] += both
        return out

    def total(self) -> float:
        """The sum of all structure posteriors (1 up to rounding)."""
        return float(self.p_none + self.p_single.sum() + self.p_or.sum() + self.p_and.sum())

    def top(self) -> Structure:
        """The structure with the largest posterior (ties: ∅, then singles, OR, AND, by index)."""
        best = Structure("none", (), self.p_none)
        for kind, values in (("single", self.p_single), ("or", self.p_or), ("and", self.p_and)):
            if values.size == 0:
                continue
            k = int(np.argmax(values))
            if values[k] > best.posterior:
                docs = (k,) if kind == "single" else self.pairs[k]
                best = Structure(kind, docs, float(values[k]))
        return best


@lru_cache(maxsize=64)
def _pairs(m: int) -> tuple[IntArray, IntArray]:
    rows, cols = np.triu_indices(m, 1)
    return rows.astype(np.int64), cols.astype(np.int64)


@lru_cache(maxsize=64)
def _pair_list(m: int) -> tuple[tuple[int, int], ...]:
    rows, cols = _pairs(m)
    return tuple((int(i), int(j)) for i, j in zip(rows, cols, strict=True))


def _log_factorials(n: int) -> FloatArray:
    table = np.zeros(n + 2, dtype=np.float64)
    if n + 1 >= 1:
        table[1:] = np.cumsum(np.log(np.arange(1, n + 2, dtype=np.float64)))
    return table


def _log_ml(n1: IntArray, s1: IntArray, n: int, t: int, gap: float, lf: FloatArray) -> FloatArray:
    """Log marginal likelihood of structures with n1 condition trials holding s1 passes."""
    n0 = n - n1
    s0 = t - s1
    a1, b1 = s1 + 1, n1 - s1 + 1
    a0, b0 = s0 + 1, n0 - s0 + 1
    log_beta1 = lf[a1 - 1] + lf[b1 - 1] - lf[a1 + b1 - 1]
    log_beta0 = lf[a0 - 1] + lf[b0 - 1] - lf[a0 + b0 - 1]
    mu1 = a1 / (a1 + b1)
    mu0 = a0 / (a0 + b0)
    v1 = mu1 * (1 - mu1) / (a1 + b1 + 1)
    v0 = mu0 * (1 - mu0) / (a0 + b0 + 1)
    z = (mu1 - mu0 - gap) / np.sqrt(v1 + v0)
    area = (1.0 - gap) ** 2 / 2.0
    result: FloatArray = log_beta1 + log_beta0 - math.log(area) + log_norm_cdf(z)
    return result


def structure_posterior(
    inclusion: npt.ArrayLike, passed: npt.ArrayLike, *, gap: float, prior_none: float
) -> StructurePosterior:
    """Posterior of every structure given a trials x documents inclusion matrix and the outcomes.

    Cost is O(n·M²) integer counts (pair counts from XᵀX and Xᵀdiag(y)X).

    >>> post = structure_posterior(np.zeros((0, 3), dtype=bool), np.zeros(0, dtype=bool), gap=0.3, prior_none=0.5)
    >>> round(post.p_none, 3), round(post.total(), 6)
    (0.514, 1.0)
    """
    x = np.asarray(inclusion, dtype=bool)
    y = np.asarray(passed, dtype=bool)
    if x.ndim != 2 or x.shape[0] != y.size:
        raise ValueError("inclusion must be a trials x documents matrix matching the outcomes")
    if not 0 <= gap < 1:
        raise ValueError(f"gap must be in [0, 1), got {gap}")
    if not 0 < prior_none < 1:
        raise ValueError(f"prior_none must be in (0, 1), got {prior_none}")
    n, m = x.shape
    if m == 0:
        raise ValueError("the pool has no documents")
    xi = x.astype(np.int64)
    yi = y.astype(np.int64)
    t = int(yi.sum())
    lf = _log_factorials(n + 2)
    n1 = xi.sum(axis=0)
    s1 = xi.T @ yi
    log_ml_none = float(lf[t] + lf[n - t] - lf[n + 1])
    rows, cols = _pairs(m)
    k = rows.size
    if k:
        joint_n = (xi.T @ xi)[rows, cols]
        joint_s = (xi.T @ (xi * yi[:, None]))[rows, cols]
        cond_n = np.concatenate([n1, n1[rows] + n1[cols] - joint_n, joint_n])
        cond_s = np.concatenate([s1, s1[rows] + s1[cols] - joint_s, joint_s])
        rest = (1 - prior_none) / 3
        log_prior = np.concatenate([np.full(m, math.log(rest / m)), np.full(2 * k, math.log(rest / k))])
        log_prior_none = math.log(prior_none)
    else:  # one document: no pairs; drop those classes and renormalise the prior
        cond_n, cond_s = n1, s1
        total_prior = prior_none + (1 - prior_none) / 3
        log_prior_none = math.log(prior_none / total_prior)
        log_prior = np.full(m, math.log((1 - prior_none) / 3 / total_prior))
    weights = np.concatenate(
        [[log_prior_none + log_ml_none], log_prior + _log_ml(cond_n, cond_s, n, t, gap, lf)]
    )
    peak = float(weights.max())
    probs = np.exp(weights - peak)
    probs /= probs.sum()
    pairs = _pair_list(m)
    return StructurePosterior(
        m=m,
        p_none=float(probs[0]),
        p_single=probs[1 : 1 + m],
        pairs=pairs,
        p_or=probs[1 + m : 1 + m + k],
        p_and=probs[1 + m + k : 1 + m + 2 * k],
    )
