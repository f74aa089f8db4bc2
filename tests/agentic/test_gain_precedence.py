"""Where each unique result's gain comes from: labels file, trace, labeller, or unscored (never 0)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pytest

from ragmeter.agentic.clusters import cluster_trace
from ragmeter.agentic.gains import (
    ClusterGain,
    LabellerMemo,
    UniqueResult,
    Unscored,
    representative,
    resolve_gains,
)
from ragmeter.agentic.labels import Label
from ragmeter.agentic.prepare import PreparedTrace, prepare_trace
from ragmeter.agentic.trace import Trace
from ragmeter.dedup import KeyMaker
from ragmeter.errors import InputError, RagmeterError


def prepared(*searches: list[dict[str, Any]], task: str | None = "task") -> PreparedTrace:
    trace = Trace.model_validate(
        {
            "trace_id": "t",
            "task": task,
            "turns": [
                {
                    "iterations": [
                        {"searches": [{"query": f"q{i}", "results": r} for i, r in enumerate(searches)]}
                    ]
                }
            ],
        }
    )
    return prepare_trace(trace, where="traces.jsonl:1", keys=KeyMaker())


def label(key: str, gain: float | None, where: str = "labels.jsonl:1", reason: str | None = None) -> Label:
    return Label("t", key, gain, reason, where)


class Replies:
    name = "replies"

    def __init__(self, *replies: object) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str | None, list[UniqueResult]]] = []

    def label(self, task: str | None, results: Sequence[UniqueResult]) -> Sequence[Any]:
        self.calls.append((task, list(results)))
        return self.replies[: len(results)]


def gains_of(out: Any) -> list[tuple[float | None, str, str | None]]:
    return [(g.gain, g.source, g.reason) for g in out.gains]


def test_no_gain_anywhere_is_unscored_with_a_reason() -> None:
    p = prepared([{"url": "https://a.org/1"}])
    out = resolve_gains(p, cluster_trace(p))
    assert gains_of(out) == [(None, "none", "no gain in the trace or the labels file")]
    assert out.unmatched_labels == [] and out.copies_with_other_gain == 0


def test_the_first_copy_that_carries_a_gain_sets_the_cluster_gain() -> None:
    p = prepared(
        [
            {"url": "https://a.org/1"},
            {"url": "https://a.org/1", "gain": 3},
            {"url": "https://a.org/1", "gain": 1},  # a later copy: not counted, but noted
            {"url": "https://a.org/1", "gain": 3},  # same gain again: nothing to note
            {"url": "https://b.org/2", "gain": 0},
        ]
    )
    out = resolve_gains(p, cluster_trace(p))
    assert gains_of(out) == [(3.0, "trace", None), (0.0, "trace", None)]
    assert out.copies_with_other_gain == 1


def test_the_labels_file_wins_and_its_copies_are_not_compared() -> None:
    p = prepared(
        [
            {"url": "https://a.org/1", "gain": 1},
            {"url": "https://a.org/1", "gain": 2},
            {"url": "https://b.org/2", "gain": 2},
        ]
    )
    out = resolve_gains(p, cluster_trace(p), labels=[label("url:a.org/1", 4.0), label("url:c.org/3", 1.0)])
    assert gains_of(out) == [(4.0, "labels", None), (2.0, "trace", None)]
    assert out.copies_with_other_gain == 0
    assert [lab.key for lab in out.unmatched_labels] == ["url:c.org/3"]


def test_a_label_for_no_result_of_the_trace_does_not_stop_the_others() -> None:
    p = prepared([{"url": "https://a.org/1"}, {"url": "https://b.org/2"}])
    labels = [label("url:zzz.org/9", 1.0), label("url:b.org/2", 3.0), label("url:a.org/1", 2.0)]
    out = resolve_gains(p, cluster_trace(p), labels=labels)
    assert gains_of(out) == [(2.0, "labels", None), (3.0, "labels", None)]
    assert [lab.key for lab in out.unmatched_labels] == ["url:zzz.org/9"]


def test_an_unscored_label_keeps_its_reason_or_says_where_it_is() -> None:
    p = prepared([{"url": "https://a.org/1", "gain": 2}, {"url": "https://b.org/2", "gain": 2}])
    labels = [
        label("url:a.org/1", None, reason="judge timed out"),
        label("url:b.org/2", None, where="l.jsonl:7"),
    ]
    out = resolve_gains(p, cluster_trace(p), labels=labels)
    assert gains_of(out) == [
        (None, "labels", "judge timed out"),
        (None, "labels", "unscored in the labels file (l.jsonl:7)"),
    ]


def test_two_labels_of_one_cluster_must_agree() -> None:
    p = prepared([{"id": "7", "url": "https://a.org/1"}])
    same = [label("url:a.org/1", 2.0), label("id:7", 2.0, where="labels.jsonl:2")]
    assert gains_of(resolve_gains(p, cluster_trace(p), labels=same)) == [(2.0, "labels", None)]
    clash = [label("url:a.org/1", 2.0), label("id:7", 3.0, where="labels.jsonl:2")]
    with pytest.raises(InputError) as error:
        resolve_gains(p, cluster_trace(p), labels=clash)
    assert str(error.value) == (
        "labels.jsonl:2: id:7 and url:a.org/1 (labels.jsonl:1) are the same result of trace 't' "
        "but have different gains (3.0 and 2.0)"
    )


def test_the_labeller_is_asked_once_for_every_cluster_still_without_a_gain() -> None:
    p = prepared(
        [{"url": "https://a.org/1"}, {"url": "https://b.org/2", "gain": 1}, {"url": "https://c.org/3"}]
    )
    labeller = Replies(4, Unscored("no reply"))
    out = resolve_gains(p, cluster_trace(p), labeller=labeller)
    assert [(task, [r.key for r in results]) for task, results in labeller.calls] == [
        ("task", ["url:a.org/1", "url:c.org/3"])
    ]
    assert gains_of(out) == [(4.0, "labeller", None), (1.0, "trace", None), (None, "labeller", "no reply")]
    assert isinstance(out.gains[0].gain, float)


def test_the_labeller_is_not_asked_when_nothing_is_missing() -> None:
    p = prepared([{"url": "https://a.org/1", "gain": 2}])
    labeller = Replies()
    assert gains_of(resolve_gains(p, cluster_trace(p), labeller=labeller)) == [(2.0, "trace", None)]
    assert labeller.calls == []


def test_answers_are_remembered_per_task_and_key() -> None:
    memo: LabellerMemo = {}
    first, second = Replies(3), Replies(1)
    p = prepared([{"url": "https://a.org/1"}])
    resolve_gains(p, cluster_trace(p), labeller=first, memo=memo)
    again = resolve_gains(p, cluster_trace(p), labeller=second, memo=memo)
    assert second.calls == [] and gains_of(again) == [(3.0, "labeller", None)]
    other_task = prepared([{"url": "https://a.org/1"}], task="another task")
    assert gains_of(resolve_gains(other_task, cluster_trace(other_task), labeller=second, memo=memo)) == [
        (1.0, "labeller", None)
    ]
    assert memo == {("task", "url:a.org/1"): 3.0, ("another task", "url:a.org/1"): 1.0}


@pytest.mark.parametrize(("reply", "gain"), [(0, 0.0), (4, 4.0), (0.0, 0.0), (2.5, 2.5), (4.0, 4.0)])
def test_labeller_gains_on_the_scale_are_kept(reply: object, gain: float) -> None:
    p = prepared([{"url": "https://a.org/1"}])
    [(value, source, reason)] = gains_of(resolve_gains(p, cluster_trace(p), labeller=Replies(reply)))
    assert (value, source, reason) == (gain, "labeller", None)


@pytest.mark.parametrize("reply", [-0.001, 4.001, True, False, math.nan, math.inf, "3", None])
def test_labeller_replies_off_the_scale_are_unscored(reply: object) -> None:
    p = prepared([{"url": "https://a.org/1"}])
    [(value, source, reason)] = gains_of(resolve_gains(p, cluster_trace(p), labeller=Replies(reply)))
    assert (value, source) == (None, "labeller")
    assert reason == f"labeller 'replies' returned {reply!r}, not a gain in [0, 4]"


def test_a_labeller_that_answers_the_wrong_number_of_results_is_an_error() -> None:
    p = prepared([{"url": "https://a.org/1"}, {"url": "https://b.org/2"}])
    with pytest.raises(RagmeterError) as error:
        resolve_gains(p, cluster_trace(p), labeller=Replies(2))
    assert str(error.value) == "trace 't': labeller 'replies' returned 1 gains for 2 results"


def test_the_representative_is_the_most_complete_copy_and_the_first_on_ties() -> None:
    p = prepared(
        [{"url": "https://a.org/1", "title": "ab", "snippet": "c"}, {"url": "https://b.org/2"}],
        [
            {"url": "https://a.org/1", "title": "a", "snippet": "bc"},
            {"url": "https://a.org/1", "snippet": "abcd"},
        ],
        [{"url": "https://a.org/1", "title": "xyz"}],
    )
    clusters = cluster_trace(p)
    best = representative(p, clusters, 0)
    assert (best.title, best.snippet, best.url) == (None, "abcd", "https://a.org/1")
    assert best.queries == ("q0", "q1", "q2")
    assert best.key == "url:a.org/1"
    tie = prepared(
        [
            {"url": "https://a.org/1", "title": "ab", "snippet": "c"},
            {"url": "https://a.org/1", "title": "a", "snippet": "bc"},
        ]
    )
    assert representative(tie, cluster_trace(tie), 0).title == "ab"
    assert representative(p, clusters, 1) == UniqueResult(
        "url:b.org/2", None, None, "https://b.org/2", None, None, ("q0",)
    )


def test_the_representative_carries_the_ids_of_its_copy() -> None:
    p = prepared(
        [{"id": "g-7", "domain_id": "doi:1", "url": "https://a.org/1", "title": "T", "snippet": "S"}]
    )
    assert representative(p, cluster_trace(p), 0) == UniqueResult(
        "domain:doi:1", "doi:1", "g-7", "https://a.org/1", "T", "S", ("q0",)
    )


def test_cluster_gain_defaults() -> None:
    assert ClusterGain(1.0, "trace") == ClusterGain(1.0, "trace", None)
