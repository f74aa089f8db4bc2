"""Where the config file is looked for and the defaults it has when there is none (no pydantic here).

:mod:`ragmeter.config` validates a config file with pydantic; a run without one (the common
``ragmeter eval --qrels --run``) needs only these values, so it does not import the models.

>>> CONFIG_FILENAME, FALLBACK_K
('ragmeter.yaml', 5)
"""

from __future__ import annotations

CONFIG_FILENAME = "ragmeter.yaml"
"""The config file read from the working directory when ``--config`` is not given."""

FALLBACK_K = 5
"""``metrics.retrieval.default_k`` when no config sets it: the cutoff of metrics named without ``@k``."""
