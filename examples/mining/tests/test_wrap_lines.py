"""The benchmark's tests for code_tasks:wrap_lines (run inside the sandbox, next to solution.py)."""

import textwrap

from solution import wrap_lines


def test_matches_textwrap() -> None:
    """Same lines as textwrap.wrap."""
    text = "The quick brown fox jumps over the lazy dog and keeps running far away"
    assert wrap_lines(text, 20) == textwrap.wrap(text, 20)


def test_no_line_too_long() -> None:
    """No line is longer than the width."""
    assert all(len(line) <= 12 for line in wrap_lines("lorem ipsum dolor sit amet consectetur", 12))
