from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ragmeter.agentic import GainLabeller, UniqueResult, Unscored, evaluate_agentic
from ragmeter.dedup import content_key
from ragmeter.errors import InputError, RagmeterError


def one_iteration(tid: str, results: list[dict[str, Any]], task: str | None = "the task") -> dict[str, Any]:
    return {
        "trace_id": tid,
        "task": task,
        "turns": [{"iterations": [{"searches": [{"query": "q", "results": results}]}]}],
    }


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


class RecordingLabeller:
    name = "recording"

    def __init__(self, replies: dict[str, float | Unscored] | None = None) -> None:
        self.calls: list[tuple[str | None, list[UniqueResult]]] = []
        self.replies = replies or {}

    def label(self, task: str | None, results: Sequence[UniqueResult]) -> Sequence[float | Unscored]:
        self.calls.append((task, list(results)))
        return [self.replies.get(r.key, 2.0) for r in results]


def test_labels_file_by_url_domain_id_id_and_content_key(tmp_path: Path) -> None:
    traces = [
        one_iteration(
            "t1",
            [
                {"url": "http://a.org/x"},
                {"domain_id": "doi:10.1/y", "url": "https://pub.org/y"},
                {"id": "g-7", "title": "T"},
                {"title": "Only text", "snippet": "No id and no URL"},
                {"url": "https://a.org/z", "gain": 1},
            ],
        )
    ]
    labels = [
        {"trace_id": "t1", "url": "https://www.a.org/x/", "gain": 3},
        {"trace_id": "t1", "domain_id": "doi:10.1/y", "gain": 4},
        {"trace_id": "t1", "id": "g-7", "gain": 2},
        {"trace_id": "t1", "key": "content:" + content_key("Only text", "No id and no URL").hex(), "gain": 2},
        {"trace_id": "t1", "key": "url:https://a.org/z", "gain": 4},  # overrides the trace's gain 1
    ]
    (s,) = evaluate_agentic(traces, write_jsonl(tmp_path / "labels.jsonl", labels)).traces
    assert s.series["CG"] == [3 + 4 + 2 + 2 + 4]
    assert s.gain_sources == {"labels": 5}


def test_label_null_is_unscored_with_its_reason() -> None:
    traces = [one_iteration("t1", [{"url": "https://a.org/x"}])]
    result = evaluate_agentic(
        traces,
        [{"trace_id": "t1", "url": "https://a.org/x", "gain": None, "reason": "judge reply unparsable"}],
    )
    (s,) = result.traces
    assert s.series["CG"] == [None]
    assert s.unscored[0].reason == "judge reply unparsable"
    assert result.aggregate.averages_at_n["CG"] is None
    assert result.aggregate.n_at_n["CG"] == 0


def test_labels_that_do_not_match_are_reported() -> None:
    result = evaluate_agentic(
        [one_iteration("t1", [{"url": "https://a.org/x", "gain": 2}])],
        [
            {"trace_id": "t1", "url": "https://other.org", "gain": 3},
            {"trace_id": "nope", "url": "https://a.org/x", "gain": 3},
        ],
    )
    assert result.aggregate.counts.labels_not_matching_a_result == 1
    assert any(
        "labels name a trace_id that is not in the traces (first: labels[1])" in w for w in result.warnings
    )


def test_conflicting_label_lines_name_both(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            {"trace_id": "t1", "url": "https://a.org/x", "gain": 3},
            {"trace_id": "t1", "url": "http://www.a.org/x/", "gain": 1},
        ],
    )
    with pytest.raises(InputError) as exc:
        evaluate_agentic([one_iteration("t1", [{"url": "https://a.org/x"}])], path)
    assert str(exc.value) == (
        f"{path}:2: gain 1.0 for url:a.org/x of trace 't1' contradicts gain 3.0 at {path}:1"
    )


def test_two_keys_of_one_result_with_different_gains_is_an_error() -> None:
    with pytest.raises(
        InputError, match=r"^labels\[1\]: domain:doi:1 and url:a.org/x \(labels\[0\]\) are the same result"
    ):
        evaluate_agentic(
            [one_iteration("t1", [{"url": "https://a.org/x", "domain_id": "doi:1"}])],
            [
                {"trace_id": "t1", "url": "https://a.org/x", "gain": 3},
                {"trace_id": "t1", "domain_id": "doi:1", "gain": 1},
            ],
        )


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"trace_id": "t1", "gain": 2},
            "labels[0]: a label names its result with exactly one of key, domain_id, id or url",
        ),
        (
            {"trace_id": "t1", "url": "u", "id": "i", "gain": 2},
            "labels[0]: a label names its result with exactly one of key, domain_id, id or url (got id, url)",
        ),
        ({"trace_id": "t1", "url": "https://a.org"}, "labels[0]: gain: Field required"),
        (
            {"trace_id": "t1", "url": "https://a.org", "gain": 7},
            "labels[0]: gain: Input should be less than or equal to 4",
        ),
        (
            {"trace_id": "t1", "url": "https://a.org", "gain": "3"},
            "labels[0]: gain: Input should be a valid number",
        ),
        (
            {"trace_id": "t1", "key": "doc-1", "gain": 2},
            "labels[0]: key: expected 'domain:…', 'id:…', 'url:…' or 'content:…', got 'doc-1'",
        ),
        *(
            (
                {"trace_id": "t1", "key": key, "gain": 2},
                f"labels[0]: key: expected 'domain:…', 'id:…', 'url:…' or 'content:…', got {key!r}",
            )
            for key in ("id:", "id:  ", "content:", "ur:a.org", ":x")  # a kind with no value, an unknown kind
        ),
    ],
)
def test_bad_label_records(row: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as exc:
        evaluate_agentic([one_iteration("t1", [{"url": "https://a.org"}])], [row])
    assert str(exc.value) == message


def test_labeller_is_called_once_per_cluster_never_for_a_duplicate() -> None:
    labeller = RecordingLabeller({"url:a.org/x": 4.0, "url:b.org/y": Unscored("judge timed out")})
    traces = [
        one_iteration(
            "t1",
            [
                {"url": "https://a.org/x", "title": "A", "snippet": "short"},
                {"url": "http://www.a.org/x/", "title": "A", "snippet": "a longer, more complete snippet"},
                {"url": "https://b.org/y"},
                {"url": "https://c.org/z", "gain": 3},  # already labelled in the trace: not asked
            ],
        ),
        one_iteration("t2", [{"url": "https://a.org/x"}]),  # same task and cluster key: answered from memory
        one_iteration("t3", [{"url": "https://a.org/x"}], task="another task"),
    ]
    checker: GainLabeller = labeller
    result = evaluate_agentic(traces, labeller=checker)
    assert [(task, [r.key for r in results]) for task, results in labeller.calls] == [
        ("the task", ["url:a.org/x", "url:b.org/y"]),
        ("another task", ["url:a.org/x"]),
    ]
    first = labeller.calls[0][1][0]
    assert first.snippet == "a longer, more complete snippet"  # the most complete copy represents the cluster
    assert first.queries == ("q",)
    t1, t2, t3 = result.traces
    assert t1.series["CG"] == [None]  # b.org/y is unscored, not 0
    assert t1.unscored[0].reason == "judge timed out"
    assert t2.series["CG"] == [4.0] and t3.series["CG"] == [4.0]
    assert result.provenance["labeller"] == "recording"


def test_labeller_replies_are_checked() -> None:
    class Bad:
        name = "bad"

        def label(self, task: str | None, results: Sequence[UniqueResult]) -> Sequence[float | Unscored]:
            return [9.0 for _ in results]

    class Short:
        name = "short"

        def label(self, task: str | None, results: Sequence[UniqueResult]) -> Sequence[float | Unscored]:
            return []

    (s,) = evaluate_agentic([one_iteration("t1", [{"url": "https://a.org"}])], labeller=Bad()).traces
    assert s.unscored[0].reason == "labeller 'bad' returned 9.0, not a gain in [0, 4]"
    with pytest.raises(RagmeterError, match="labeller 'short' returned 0 gains for 1 results"):
        evaluate_agentic([one_iteration("t1", [{"url": "https://a.org"}])], labeller=Short())


def test_the_labeller_sees_every_field_of_the_most_complete_copy() -> None:
    labeller = RecordingLabeller()
    trace = {
        "trace_id": "t",
        "task": "the task",
        "turns": [
            {
                "iterations": [
                    {"searches": [{"query": "q1", "results": [{"url": "https://a.org/x", "title": "A"}]}]},
                    {
                        "searches": [
                            {
                                "query": "q2",
                                "results": [
                                    {
                                        "url": "https://a.org/x/",
                                        "id": "x-7",
                                        "title": "A",
                                        "snippet": "longer",
                                    }
                                ],
                            }
                        ]
                    },
                ]
            }
        ],
    }
    evaluate_agentic([trace], labeller=labeller)
    [(_, [seen])] = labeller.calls
    assert seen == UniqueResult("url:a.org/x", None, "x-7", "https://a.org/x/", "A", "longer", ("q1", "q2"))
