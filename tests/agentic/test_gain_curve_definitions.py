"""The gain curves against their definitions, written out the slow way, and at their boundaries."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.agentic.metrics import SERIES_NAMES, discount, iteration_series, iterations_for_all_good


def definitions(
    sizes: list[int], gains: list[list[float | None]], threshold: float
) -> dict[str, list[float | int | None]]:
    """Each series @i straight from the spec's formulas, recomputed from scratch for every i."""
    out: dict[str, list[float | int | None]] = {name: [] for name in SERIES_NAMES}
    for i in range(1, len(sizes) + 1):
        r = sizes[:i]
        ur = [len(g) for g in gains[:i]]
        good = [[x for x in g if x is not None and x >= threshold] for g in gains[:i]]
        g_k = [sum(row) for row in good]
        avg = [g_k[k] / r[k] if r[k] else 0.0 for k in range(i)]
        w = [1 / math.log2(k + 2) for k in range(i)]
        scored_now = all(x is not None for x in gains[i - 1])
        scored_all = all(x is not None for g in gains[:i] for x in g)
        r_at, dup_at = sum(r), sum(r) - sum(ur)
        out["R"].append(r[-1])
        out["UR"].append(ur[-1])
        out["Dup"].append(r[-1] - ur[-1])
        out["R_cum"].append(r_at)
        out["UR_cum"].append(sum(ur))
        out["Dup_cum"].append(dup_at)
        out["SRR"].append(dup_at / r_at if r_at else 0.0)
        out["AvgGain"].append(avg[-1] if scored_now else None)
        out["GR"].append(len(good[-1]) if scored_now else None)
        cumulative = {
            "CG": sum(g_k),
            "RG": sum(g_k) / i,
            "DCG": sum(w[k] * g_k[k] for k in range(i)),
            "DRG": sum(w[k] * g_k[k] for k in range(i)) / i,
            "RAG": sum(avg) / i,
            "DRAG": sum(w[k] * avg[k] for k in range(i)) / i,
            "SRE": sum(len(row) for row in good) / r_at if r_at else 0.0,
            "GR_cum": sum(len(row) for row in good),
        }
        for name, value in cumulative.items():
            out[name].append(value if scored_all else None)
    return out


gain = st.sampled_from([0.0, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, None])


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.lists(gain, max_size=5)), max_size=6),
    st.sampled_from([2.0, 1.5, 3.0, 4.0]),
)
def test_every_series_equals_its_definition(
    iterations: list[tuple[int, list[float | None]]], threshold: float
) -> None:
    sizes = [len(g) + extra for extra, g in iterations]  # |R^i| >= |UR^i|, duplicates as extra
    gains = [g for _, g in iterations]
    ours = iteration_series(sizes, gains, good_threshold=threshold)
    expected = definitions(sizes, gains, threshold)
    for name in SERIES_NAMES:
        assert ours[name] == pytest.approx(expected[name], abs=1e-12), name


def test_a_gain_equal_to_the_threshold_is_good() -> None:
    s = iteration_series([3], [[2.0, 1.999, 4.0]])
    assert (s["GR"], s["CG"], s["AvgGain"], s["SRE"]) == ([2], [6.0], [2.0], [2 / 3])
    assert iteration_series([1], [[2.5]], good_threshold=2.5)["GR"] == [1]
    assert iteration_series([1], [[2.5]], good_threshold=2.6)["GR"] == [0]


def test_an_iteration_may_return_only_new_results_but_not_more() -> None:
    s = iteration_series([2], [[3.0, 3.0]])
    assert (s["Dup"], s["SRR"]) == ([0], [0.0])
    with pytest.raises(ValueError) as error:
        iteration_series([2, 2], [[3.0], [1.0, 2.0, 3.0]])
    assert str(error.value) == "iteration 2: 3 new results but only 2 results"
    with pytest.raises(ValueError) as error:
        iteration_series([2, 2], [[3.0]])
    assert str(error.value) == "one list of new gains per iteration is needed"


def test_iterations_without_results_divide_nothing() -> None:
    s = iteration_series([0, 0, 2], [[], [], [3.0, 1.0]])
    assert s["AvgGain"] == [0.0, 0.0, 1.5]
    assert s["SRE"] == [0.0, 0.0, 0.5]
    assert s["SRR"] == [0.0, 0.0, 0.0]
    assert s["RAG"] == pytest.approx([0.0, 0.0, 0.5], abs=1e-15)
    assert s["DCG"] == pytest.approx([0.0, 0.0, 3.0 / 2.0], abs=1e-15)  # w(3) = 1/log2(4)


def test_an_unscored_gain_unscores_its_iteration_and_every_cumulative_value_after_it() -> None:
    s = iteration_series([1, 2, 1], [[3.0], [None, 1.0], [3.0]])
    assert s["AvgGain"] == [3.0, None, 3.0]
    assert s["GR"] == [1, None, 1]
    assert s["CG"] == [3.0, None, None]
    assert s["GR_cum"] == [1, None, None]
    assert s["SRE"] == [1.0, None, None]
    assert s["R_cum"] == [1, 3, 4] and s["UR_cum"] == [1, 3, 4]


def test_the_discount() -> None:
    assert discount(1) == 1.0
    assert discount(2) == 1 / math.log2(3)
    assert discount(3) == 0.5
    assert discount(7) == 1 / 3


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        ([1, 3], (3, None)),
        ([4, 2, 4], (4, None)),
        ([99], (99, None)),
        ([100], (100, None)),
        ([101], (100, None)),
        ([3, None, 1], (100, None)),
        ([], (None, "no good results")),
    ],
)
def test_iterations_for_all_good_results(
    first: list[int | None], expected: tuple[int | None, str | None]
) -> None:
    assert iterations_for_all_good(first) == expected


def test_iterations_for_all_good_results_with_another_cap() -> None:
    assert iterations_for_all_good([5], cap=5) == (5, None)
    assert iterations_for_all_good([6], cap=5) == (5, None)
    assert iterations_for_all_good([None], cap=7) == (7, None)
