"""Seeded simulation with a scripted solver: the bayes design meets the target, the fixed one does not.

NEC scenario of research/montecarlo.md §4.4: one necessary document, 15 candidates, base success
0.1, 5% of outcomes flipped, 200 questions. The fixed design (N=10, Delta_P > 0.1) is run on the
same questions for comparison.
"""

from __future__ import annotations

import pytest

from ragmeter.mining.designs import BayesDesign, FixedDesign
from ragmeter.mining.simulation import simulate


def test_bayes_meets_the_target_where_the_fixed_design_does_not() -> None:
    bayes = simulate(
        BayesDesign(), scenario="NEC", n_questions=200, pool_size=15, base=0.1, flip=0.05, seed=2026
    )
    fixed = simulate(
        FixedDesign(trials=10), scenario="NEC", n_questions=200, pool_size=15, base=0.1, flip=0.05, seed=2026
    )
    side_by_side = {
        s.design: {"precision": round(s.precision, 3), "recall": round(s.recall, 3), "calls": s.mean_calls}
        for s in (bayes, fixed)
    }
    assert bayes.precision >= 0.95, side_by_side
    assert bayes.recall >= 0.90, side_by_side
    assert 20 <= bayes.mean_calls <= 80, side_by_side
    assert fixed.mean_calls == 10
    assert fixed.precision < 0.35, side_by_side  # research/montecarlo.md: 15.8% for NEC M=15
    assert bayes.precision - fixed.precision > 0.6, side_by_side
    assert fixed.false_yes_per_question > 2.0 > 0.05 > bayes.false_yes_per_question


@pytest.mark.parametrize("scenario", ["OR", "AND", "NEC+DIS"])
def test_bayes_precision_on_two_document_structures(scenario: str) -> None:
    summary = simulate(
        BayesDesign(), scenario=scenario, n_questions=60, pool_size=10, base=0.1, flip=0.05, seed=7
    )
    assert summary.precision >= 0.95
    assert summary.recall >= 0.85
    assert summary.mean_calls <= 140


@pytest.mark.parametrize("scenario", ["TRIVIAL", "HOPELESS"])
def test_null_questions_end_without_relevant_documents(scenario: str) -> None:
    summary = simulate(BayesDesign(), scenario=scenario, n_questions=60, pool_size=10, seed=3)
    assert summary.false_yes_per_question <= 0.05
    assert summary.statuses.get("NO_RELEVANT_DOC", 0) >= 55
    fixed = simulate(FixedDesign(), scenario=scenario, n_questions=60, pool_size=10, seed=3)
    assert fixed.false_yes_per_question > 1.0


def test_strict_mode_keeps_precision_at_a_higher_cost() -> None:
    plain = simulate(BayesDesign(), scenario="OR", n_questions=40, pool_size=8, seed=9)
    strict = simulate(BayesDesign(strict=True), scenario="OR", n_questions=40, pool_size=8, seed=9)
    assert strict.precision == 1.0
    assert strict.mean_calls >= plain.mean_calls


def test_screen_drops_trivial_questions_cheaply() -> None:
    plain = simulate(BayesDesign(), scenario="TRIVIAL", n_questions=40, pool_size=10, seed=1)
    screened = simulate(BayesDesign(screen=3), scenario="TRIVIAL", n_questions=40, pool_size=10, seed=1)
    assert screened.mean_calls < plain.mean_calls
    assert screened.statuses.get("NO_RELEVANT_DOC", 0) >= 38
