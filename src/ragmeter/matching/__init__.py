"""Matching: turn every kind of ground truth into gains per rank."""
