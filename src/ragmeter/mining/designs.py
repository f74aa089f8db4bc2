"""The two verification designs: ``bayes`` (default) and ``fixed`` (the design document as written).

A design says when to look at the trials (:meth:`schedule`), whether to stop at a look
(:meth:`DesignRun.observe`) and what to conclude (:meth:`DesignRun.conclude`). Both designs
record, for every candidate, the counts behind its verdict, Delta_P with a 95% Newcombe
interval, the exact ``fisher3`` p-value and its Holm adjustment across the pool.

``bayes`` — the sequential Bayesian structure search of research/montecarlo.md §4: looks at
8, 12, …, 256 trials; stops when one structure (none / {d} / d OR e / d AND e) has posterior
>= tau. Verdicts: YES if P(d relevant) >= tau and Delta_P >= min_delta; NO if
P(d relevant) <= eps; else UNDECIDED. ``strict`` also requires the exact fisher3 gate
(Holm-adjusted p < alpha / number of looks at some look) for every YES.

``fixed`` — N trials (default 10); YES if Delta_P > threshold (default 0.1), else NO; a
document never in or never out of the trials has no Delta_P and is UNDECIDED (ruling).
Simulated, this labels documents relevant with ~18% precision; it is here for comparison.

>>> BayesDesign().schedule()[:4], BayesDesign(n_max=100).schedule()[-2:]
([8, 12, 16, 20], [96, 100])
>>> FixedDesign(trials=10).schedule()
[10]
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt
from pydantic import ConfigDict, Field, field_validator

from ragmeter.mining.stats import fisher3_all, holm, newcombe_interval, wilson_interval
from ragmeter.mining.structures import Structure, StructurePosterior, structure_posterior
from ragmeter.schema.strict_numbers import NumbersModel

BoolMatrix = npt.NDArray[np.bool_]
BoolVector = npt.NDArray[np.bool_]

DEFAULT_LOOKS = (8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 256)
"""Batches of 4 up to 32 trials, of 8 up to 64, of 16 up to 128, then 32/32/64."""

Verdict = Literal["YES", "NO", "UNDECIDED"]
Status = Literal["IDENTIFIED", "NO_RELEVANT_DOC", "UNRESOLVED", "INCOMPLETE"]

OPERATING_CHARACTERISTICS = {
    "bayes": (
        "bayes-structure v1 (tau 0.9): simulated YES precision 99.2% (>= 97.7% in every scenario), "
        "recall 97.0% (>= 94.4%), 57.7 solver calls per question on average; see research/montecarlo.md"
    ),
    "bayes-strict": (
        "bayes-structure v1 strict: simulated YES precision 100.0% (>= 99.9%), recall 97.3% (>= 95.2%), "
        "77.8 calls per question; false YES per question <= alpha by construction; see research/montecarlo.md"
    ),
    "fixed": (
        "fixed N=10, Delta_P > 0.1 (the design document as written): simulated YES precision 18% "
        "(8% with 30 candidates), recall 82%; see research/montecarlo.md"
    ),
}


class BayesDesign(NumbersModel):
    """Parameters of the sequential Bayesian structure search (defaults of research/montecarlo.md §4.2)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["bayes"] = "bayes"
    version: Literal[1] = 1
    p: float = Field(default=0.5, gt=0, lt=1, description="inclusion probability of each candidate")
    tau: float = Field(default=0.9, gt=0.5, lt=1, description="posterior needed to stop and to say YES")
    eps: float = Field(default=0.05, gt=0, lt=0.5, description="P(relevant) at or below which a doc is NO")
    gap: float = Field(default=0.3, ge=0, lt=1, description="minimum pass-rate gap a structure must explain")
    prior_none: float = Field(default=0.5, gt=0, lt=1, description="prior of 'no document matters'")
    min_delta: float = Field(default=0.1, ge=0, le=1, description="YES also needs Delta_P >= this")
    n_max: int = Field(default=256, ge=2, le=100_000, description="trial cap per question")
    strict: bool = Field(default=False, description="YES also needs the exact fisher3 gate")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="family-wise level of the strict gate")
    looks: tuple[int, ...] = Field(default=DEFAULT_LOOKS, description="trial counts at which to look")
    screen: int = Field(default=0, ge=0, le=20, description="up to K all-docs and K no-docs trials first")

    @field_validator("looks")
    @classmethod
    def _looks(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if not value:
            raise ValueError("looks must not be empty")
        if any(b <= a for a, b in itertools.pairwise(value)) or value[0] < 1:
            raise ValueError(f"looks must be positive and strictly increasing, got {list(value)}")
        return value

    def schedule(self) -> list[int]:
        """The looks actually used: those below ``n_max``, then ``n_max``."""
        return [n for n in self.looks if n < self.n_max] + [self.n_max]

    def label(self) -> str:
        """``bayes`` or ``bayes-strict`` (the key of :data:`OPERATING_CHARACTERISTICS`)."""
        return "bayes-strict" if self.strict else "bayes"

    def block(self) -> dict[str, Any]:
        """The design block written to the dataset and the trial log."""
        data = self.model_dump(mode="json")
        data["name"] = "bayes-structure"
        data["looks"] = self.schedule()
        return data

    def start(self, m: int) -> BayesRun:
        """A fresh run over a pool of ``m`` candidates."""
        return BayesRun(self, m)


class FixedDesign(NumbersModel):
    """The design document's design: N trials, YES when Delta_P > threshold."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["fixed"] = "fixed"
    version: Literal[1] = 1
    trials: int = Field(default=10, ge=1, le=100_000)
    p: float = Field(default=0.5, gt=0, lt=1)
    threshold: float = Field(default=0.1, ge=-1, lt=1)

    @property
    def screen(self) -> int:
        """The fixed design never screens."""
        return 0

    def schedule(self) -> list[int]:
        """One look, after all N trials."""
        return [self.trials]

    def label(self) -> str:
        """``fixed``."""
        return "fixed"

    def block(self) -> dict[str, Any]:
        """The design block written to the dataset and the trial log."""
        return self.model_dump(mode="json")

    def start(self, m: int) -> FixedRun:
        """A fresh run over a pool of ``m`` candidates."""
        return FixedRun(self, m)


Design = BayesDesign | FixedDesign


def design_from_block(block: dict[str, Any]) -> Design:
    """Rebuild a design from the block written by :meth:`BayesDesign.block` / :meth:`FixedDesign.block`.

    >>> design_from_block(BayesDesign(tau=0.95).block()).tau
    0.95
    """
    data = dict(block)
    if data.get("name") == "bayes-structure":
        data["name"] = "bayes"
        if "looks" in data:
            data["looks"] = tuple(data["looks"])  # the written schedule ends at n_max: same schedule
        return BayesDesign.model_validate(data)
    return FixedDesign.model_validate(data)


@dataclass
class DocStats:
    """Everything recorded about one candidate at the end of a question."""

    verdict: Verdict
    trials_in: int
    trials_out: int
    passes_in: int
    passes_out: int
    success_in: float | None
    success_out: float | None
    delta_p: float | None
    delta_p_ci95: tuple[float, float] | None
    p_value: float
    p_value_holm: float
    test_partner: int | None
    test_view: str
    posterior_relevant: float | None = None
    gate_passed: bool | None = None


@dataclass
class PassRate:
    """Passes out of trials, with a Wilson 95% interval."""

    passes: int
    trials: int

    @property
    def rate(self) -> float | None:
        """The pass rate, or ``None`` without trials."""
        return self.passes / self.trials if self.trials else None

    def to_dict(self) -> dict[str, Any]:
        """As written to the dataset."""
        interval = wilson_interval(self.passes, self.trials)
        return {
            "passes": self.passes,
            "trials": self.trials,
            "rate": _round(self.rate),
            "wilson95": [_round(v) for v in interval] if interval else None,
        }


@dataclass
class Conclusion:
    """The outcome of one question under a design."""

    status: Status
    stop_reason: str
    trials: int
    passes: int
    docs: list[DocStats]
    base_success_rate: float | None
    structure: Structure | None = None
    p_no_relevant_doc: float | None = None
    no_relevant_kind: Literal["TRIVIAL", "HOPELESS"] | None = None
    present: PassRate | None = None
    absent: PassRate | None = None
    stopped_at_look: int | None = None
    screen: dict[str, str] | None = None
    looks: list[dict[str, Any]] = field(default_factory=list)


class DesignRun(Protocol):
    """One question's run of a design: observe looks in order, then conclude."""

    def observe(self, inclusion: BoolMatrix, passed: BoolVector, look: int) -> bool:
        """Record the look at ``look`` trials; ``True`` to stop here."""
        ...

    def conclude(self, inclusion: BoolMatrix, passed: BoolVector, *, stopped: bool) -> Conclusion:
        """The verdicts for the trials seen (``stopped``: the stopping rule fired)."""
        ...


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def doc_statistics(inclusion: BoolMatrix, passed: BoolVector) -> list[DocStats]:
    """Counts, Delta_P, Newcombe interval, fisher3 p and Holm p for every candidate (verdicts UNDECIDED).

    >>> X = np.array([[1, 0], [0, 1]] * 5, dtype=bool); y = X[:, 0].copy()
    >>> s = doc_statistics(X, y)[0]
    >>> (s.trials_in, s.passes_in, s.trials_out, s.passes_out, s.delta_p)
    (5, 5, 5, 0, 1.0)
    """
    x = np.asarray(inclusion, dtype=bool)
    y = np.asarray(passed, dtype=bool)
    tests = fisher3_all(x, y) if x.shape[1] else []
    adjusted = holm([t.p for t in tests])
    out: list[DocStats] = []
    for d, test in enumerate(tests):
        column = x[:, d]
        n_in = int(column.sum())
        n_out = int(column.size - n_in)
        p_in = int((column & y).sum())
        p_out = int(y.sum()) - p_in
        rate_in = p_in / n_in if n_in else None
        rate_out = p_out / n_out if n_out else None
        delta = rate_in - rate_out if rate_in is not None and rate_out is not None else None
        out.append(
            DocStats(
                verdict="UNDECIDED",
                trials_in=n_in,
                trials_out=n_out,
                passes_in=p_in,
                passes_out=p_out,
                success_in=rate_in,
                success_out=rate_out,
                delta_p=delta,
                delta_p_ci95=newcombe_interval(p_in, n_in, p_out, n_out),
                p_value=test.p,
                p_value_holm=adjusted[d],
                test_partner=test.partner,
                test_view=test.view,
            )
        )
    return out


class BayesRun:
    """A question's run of :class:`BayesDesign`; keeps the strict gate across looks."""

    def __init__(self, design: BayesDesign, m: int) -> None:
        self.design = design
        self.m = m
        self.gate = np.zeros(m, dtype=bool)
        self.posterior: StructurePosterior | None = None
        self.look: int | None = None
        self.looks: list[dict[str, Any]] = []

    def observe(self, inclusion: BoolMatrix, passed: BoolVector, look: int) -> bool:
        """Compute the posterior at this look (and the strict gate); stop when a structure has >= tau."""
        design = self.design
        post = structure_posterior(inclusion, passed, gap=design.gap, prior_none=design.prior_none)
        self.posterior = post
        self.look = look
        if design.strict:
            level = design.alpha / len(design.schedule())
            adjusted = holm([t.p for t in fisher3_all(inclusion, passed)])
            self.gate |= np.asarray(adjusted) < level
        top = post.top()
        stop = top.posterior >= design.tau
        if stop and design.strict:
            relevant = post.p_relevant >= design.tau
            stop = bool(np.all(self.gate[relevant]))
        self.looks.append(
            {
                "trials": look,
                "passes": int(np.asarray(passed).sum()),
                "top": {"kind": top.kind, "docs": list(top.docs), "posterior": _round(top.posterior)},
                "p_no_relevant_doc": _round(post.p_none),
                "stop": stop,
            }
        )
        return stop

    def conclude(self, inclusion: BoolMatrix, passed: BoolVector, *, stopped: bool) -> Conclusion:
        """Verdicts, status and stop reason at the last look observed."""
        design = self.design
        x = np.asarray(inclusion, dtype=bool)
        y = np.asarray(passed, dtype=bool)
        post = self.posterior or structure_posterior(x, y, gap=design.gap, prior_none=design.prior_none)
        p_rel = post.p_relevant
        docs = doc_statistics(x, y)
        for d, stats in enumerate(docs):
            stats.posterior_relevant = float(p_rel[d])
            if design.strict:
                stats.gate_passed = bool(self.gate[d])
            if stats.delta_p is None:
                stats.verdict = "UNDECIDED"  # never in or never out: no Delta_P (ruling)
            elif (
                p_rel[d] >= design.tau
                and stats.delta_p >= design.min_delta
                and (not design.strict or self.gate[d])
            ):
                stats.verdict = "YES"
            elif p_rel[d] <= design.eps:
                stats.verdict = "NO"
            else:
                stats.verdict = "UNDECIDED"
        top = post.top()
        n = int(y.size)
        passes = int(y.sum())
        holds = top.holds(x)
        present = PassRate(int((holds & y).sum()), int(holds.sum()))
        absent = PassRate(int((~holds & y).sum()), int((~holds).sum()))
        conclusion = Conclusion(
            status="UNRESOLVED",
            stop_reason="",
            trials=n,
            passes=passes,
            docs=docs,
            base_success_rate=absent.rate,
            structure=top,
            p_no_relevant_doc=post.p_none,
            present=present if top.kind != "none" else None,
            absent=absent,
            stopped_at_look=self.look if stopped else None,
            looks=self.looks,
        )
        best = (
            f"{top.kind} {list(top.docs)} at {top.posterior:.3f}"
            if top.docs
            else f"none at {top.posterior:.3f}"
        )
        if stopped:
            conclusion.stop_reason = f"structure posterior {top.posterior:.3f} >= {design.tau} at look {n}"
            if design.strict:
                conclusion.stop_reason += " and every relevant document passed the exact gate"
            if top.kind == "none":
                conclusion.status = "NO_RELEVANT_DOC"
                conclusion.no_relevant_kind = "TRIVIAL" if n and passes / n >= 0.5 else "HOPELESS"
            else:
                conclusion.status = "IDENTIFIED"
        else:
            conclusion.stop_reason = (
                f"reached n_max {n} trials without a structure posterior >= {design.tau} (best: {best})"
            )
            if design.strict and top.posterior >= design.tau:
                conclusion.stop_reason = (
                    f"reached n_max {n} trials before every relevant document passed the exact gate"
                )
        return conclusion


class FixedRun:
    """A question's run of :class:`FixedDesign`: one look after N trials."""

    def __init__(self, design: FixedDesign, m: int) -> None:
        self.design = design
        self.m = m
        self.looks: list[dict[str, Any]] = []

    def observe(self, inclusion: BoolMatrix, passed: BoolVector, look: int) -> bool:
        """The single look: always the last."""
        self.looks.append({"trials": look, "passes": int(np.asarray(passed).sum()), "stop": True})
        return True

    def conclude(self, inclusion: BoolMatrix, passed: BoolVector, *, stopped: bool) -> Conclusion:
        """YES when Delta_P > threshold, NO otherwise, UNDECIDED without a Delta_P."""
        x = np.asarray(inclusion, dtype=bool)
        y = np.asarray(passed, dtype=bool)
        docs = doc_statistics(x, y)
        for stats in docs:
            if stats.delta_p is None:
                stats.verdict = "UNDECIDED"
            elif stats.delta_p > self.design.threshold:
                stats.verdict = "YES"
            else:
                stats.verdict = "NO"
        yes = np.array([s.verdict == "YES" for s in docs], dtype=bool)
        holds = x[:, yes].any(axis=1) if yes.any() else np.zeros(y.size, dtype=bool)
        absent = PassRate(int((~holds & y).sum()), int((~holds).sum()))
        present = PassRate(int((holds & y).sum()), int(holds.sum())) if yes.any() else None
        if yes.any():
            status: Status = "IDENTIFIED"
        elif any(s.verdict == "UNDECIDED" for s in docs):
            status = "UNRESOLVED"
        else:
            status = "NO_RELEVANT_DOC"
        n = int(y.size)
        return Conclusion(
            status=status,
            stop_reason=f"fixed design: {n} trials run",
            trials=n,
            passes=int(y.sum()),
            docs=docs,
            base_success_rate=absent.rate,
            present=present,
            absent=absent,
            stopped_at_look=n,
            looks=self.looks,
        )
