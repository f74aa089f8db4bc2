"""Metrics: name grammar, registry, vectorised kernels and scoring."""
