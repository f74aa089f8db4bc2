"""Agentic search evaluation: Retrieved Good Gain metrics over search iterations.

Data flows one way: load (native traces or an importer) → validate → prepare the
last turn's search iterations → two-phase dedup → gains per unique result →
per-iteration series → averages → report.

>>> from ragmeter.agentic import SERIES_NAMES
>>> SERIES_NAMES[:4]
('CG', 'RG', 'DCG', 'DRG')
"""

from __future__ import annotations

from ragmeter.agentic.api import evaluate_agentic
from ragmeter.agentic.gains import GainLabeller, UniqueResult, Unscored
from ragmeter.agentic.metrics import SERIES, SERIES_NAMES, iteration_series, iterations_for_all_good
from ragmeter.agentic.result import AgenticResult
from ragmeter.agentic.trace import Trace

__all__ = [
    "SERIES",
    "SERIES_NAMES",
    "AgenticResult",
    "GainLabeller",
    "Trace",
    "UniqueResult",
    "Unscored",
    "evaluate_agentic",
    "iteration_series",
    "iterations_for_all_good",
]
