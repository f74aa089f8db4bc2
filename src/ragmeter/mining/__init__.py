"""Benchmark mining: a retrieval dataset whose relevance labels are measured by Monte Carlo verification.

A blind solver answers each question from random subsets of candidate documents; a validator
checks each answer; a design (``bayes`` by default, the sequential structure search of
research/montecarlo.md, or ``fixed``, the design document's rule) turns the pass/fail record into
YES / NO / UNDECIDED verdicts with the counts, intervals and exact p-values behind them.

- :func:`mine` — registry in, ``retrieval_dataset.yaml`` out (resumable, recomputable);
- :func:`simulate` — the designs against a scripted solver (operating characteristics);
- :func:`analyze_files` / :func:`analyze_failures` — why a search system missed the YES documents;
- :class:`Solver`, :class:`Validator` — protocols for your own solver and validator.

See docs/mining.md.

>>> from ragmeter.mining import BayesDesign, simulate
>>> s = simulate(BayesDesign(), scenario="NEC", n_questions=10, pool_size=8, seed=1)
>>> s.precision >= 0.9 and s.recall >= 0.9
True
"""

from __future__ import annotations

from ragmeter.mining.analysis import FailureReport, analyze_failures, analyze_files
from ragmeter.mining.corpus import Corpus, Document, build_package_corpus, load_corpus_file
from ragmeter.mining.dataset import load_mined_dataset
from ragmeter.mining.designs import BayesDesign, FixedDesign
from ragmeter.mining.registry import Registry, load_registry
from ragmeter.mining.session import DesignOptions, MiningOutcome, mine
from ragmeter.mining.simulation import SimulationSummary, simulate
from ragmeter.mining.solvers import PythonSolver, Solver, SolverAnswer, SolveRequest, SolverError
from ragmeter.mining.validators import AnswerValidator, GroundTruth, PytestValidator, Validation, Validator

__all__ = [
    "AnswerValidator",
    "BayesDesign",
    "Corpus",
    "DesignOptions",
    "Document",
    "FailureReport",
    "FixedDesign",
    "GroundTruth",
    "MiningOutcome",
    "PytestValidator",
    "PythonSolver",
    "Registry",
    "SimulationSummary",
    "SolveRequest",
    "Solver",
    "SolverAnswer",
    "SolverError",
    "Validation",
    "Validator",
    "analyze_failures",
    "analyze_files",
    "build_package_corpus",
    "load_corpus_file",
    "load_mined_dataset",
    "load_registry",
    "mine",
    "simulate",
]
