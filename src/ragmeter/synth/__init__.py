"""Verified synthetic test sets: questions generated from a corpus whose gold supports are proven necessary.

``ragmeter synth`` generates questions from a markdown vault, a folder of text files or a BEIR
``corpus.jsonl`` with the judges' pinned, cached LLM client (versioned prompts in
``prompts/``), drops near-duplicates and questions that give their answer away, and then
verifies every question with the Monte Carlo trials of ``ragmeter mine``: a blind solver sees
random subsets of the gold chunks and BM25-retrieved distractors, and only chunks verified
necessary stay gold supports (others found necessary are added); questions answerable
closed-book are rejected, and unanswerable ones are kept only if the solver abstains over the
top retrieved chunks. It writes the dataset ``ragmeter eval`` and ``ragmeter run`` read, with
the evidence behind every support, and a synthesis report.

- :func:`synthesize` — corpus in, dataset and report out (resumable: nothing is asked twice);
- :class:`SynthConfig` / :func:`load_config` — the ``synth.yaml`` settings.

See docs/synth.md.

>>> from ragmeter.synth import SynthConfig
>>> SynthConfig(n=4, categories=["factual", "multi_hop"]).counts()
{'factual': 3, 'multi_hop': 1}
"""

from __future__ import annotations

from ragmeter.synth.config import SynthConfig, load_config
from ragmeter.synth.session import Overrides, SynthOutcome, synthesize

__all__ = ["Overrides", "SynthConfig", "SynthOutcome", "load_config", "synthesize"]
