"""Whole-RAG kernels at their edges: rank equal to k, empty groups, and why each query is unscored."""

from __future__ import annotations

from typing import Any

import pytest

from ragmeter import evaluate
from ragmeter.metrics.rag import doc_type, doc_type_coverage, recency_pass
from ragmeter.metrics.records import AnchorFacts, RagBatch
from ragmeter.schema.samples import Sample

A = {"rel_path": "a.md"}
B = {"rel_path": "b.pdf"}


def facts(first: tuple[int, ...], groups: tuple[int, ...] = (), refs: Any = None) -> AnchorFacts:
    return AnchorFacts(
        tuple(f"f{i}.md" for i in range(len(first))), (False,) * len(first), first, groups, refs, None
    )


@pytest.mark.parametrize(
    ("first", "k", "hit"),
    [
        ((3,), 3, True),
        ((3,), 2, False),
        ((3,), None, True),
        ((0,), None, False),
        ((0,), 5, False),
        ((4, 1), 1, True),
    ],
)
def test_a_support_found_at_rank_k_is_a_hit_at_k(first: tuple[int, ...], k: int | None, hit: bool) -> None:
    assert facts(first).hit(k) is hit


def test_a_hit_can_be_asked_of_some_supports_only() -> None:
    f = facts((0, 2, 5))
    assert f.hit(5, [0]) is False
    assert f.hit(2, [2]) is False and f.hit(5, [2]) is True
    assert f.hit(None, [0, 1]) is True
    assert f.hit(None, []) is False


@pytest.mark.parametrize(
    ("groups", "k", "all_found"),
    [((2, 3), 3, True), ((2, 3), 2, False), ((2, 0), None, False), ((2, 3), None, True), ((), 1, True)],
)
def test_every_group_must_be_found_within_k(groups: tuple[int, ...], k: int | None, all_found: bool) -> None:
    assert facts((), groups).all_groups(k) is all_found


@pytest.mark.parametrize(
    ("refs", "cited"),
    [(None, False), ((), False), ((frozenset(),), False), ((frozenset(), frozenset({0})), True)],
)
def test_cited_means_some_reference_matches_a_support(refs: Any, cited: bool) -> None:
    assert facts((0,), refs=refs).cited() is cited


def per_query(samples: list[dict[str, Any]], outputs: dict[str, Any], metric: str) -> dict[str, float | None]:
    result = evaluate(samples, outputs, metrics=[metric])
    return {q: next(iter(values.values())) for q, values in result.per_query.items()}


def reasons(samples: list[dict[str, Any]], outputs: dict[str, Any], metric: str) -> dict[str, Any]:
    result = evaluate(samples, outputs, metrics=[metric])
    return {q: next(iter(d.get("unscored", {}).values()), None) for q, d in result.query_details.items()}


def test_recall_all_at_the_cutoff_and_who_is_left_out() -> None:
    samples = [
        {"id": "edge", "required_support_groups": [[A], [B]]},
        {"id": "late", "required_support_groups": [[A], [B]]},
        {"id": "plain", "gold_supports": [A]},
        {"id": "unans", "required_support_groups": [[A]], "answerable": False},
    ]
    retrieved = {
        "edge": [A, {"rel_path": "x.md"}, B],
        "late": [A, {"rel_path": "x.md"}, {"rel_path": "y.md"}, B],
    }
    outputs = {q: {"retrieved": items} for q, items in retrieved.items()} | {"plain": {}, "unans": {}}
    assert per_query(samples, outputs, "recall_all@3") == {
        "edge": 1.0,
        "late": 0.0,
        "plain": None,
        "unans": None,
    }
    assert reasons(samples, outputs, "recall_all@3") == {
        "edge": None,
        "late": None,
        "plain": "no required_support_groups",
        "unans": "unanswerable question",
    }


def test_attribution_leaves_out_what_it_cannot_score() -> None:
    samples = [
        {"id": "cites", "gold_supports": [A]},
        {"id": "misses", "gold_supports": [A]},
        {"id": "unans", "gold_supports": [A], "answerable": False},
        {"id": "ids", "expected_output": ["d1"]},
    ]
    outputs = {
        "cites": {"references": [{"rel_path": "z.md"}, A]},
        "misses": {"references": [{"rel_path": "z.md"}]},
        "unans": {"references": [A]},
        "ids": {"references": [A]},
    }
    assert per_query(samples, outputs, "attribution_hit") == {
        "cites": 1.0,
        "misses": 0.0,
        "unans": None,
        "ids": None,
    }
    assert reasons(samples, outputs, "attribution_hit") == {
        "cites": None,
        "misses": None,
        "unans": "unanswerable question",
        "ids": "no gold supports",
    }


def test_scope_miss_reasons_for_each_query_it_leaves_out() -> None:
    samples = [
        {"id": "in", "gold_supports": [A]},
        {"id": "out", "gold_supports": [A]},
        {"id": "off", "gold_supports": [A]},
        {"id": "none", "gold_supports": [A]},
        {"id": "failed", "gold_supports": [A]},
        {"id": "ids", "expected_output": ["d1"]},
        {"id": "unans", "gold_supports": [A], "answerable": False},
        {"id": "silent", "gold_supports": [A]},
    ]
    outputs = {
        "in": {"folder_mode": "on", "selected_folders": ["."]},
        "out": {"folder_mode": "on", "selected_folders": ["docs"]},
        "off": {"folder_mode": "off"},
        "none": {},
        "failed": {"folder_mode": "on", "error": "timeout"},
        "ids": {"folder_mode": "on", "selected_folders": ["."]},
        "unans": {"folder_mode": "on", "selected_folders": ["."]},
    }
    assert per_query(samples, outputs, "scope_miss_rate") == {
        "in": 0.0,
        "out": 1.0,
        "off": None,
        "none": None,
        "failed": None,
        "ids": None,
        "unans": None,
        "silent": None,
    }
    assert reasons(samples, outputs, "scope_miss_rate") == {
        "in": None,
        "out": None,
        "off": "folder selection off",
        "none": "no 'folder_mode' in the output",
        "failed": "the call failed and recorded no 'selected_folders'",
        "ids": "no gold supports",
        "unans": "unanswerable question",
        "silent": "no recorded output",
    }


def test_a_whole_rag_metric_on_a_trec_run_names_itself(tmp_path: Any) -> None:
    from ragmeter.api import evaluate_trec
    from ragmeter.errors import MissingFieldError

    (tmp_path / "qrels").write_text("q 0 d 1\n", encoding="utf-8")
    (tmp_path / "run").write_text("q Q0 d 1 1.0 r\n", encoding="utf-8")
    with pytest.raises(MissingFieldError) as error:
        evaluate_trec(tmp_path / "qrels", tmp_path / "run", metrics=["recall_all@5"])
    assert str(error.value) == "metric recall_all@5 needs recorded outputs of a dataset (not a TREC run)"


@pytest.mark.parametrize(
    ("hits", "newer_ok", "both_ok"),
    [
        ((frozenset({1}),), True, False),  # only the newer one
        ((frozenset({0}),), False, False),  # only the older one
        ((frozenset({0, 1}),), True, True),  # one reference to both (nested headings in one file)
        ((frozenset({1}), frozenset({0})), False, True),  # the older one on its own
        ((frozenset({1}), frozenset()), True, False),  # a reference to no support changes nothing
        ((), False, False),
    ],
)
def test_recency_rules(hits: tuple[frozenset[int], ...], newer_ok: bool, both_ok: bool) -> None:
    f = AnchorFacts(("old.md", "new.md"), (False, True), (0, 0), (), hits, None)
    assert recency_pass(f, "cite_newer") is newer_ok
    assert recency_pass(f, "cite_both") is both_ok
    assert recency_pass(f, "acknowledge_both") is both_ok


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("a/b.md", "markdown"),
        ("a/b.MDX", "markdown"),
        ("x.pdf", "pdf"),
        ("lib/x.tsx", "code"),
        ("a.b/README", "other"),  # a dot in a folder is no extension
        (".md", "other"),  # a hidden file, not a markdown file
        ("notes.", "other"),
        ("archive.tar.gz", "other"),
    ],
)
def test_document_type_from_the_extension(path: str, kind: str) -> None:
    assert doc_type(path) == kind


def test_coverage_by_document_type_counts_each_type_of_a_sample_once() -> None:
    def sample(i: str, answerable: bool = True) -> Sample:
        return Sample.model_validate({"id": i, "gold_supports": [A], "answerable": answerable})

    batch = RagBatch(
        samples=[sample("s1"), sample("s2"), sample("s3", answerable=False), sample("s4")],
        outputs=[None, None, None, None],
        facts=[
            AnchorFacts(("a.md", "b.md", "c.pdf"), (False,) * 3, (0, 2, 1), (), None, None),
            AnchorFacts(("d.md",), (False,), (5,), (), None, None),
            AnchorFacts(("e.md",), (False,), (1,), (), None, None),
            None,
        ],
    )
    import numpy as np

    assert doc_type_coverage(batch, np.array([2, 4, 9, 9])) == {"markdown": (1.0, 2), "pdf": (1.0, 1)}
    assert doc_type_coverage(batch, np.array([1, 5, 9, 9])) == {"markdown": (1.0, 2), "pdf": (1.0, 1)}
    assert doc_type_coverage(batch, np.array([1, 4, 9, 9])) == {"markdown": (0.0, 2), "pdf": (1.0, 1)}
    assert doc_type_coverage(batch, None) == {"markdown": (2.0, 2), "pdf": (1.0, 1)}
