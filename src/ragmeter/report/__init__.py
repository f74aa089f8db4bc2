"""Reports and comparisons: statistics, run comparison, regression gates, history, HTML."""

DEFAULT_RESAMPLES = 10_000
"""Bootstrap resamples and Monte Carlo permutations everywhere: the CLI, ``ragmeter.compare`` and
``ragmeter.testing`` (here, not in :mod:`ragmeter.report.stats`, so the CLI reads it without numpy)."""
