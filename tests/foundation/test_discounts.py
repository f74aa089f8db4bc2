"""The log2 discounts of the ranking kernels, however their shared table has grown."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragmeter.metrics import relevance


@pytest.mark.parametrize("sizes", [[1], [5], [3, 2, 7], [4, 9, 20, 2], [1, 2, 3, 4, 5, 6]])
def test_log2_ranks_are_the_c_librarys_log2_from_an_empty_table(
    monkeypatch: pytest.MonkeyPatch, sizes: list[int]
) -> None:
    monkeypatch.setattr(relevance, "_LOG2", [np.zeros(0, dtype=np.float64)])  # as in a fresh process
    for n in sizes:
        assert relevance.log2_ranks(n).tolist() == [math.log2(rank + 1) for rank in range(1, n + 1)]
    assert relevance.log2_ranks(0).tolist() == []
