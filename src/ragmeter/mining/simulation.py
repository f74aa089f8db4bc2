"""Seeded simulation of the designs with a scripted solver (research/montecarlo.md §2).

A question has ``pool_size`` candidates; documents 0 (A), 1 (B) and 2 (D) play the roles of
the study's scenarios and the rest are neutral. A trial passes with the scenario's true
probability (``hit`` when the needed documents are shown, ``base`` otherwise), and each
recorded outcome is then flipped with probability ``flip`` (judge/validator noise). The
trials go through the same :func:`~ragmeter.mining.driver.decide` as real mining.

=============  =========================================  ==============
scenario       true pass probability                      relevant docs
=============  =========================================  ==============
``NEC``        hit if A else base                         A
``OR``         hit if A or B else base                    A, B
``AND``        hit if A and B else base                   A, B
``NEC+DIS``    (hit if A else base) - 0.2 if D shown      A
``TRIVIAL``    0.9 always                                 none
``HOPELESS``   0.02 always                                none
=============  =========================================  ==============

>>> s = simulate(FixedDesign(trials=10), n_questions=20, seed=1)
>>> s.mean_calls, s.precision < 0.6
(10.0, True)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ragmeter.mining.designs import BayesDesign, Design, FixedDesign
from ragmeter.mining.driver import Outcome, TrialKey, TrialPlan, decide, question_seed

SCENARIOS = ("NEC", "OR", "AND", "NEC+DIS", "TRIVIAL", "HOPELESS")


def _relevant(scenario: str) -> set[int]:
    return {"NEC": {0}, "OR": {0, 1}, "AND": {0, 1}, "NEC+DIS": {0}}.get(scenario, set())


def pass_probability(scenario: str, shown: Sequence[int], *, hit: float, base: float) -> float:
    """The true pass probability of a trial that showed ``shown``.

    >>> pass_probability("OR", [1, 5], hit=0.9, base=0.1), pass_probability("AND", [1, 5], hit=0.9, base=0.1)
    (0.9, 0.1)
    """
    present = set(shown)
    if scenario == "NEC":
        return hit if 0 in present else base
    if scenario == "OR":
        return hit if present & {0, 1} else base
    if scenario == "AND":
        return hit if {0, 1} <= present else base
    if scenario == "NEC+DIS":
        return max(0.0, (hit if 0 in present else base) - (0.2 if 2 in present else 0.0))
    if scenario == "TRIVIAL":
        return 0.9
    if scenario == "HOPELESS":
        return 0.02
    raise ValueError(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)}")


@dataclass(frozen=True)
class SimulationSummary:
    """Verdict quality and cost of a design on one scenario."""

    design: str
    scenario: str
    n_questions: int
    pool_size: int
    mean_calls: float
    yes: int
    true_yes: int
    relevant: int
    undecided: int
    documents: int
    statuses: dict[str, int]

    @property
    def precision(self) -> float:
        """Share of YES verdicts that are truly relevant (1.0 when there is no YES at all)."""
        return self.true_yes / self.yes if self.yes else 1.0

    @property
    def recall(self) -> float:
        """Share of truly relevant documents called YES (UNDECIDED counts as a miss)."""
        return self.true_yes / self.relevant if self.relevant else 1.0

    @property
    def false_yes_per_question(self) -> float:
        """False YES verdicts per question."""
        return (self.yes - self.true_yes) / self.n_questions

    @property
    def undecided_share(self) -> float:
        """Share of all documents left UNDECIDED."""
        return self.undecided / self.documents if self.documents else 0.0


def simulate(
    design: Design,
    *,
    scenario: str = "NEC",
    n_questions: int = 200,
    pool_size: int = 15,
    base: float = 0.1,
    flip: float = 0.05,
    hit: float = 0.9,
    seed: int = 0,
) -> SimulationSummary:
    """Run ``n_questions`` simulated questions through ``design``; count calls and verdict quality."""
    if pool_size < 3 and scenario in ("OR", "AND", "NEC+DIS"):
        raise ValueError(f"scenario {scenario} needs a pool of at least 3")
    relevant = _relevant(scenario)
    calls = yes = true_yes = undecided = documents = 0
    statuses: dict[str, int] = {}
    for q in range(n_questions):
        rng = random.Random(question_seed(seed, f"sim:{scenario}:{q}:noise"))
        count = 0

        def run_batch(plans: Sequence[TrialPlan], rng: random.Random = rng) -> dict[TrialKey, Outcome]:
            nonlocal count
            out: dict[TrialKey, Outcome] = {}
            for plan in plans:
                truth = rng.random() < pass_probability(scenario, plan.shown, hit=hit, base=base)
                observed = truth != (rng.random() < flip)
                out[plan.key] = Outcome(observed, plan.shown)
                count += 1
            return out

        decision = decide(design, pool_size, question_seed(seed, f"sim:{scenario}:{q}"), {}, run_batch)
        conclusion = decision.conclusion
        if conclusion is None:  # pragma: no cover - run_batch never fails
            raise RuntimeError("simulation trial failed")
        calls += count
        statuses[conclusion.status] = statuses.get(conclusion.status, 0) + 1
        for d, stats in enumerate(conclusion.docs):
            documents += 1
            if stats.verdict == "YES":
                yes += 1
                true_yes += d in relevant
            elif stats.verdict == "UNDECIDED":
                undecided += 1
    label = design.label() if isinstance(design, BayesDesign) else f"fixed-N{design.trials}"
    return SimulationSummary(
        design=label,
        scenario=scenario,
        n_questions=n_questions,
        pool_size=pool_size,
        mean_calls=calls / n_questions,
        yes=yes,
        true_yes=true_yes,
        relevant=len(relevant) * n_questions,
        undecided=undecided,
        documents=documents,
        statuses=statuses,
    )


__all__ = ["SCENARIOS", "BayesDesign", "FixedDesign", "SimulationSummary", "pass_probability", "simulate"]
