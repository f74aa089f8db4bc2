"""The steps behind :mod:`ragmeter.api`: argument checks, loading a dataset's inputs, query details, the result.

Nothing here is public API: :func:`ragmeter.evaluate` and :func:`ragmeter.evaluate_trec`
are. Modules here import only downwards (config, io, matching, metrics, schema, results).
"""
