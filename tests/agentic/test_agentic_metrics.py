"""Hand-computed traces: every number below is worked out in the comments."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.agentic import evaluate_agentic, iteration_series, iterations_for_all_good
from ragmeter.agentic.scoring import TraceScore

W2 = 1 / math.log2(3)  # w(2)
W4 = 1 / math.log2(5)  # w(4)


def r(url: str, gain: float | None = None, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"url": url, **fields}
    if gain is not None:
        out["gain"] = gain
    return out


def trace(
    tid: str, *iterations: list[list[dict[str, Any]]], earlier: list[Any] | None = None, **extra: Any
) -> dict[str, Any]:
    """A trace whose last turn has ``iterations``; each iteration is a list of searches (result lists)."""
    last = {
        "iterations": [
            {"searches": [{"query": f"q{i}.{s}", "results": res} for s, res in enumerate(it)]}
            for i, it in enumerate(iterations)
        ]
    }
    turns = [*(earlier or []), last]
    return {"trace_id": tid, "turns": turns, **extra}


def score(*traces: dict[str, Any], labels: list[dict[str, Any]] | None = None) -> list[TraceScore]:
    return evaluate_agentic(list(traces), labels).traces


def approx(values: list[Any]) -> list[Any]:
    return [pytest.approx(v) if isinstance(v, float) else v for v in values]


# The worked example: one earlier turn (ignored) and a last turn of five iterations, the first
# without a search (dropped before numbering), so i = 1..4.
#   i=1: search A: [A g3, B g1, A' (A with www. and a slash, g3)]; search B: [C g2]
#        |R|=4, UR={A,B,C}, Dup={A'} (within the iteration), good={A,C}: G1 = 3+2 = 5
#   i=2: [B' (B labelled 4 now: not counted again), D g0, A'' (A again)]
#        |R|=3, UR={D}, Dup={B',A''}, G2 = 0
#   i=3: one search that returned nothing: |R|=0, G3 = 0, AvgGain_3 = 0
#   i=4: [E g4]: |R|=1, UR={E}, G4 = 4
EARLIER = [{"iterations": [{"searches": [{"results": [r("https://e.org/E", 4)]}]}]}]
WORKED = {
    "trace_id": "worked",
    "turns": [
        *EARLIER,
        {
            "iterations": [
                {"searches": []},
                {
                    "searches": [
                        {
                            "query": "a",
                            "results": [
                                r("https://a.org/A", 3),
                                r("https://b.org/B", 1),
                                r("http://www.a.org/A/", 3),
                            ],
                        },
                        {"query": "b", "results": [r("https://c.org/C", 2)]},
                    ]
                },
                {
                    "searches": [
                        {
                            "results": [
                                r("https://b.org/B", 4),
                                r("https://d.org/D", 0),
                                r("https://a.org/A#x", 3),
                            ]
                        }
                    ]
                },
                {"searches": [{"results": []}]},
                {"searches": [{"results": [r("https://e.org/E", 4)]}]},
            ]
        },
    ],
}


def test_worked_example_every_series() -> None:
    (s,) = score(WORKED)
    assert s.status == "scored"
    assert s.n_iterations == 4 and s.dropped_iterations == 1 and s.earlier_turns == 1
    series = s.series
    assert series["R"] == [4, 3, 0, 1]
    assert series["UR"] == [3, 1, 0, 1]
    assert series["Dup"] == [1, 2, 0, 0]
    assert series["GR"] == [2, 0, 0, 1]
    assert series["R_cum"] == [4, 7, 7, 8]
    assert series["UR_cum"] == [3, 4, 4, 5]
    assert series["GR_cum"] == [2, 2, 2, 3]
    assert series["Dup_cum"] == [1, 3, 3, 3]
    assert series["CG"] == approx([5.0, 5.0, 5.0, 9.0])
    assert series["RG"] == approx([5.0, 5 / 2, 5 / 3, 9 / 4])
    dcg4 = 5 + W4 * 4
    assert series["DCG"] == approx([5.0, 5.0, 5.0, dcg4])
    assert series["DRG"] == approx([5.0, 5 / 2, 5 / 3, dcg4 / 4])
    assert series["AvgGain"] == approx([5 / 4, 0.0, 0.0, 4.0])
    assert series["RAG"] == approx([5 / 4, 5 / 8, 5 / 12, (5 / 4 + 4) / 4])
    assert series["DRAG"] == approx([5 / 4, (5 / 4 + W2 * 0) / 2, 5 / 12, (5 / 4 + W4 * 4) / 4])
    assert series["SRE"] == approx([2 / 4, 2 / 7, 2 / 7, 3 / 8])
    assert series["SRR"] == approx([1 / 4, 3 / 7, 3 / 7, 3 / 8])
    assert s.at_n["CG"] == pytest.approx(9.0)
    assert s.iterations_for_all_good == 4  # good: A (1), C (1), E (4)
    assert s.duplicates_by_key == {"domain_id": 0, "generic_id": 0, "url": 3, "content": 0}
    assert s.copies_with_other_gain == 1  # B' carried 4 against B's 1


def test_earlier_turns_are_not_seen_before() -> None:
    (s,) = score(WORKED)
    # E appeared in the earlier turn but is new at i=4 of the last turn
    assert s.series["UR"][3] == 1


def test_duplicate_labelled_higher_later_is_not_counted_again() -> None:
    (s,) = score(trace("t", [[r("https://a.org/x", 2)]], [[r("https://a.org/x", 4)]]))
    assert s.series["CG"] == [2.0, 2.0]
    assert s.series["GR"] == [1, 0]


def test_first_copy_without_gain_takes_a_later_copys_label() -> None:
    # the label is about the document, credited once, at its first occurrence (i=1)
    (s,) = score(trace("t", [[r("https://a.org/x")]], [[r("https://a.org/x/", 3)]]))
    assert s.series["CG"] == [3.0, 3.0]


def test_url_variants() -> None:
    same = [
        "https://www.example.com/guide/",
        "http://example.com/guide",
        "https://example.com/guide?utm_source=x&utm_medium=y",
        "https://example.com/guide#install",
    ]
    different = [
        "https://github.com/o/r?ref=main",
        "https://github.com/o/r?ref=dev",
        "https://example.com/Guide",
    ]
    (s,) = score(trace("t", [[[r(u, 0) for u in same + different]][0]]))
    assert s.series["R"] == [7]
    assert s.series["UR"] == [4]  # the guide, ref=main, ref=dev, /Guide
    assert s.duplicates_by_key["url"] == 3


def test_same_page_different_snippets_boilerplate_and_conflicting_ids() -> None:
    banner = "We use cookies to improve your experience on our website. By browsing you accept cookies."
    results = [
        r("https://a.org/page", 3, snippet="query-biased snippet one"),
        r("https://a.org/page", 3, snippet="a different snippet for another query"),  # same (url)
        r("https://x.org/1", 0, title="Cookie notice", snippet=banner),
        r("https://y.org/2", 0, title="Cookie notice", snippet=banner),
        r("https://z.org/3", 0, title="Cookie notice", snippet=banner),  # boilerplate: all different
        r("https://shop.example/item", 2, domain_id="sku:1"),
        r("https://shop.example/item", 2, domain_id="sku:2"),  # conflicting domain ids: different
    ]
    (s,) = score(trace("t", [results]))
    assert s.series["R"] == [7]
    assert s.series["UR"] == [6]  # one page, three banners, two SKUs
    assert s.duplicates_by_key == {"domain_id": 0, "generic_id": 0, "url": 1, "content": 0}
    assert s.series["CG"] == [3.0 + 2.0 + 2.0]


def test_zero_results_iteration() -> None:
    (s,) = score(trace("t", [[]], [[r("https://a.org", 4)]]))
    assert s.series["R"] == [0, 1]
    assert s.series["AvgGain"] == [0.0, 4.0]
    assert s.series["SRE"] == [0.0, 1.0]
    assert s.series["SRR"] == [0.0, 0.0]
    assert s.series["RAG"] == [0.0, 2.0]


def test_no_search_and_not_captured_are_left_out_and_counted() -> None:
    result = evaluate_agentic(
        [
            trace("ok", [[r("https://a.org", 2)]]),
            {"trace_id": "silent", "turns": [{"iterations": [{"searches": []}]}]},
            {
                "trace_id": "lost",
                "turns": [{"iterations": [{"searches": [{"query": "q", "results": None}]}]}],
            },
            {
                "trace_id": "lost-later",
                "turns": [
                    {
                        "iterations": [
                            {"searches": [{"results": [r("https://a.org", 4)]}]},
                            {"searches": [{"query": "q2"}]},
                        ]
                    }
                ],
            },
        ]
    )
    statuses = {s.trace_id: s.status for s in result.traces}
    assert statuses == {
        "ok": "scored",
        "silent": "no_search",
        "lost": "results_not_captured",
        "lost-later": "results_not_captured",
    }
    lost = next(s for s in result.traces if s.trace_id == "lost-later")
    assert lost.reason is not None and lost.reason.startswith("results not captured: iteration 2")
    assert lost.series == {}  # never scored as zero results
    agg = result.aggregate
    assert (agg.counts.scored, agg.counts.no_search, agg.counts.results_not_captured) == (1, 1, 2)
    assert agg.averages_at_n["CG"] == 2.0
    assert any("results not captured" in w for w in result.warnings)


def test_unscored_is_not_zero() -> None:
    result = evaluate_agentic(
        [
            trace("a", [[r("https://a.org/1", 4)]], [[r("https://a.org/2")]]),  # i=2 has an unlabelled result
            trace("b", [[r("https://b.org/1", 2)]], [[r("https://b.org/2", 0)]]),
        ]
    )
    a, _ = result.traces
    assert a.series["CG"] == [4.0, None]
    assert a.series["AvgGain"] == [4.0, None]
    assert a.series["SRR"] == [0.0, 0.0]  # counts need no gains
    assert a.n_unscored == 1 and a.unscored[0].key == "url:a.org/2"
    assert a.iterations_for_all_good is None and a.iterations_for_all_good_reason == "unscored gains"
    agg = result.aggregate
    assert agg.averages_by_iteration["CG"] == [3.0, 2.0]  # i=2: only trace b
    assert agg.n_by_iteration["CG"] == [2, 1]
    assert agg.averages_at_n["CG"] == 2.0
    assert agg.n_at_n["CG"] == 1
    assert agg.counts.unscored_results == 1


def test_averages_over_traces_of_different_length() -> None:
    agg = evaluate_agentic(
        [
            trace("long", [[r("https://a.org/1", 2)]], [[r("https://a.org/2", 4)]]),
            trace("short", [[r("https://b.org", 3)]]),
        ]
    ).aggregate
    assert agg.traces_by_iteration == [2, 1]
    assert agg.averages_by_iteration["CG"] == [2.5, 6.0]
    assert agg.averages_at_n["CG"] == 4.5  # (6 + 3) / 2
    assert agg.averages_at_n["IterationsForAllGoodResults"] == 1.5  # (2 + 1) / 2


def test_iterations_for_all_good_with_a_known_set() -> None:
    known = [{"domain_id": "doi:1"}, {"url": "https://www.b.org/x/"}]
    found = trace(
        "found",
        [[r("https://a.org", 4, domain_id="doi:1")]],
        [[]],
        [[r("http://b.org/x", 0)]],
        good_results=known,
    )
    missed = trace("missed", [[r("https://a.org", 4, domain_id="doi:1")]], good_results=known)
    nothing = trace("nothing", [[r("https://a.org", 1)]], good_results=[])
    derived_none = trace("derived", [[r("https://a.org", 1)]])
    s = {x.trace_id: x for x in score(found, missed, nothing, derived_none)}
    assert s["found"].iterations_for_all_good == 3  # the known set ignores gains (b.org/x has gain 0)
    assert s["missed"].iterations_for_all_good == 100
    assert s["nothing"].iterations_for_all_good is None
    assert s["derived"].iterations_for_all_good is None
    assert s["derived"].iterations_for_all_good_reason == "no good results"


def test_pure_functions() -> None:
    assert iteration_series([], []) == {name: [] for name in iteration_series([], [])}
    assert iterations_for_all_good([150]) == (100, None)
    with pytest.raises(ValueError, match="new results but only"):
        iteration_series([1], [[1.0, 2.0]])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.lists(st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.0]), max_size=6)),
        max_size=8,
    )
)
def test_series_invariants(iterations: list[tuple[int, list[float]]]) -> None:
    sizes = [max(n, len(g)) for n, g in iterations]
    gains: list[list[float | None]] = [list(g) for _, g in iterations]
    s = iteration_series(sizes, gains)
    for i in range(len(sizes)):
        assert s["R_cum"][i] == s["UR_cum"][i] + s["Dup_cum"][i]  # type: ignore[operator]
        assert 0.0 <= s["SRE"][i] <= 1.0  # type: ignore[operator]
        assert 0.0 <= s["SRR"][i] <= 1.0  # type: ignore[operator]
        if i:
            assert s["CG"][i] >= s["CG"][i - 1]  # type: ignore[operator]
            assert s["DCG"][i] <= s["CG"][i] + 1e-9  # type: ignore[operator]


@st.composite
def small_traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    urls = [
        "https://a.org/1",
        "http://www.a.org/1/",
        "https://a.org/2",
        "https://b.org/1",
        "https://c.org/x?utm_source=q",
    ]
    banner = "We use cookies to improve your experience on our website. By browsing you accept cookies."
    out = []
    for t in range(draw(st.integers(1, 5))):
        iterations = []
        for _ in range(draw(st.integers(1, 3))):
            res = [
                {
                    "url": draw(st.sampled_from(urls)),
                    "gain": draw(st.sampled_from([0, 2, 3])),
                    "snippet": draw(st.sampled_from([banner, "x"])),
                }
                for _ in range(draw(st.integers(0, 4)))
            ]
            iterations.append([res])
        out.append(trace(f"t{t}", *iterations))
    return out


@settings(max_examples=60, deadline=None)
@given(small_traces(), st.randoms(use_true_random=False))
def test_order_of_traces_does_not_matter(traces: list[dict[str, Any]], rnd: random.Random) -> None:
    shuffled = list(traces)
    rnd.shuffle(shuffled)
    a, b = evaluate_agentic(traces), evaluate_agentic(shuffled)
    by_id = {s.trace_id: s for s in b.traces}
    for s in a.traces:
        assert s.model_dump(exclude={"where"}) == by_id[s.trace_id].model_dump(exclude={"where"})
    assert a.aggregate == b.aggregate


def test_good_threshold_is_checked() -> None:
    from ragmeter.errors import ConfigError

    with pytest.raises(ConfigError, match=r"good_threshold must be a number in \(0, 4\], got 0"):
        evaluate_agentic([trace("t", [[r("https://a.org", 2)]])], good_threshold=0)
    for bad in (True, math.nan, math.inf, 4.5):  # True is 1 to Python, but not a threshold
        with pytest.raises(ConfigError, match=rf"got {bad!r}$"):
            evaluate_agentic([trace("t", [[r("https://a.org", 2)]])], good_threshold=bad)
    (s,) = evaluate_agentic(
        [trace("t", [[r("https://a.org", 3), r("https://b.org", 2)]])], good_threshold=3
    ).traces
    assert s.series["CG"] == [3.0]
