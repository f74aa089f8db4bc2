"""The averages over traces against a plain loop, value for value, whatever the series' lengths."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.agentic.aggregate import aggregate_scores
from ragmeter.agentic.scoring import TraceScore

NAMES = ("CG", "SRR", "R")
values = st.one_of(st.none(), st.integers(0, 9), st.floats(0, 4, allow_nan=False), st.just(0.1))


@st.composite
def scores(draw: st.DrawFn) -> list[TraceScore]:
    out = []
    for k in range(draw(st.integers(0, 8))):
        n = draw(st.integers(1, 4))
        series = {}
        for name in NAMES:
            if draw(st.integers(0, 5)):  # sometimes a name is missing, or of another length
                series[name] = draw(st.lists(values, min_size=n, max_size=n if draw(st.booleans()) else 5))
        out.append(
            TraceScore(
                trace_id=f"t{k}",
                where="-",
                status=draw(st.sampled_from(["scored", "scored", "no_search"])),
                n_iterations=n,
                series=series,
                at_n={name: draw(values) for name in NAMES},
                iterations_for_all_good=draw(st.one_of(st.none(), st.integers(1, 4))),
            )
        )
    return out


def _plain(
    scores: list[TraceScore],
) -> tuple[dict[str, list[float | None]], dict[str, list[int]], dict[str, float | None]]:
    scored = [s for s in scores if s.status == "scored"]
    depth = max((s.n_iterations for s in scored), default=0)
    cells: dict[str, list[list[float]]] = {n: [[] for _ in range(max(depth, 5))] for n in NAMES}
    for s in scored:
        for name in NAMES:
            for i, v in enumerate(s.series.get(name, [])):
                if v is not None:
                    cells[name][i].append(float(v))
    means = {n: [math.fsum(c) / len(c) if c else None for c in cs[:depth]] for n, cs in cells.items()}
    counts = {n: [len(c) for c in cs[:depth]] for n, cs in cells.items()}
    finals = {}
    for name in NAMES:
        got = [float(s.at_n[name]) for s in scored if s.at_n.get(name) is not None]
        finals[name] = math.fsum(got) / len(got) if got else None
    return means, counts, finals


@settings(max_examples=200, deadline=None)
@given(scores())
def test_the_averages_are_a_plain_loop_value_for_value(traces: list[TraceScore]) -> None:
    if any(len(v) > s.n_iterations for s in traces for v in s.series.values()):
        traces = [s for s in traces if all(len(v) <= s.n_iterations for v in s.series.values())]
    result = aggregate_scores(traces, names=NAMES)
    means, counts, finals = _plain(traces)
    assert result.averages_by_iteration == means
    assert result.n_by_iteration == counts
    assert {n: result.averages_at_n[n] for n in NAMES} == finals
    good = [s.iterations_for_all_good for s in traces if s.status == "scored" and s.iterations_for_all_good]
    assert result.averages_at_n["IterationsForAllGoodResults"] == (sum(good) / len(good) if good else None)


def _scored(tid: str, **fields: object) -> TraceScore:
    """A scored trace of one iteration (CG 1.0), with ``fields`` on top."""
    fields.setdefault("series", {"CG": [1.0]})
    return TraceScore(trace_id=tid, where="-", status="scored", n_iterations=1, **fields)


def test_the_final_values_are_named_once_each_in_order() -> None:
    score = _scored(
        "a", series={"CG": [1.0], "R": [2.0]}, at_n={"CG": 1.0, "R": 2.0}, iterations_for_all_good=1
    )
    aggregate = aggregate_scores([score], names=("CG", "R"))
    assert list(aggregate.averages_at_n) == ["CG", "R", "IterationsForAllGoodResults"]
    assert list(aggregate.n_at_n) == list(aggregate.averages_at_n)
    assert aggregate.averages_at_n["IterationsForAllGoodResults"] == 1.0


def test_redundancy_and_counts_pool_the_scored_traces() -> None:
    def scored(tid: str, results: float, url_dups: int, reason: str | None) -> TraceScore:
        return _scored(
            tid,
            at_n={"CG": 1.0, "R_cum": results},
            duplicates_by_key={"url": url_dups, "content": 1},
            iterations_for_all_good_reason=reason,
        )

    aggregate = aggregate_scores(
        [scored("a", 6.0, 2, "no good results"), scored("b", 4.0, 1, "unscored gains")], names=("CG",)
    )
    redundancy = aggregate.redundancy
    assert (redundancy.results, redundancy.duplicates) == (10, 5)
    assert redundancy.by_key["url"] == 3 and redundancy.by_key["content"] == 2
    assert redundancy.srr == 0.5 and redundancy.share_by_key["url"] == 0.3
    counts = aggregate.counts
    assert (counts.iterations_for_all_good_undefined, counts.iterations_for_all_good_unscored) == (1, 1)


def test_traces_with_unscored_results_are_those_with_at_least_one() -> None:
    traces = [_scored("a", n_unscored=0), _scored("b", n_unscored=3), _scored("c", n_unscored=0)]
    counts = aggregate_scores(traces, names=("CG",)).counts
    assert (counts.traces_with_unscored_results, counts.unscored_results) == (1, 3)


def test_unscored_results_count_a_trace_with_one() -> None:
    traces = [_scored("a", n_unscored=1), _scored("b", n_unscored=3), _scored("c", n_unscored=0)]
    counts = aggregate_scores(traces, names=("CG",)).counts
    assert (counts.traces_with_unscored_results, counts.unscored_results) == (2, 4)


def test_the_reasons_for_no_iterations_for_all_good_are_counted_apart() -> None:
    reasons = ["no good results", "no good results", "no good results", "unscored gains", None]
    traces = [_scored(f"t{i}", iterations_for_all_good_reason=r) for i, r in enumerate(reasons)]
    counts = aggregate_scores(traces, names=("CG",)).counts
    assert (counts.iterations_for_all_good_undefined, counts.iterations_for_all_good_unscored) == (3, 1)


def test_redundancy_counts_no_results_for_a_trace_without_r_cum_and_keeps_other_kinds() -> None:
    traces = [
        _scored("a", at_n={"CG": 1.0, "R_cum": 4.0}, duplicates_by_key={"url": 1}),
        _scored("b", at_n={"CG": 1.0}, duplicates_by_key={"another kind": 2}),
    ]
    redundancy = aggregate_scores(traces, names=("CG",)).redundancy
    assert (redundancy.results, redundancy.duplicates) == (4, 3)
    assert redundancy.by_key["another kind"] == 2 and redundancy.by_key["url"] == 1
