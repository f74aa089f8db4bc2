"""What anchor matching hands the kernels: gains per rank, ground truth and per-sample facts."""

from __future__ import annotations

from typing import Any

import pytest

from ragmeter.errors import MissingFieldError
from ragmeter.matching.anchors import AnchorKey, chunk_matches, match_anchors, merged_tables
from ragmeter.metrics.relevance import RelevanceTable
from ragmeter.schema.outputs import RetrievedItem, SystemOutput
from ragmeter.schema.samples import Sample


def sample(**fields: Any) -> Sample:
    return Sample.model_validate({"id": "s", **fields})


def output(**fields: Any) -> SystemOutput:
    return SystemOutput.model_validate(fields)


def chunk(rel_path: str | None, heading: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"rel_path": rel_path, "heading_path": heading, **fields}


A = {"rel_path": "a.md", "heading_path": "Setup"}
B = {"rel_path": "b.md"}


def test_gains_per_rank_count_a_support_once_and_a_chunk_whenever_it_matches() -> None:
    s = sample(gold_supports=[A, B])
    out = output(
        retrieved=[
            chunk("c.md"),
            chunk("a.md", "Setup > Linux"),  # A
            chunk("a.md", "Setup"),  # A again: a relevant chunk, but no new support
            chunk("b.md", "Anything"),  # B
        ]
    )
    m = match_anchors([s], {"s": out})
    assert m.support_gains == [[0.0, 1.0, 0.0, 1.0]]
    assert m.chunk_gains == [[0.0, 1.0, 1.0, 1.0]]
    assert m.truth == [[1.0, 1.0]]
    facts = m.facts[0]
    assert facts is not None
    assert facts.support_first_rank == (2, 4)
    assert facts.support_paths == ("a.md", "b.md")
    assert m.warnings == []


def test_a_chunk_matching_two_supports_covers_both() -> None:
    s = sample(gold_supports=[{"rel_path": "a.md"}, {"rel_path": "a.md", "heading_path": "X"}])
    m = match_anchors([s], {"s": output(retrieved=[chunk("a.md", "X > Y"), chunk("a.md", "X")])})
    assert m.support_gains == [[1.0, 0.0]]
    assert m.facts[0] is not None and m.facts[0].support_first_rank == (1, 1)


def test_a_repeated_chunk_id_scores_nothing_at_its_second_rank() -> None:
    s = sample(gold_supports=[A])
    repeated = chunk("a.md", "Setup", id="c1")
    m = match_anchors([s], {"s": output(retrieved=[chunk("z.md", id="c0"), repeated, repeated])})
    assert m.chunk_gains == [[0.0, 1.0, 0.0]]
    assert m.support_gains == [[0.0, 1.0, 0.0]]


def test_samples_without_anchors_get_empty_rows_and_no_facts() -> None:
    m = match_anchors([sample(expected_output=["d1"])], {"s": output(retrieved=[chunk("a.md")])})
    assert (m.support_gains, m.chunk_gains, m.truth, m.facts) == ([[]], [[]], [[]], [None])


def test_an_unanswerable_sample_has_no_relevant_items_but_keeps_its_facts() -> None:
    s = sample(gold_supports=[A], answerable=False)
    m = match_anchors([s], {"s": output(retrieved=[chunk("a.md", "Setup")])})
    assert m.truth == [[]]
    assert m.support_gains == [[1.0]]
    assert m.facts[0] is not None and m.facts[0].support_first_rank == (1,)


def test_a_missing_output_is_an_empty_ranking() -> None:
    m = match_anchors([sample(gold_supports=[A])], {})
    assert m.support_gains == [[]] and m.truth == [[1.0]]
    facts = m.facts[0]
    assert facts is not None
    assert (facts.support_first_rank, facts.reference_hits, facts.in_scope) == ((0,), (), None)


def test_required_groups_record_the_first_rank_any_of_their_anchors_matched() -> None:
    s = sample(required_support_groups=[[A, {"rel_path": "c.md"}], [B], [{"rel_path": "never.md"}]])
    m = match_anchors(
        [s], {"s": output(retrieved=[chunk("x.md"), chunk("c.md"), chunk("a.md", "Setup"), chunk("b.md")])}
    )
    facts = m.facts[0]
    assert facts is not None
    assert facts.group_first_rank == (2, 4, 0)
    assert facts.support_paths == ("a.md", "c.md", "b.md", "never.md")  # the groups' anchors, once each
    assert facts.support_first_rank == (3, 2, 4, 0)


def test_references_are_matched_without_snippets() -> None:
    s = sample(gold_supports=[{**A, "snippets": ["eight hours"]}, B])
    refs = [{"rel_path": "b.md"}, {"rel_path": "a.md", "heading_path": "Setup > More"}, {"rel_path": "z.md"}]
    m = match_anchors([s], {"s": output(retrieved=[], references=refs)})
    facts = m.facts[0]
    assert facts is not None
    assert facts.reference_hits == (frozenset({1}), frozenset({0}), frozenset())


@pytest.mark.parametrize(
    ("fields", "hits"),
    [
        ({}, None),  # the output has no references at all
        ({"error": "boom"}, ()),  # a failed call: nothing was cited
        ({"timed_out": True}, ()),
        ({"error": "  "}, None),  # a blank error is no failure
        ({"references": []}, ()),
    ],
)
def test_reference_hits_of_outputs_without_references(fields: dict[str, Any], hits: object) -> None:
    m = match_anchors([sample(gold_supports=[A])], {"s": output(**fields)})
    assert m.facts[0] is not None and m.facts[0].reference_hits == hits


@pytest.mark.parametrize(
    ("fields", "in_scope"),
    [
        ({}, None),
        ({"folder_mode": "off", "selected_folders": ["a.md"]}, None),
        ({"folder_mode": "on"}, None),  # on, but no selected_folders recorded
        ({"folder_mode": "on", "selected_folders": ["docs", "b.md"]}, True),
        ({"folder_mode": "on_with_fallback", "selected_folders": ["docs"]}, False),
        ({"folder_mode": "on", "selected_folders": []}, False),
        ({"folder_mode": "on", "selected_folders": ["."]}, True),
    ],
)
def test_folder_scope_of_the_gold_supports(fields: dict[str, Any], in_scope: bool | None) -> None:
    m = match_anchors([sample(gold_supports=[A, B])], {"s": output(**fields)})
    assert m.facts[0] is not None and m.facts[0].in_scope is in_scope


@pytest.mark.parametrize(
    ("ranks", "warned"),
    [([1, 2, 3], False), ([1, 3, 2], True), ([1, 1, 2], True), ([None, 2, 1], False), ([5, 9, 12], False)],
)
def test_rank_fields_that_do_not_increase_are_reported(ranks: list[int | None], warned: bool) -> None:
    items = [chunk("x.md", id=f"c{i}", rank=r) for i, r in enumerate(ranks)]
    m = match_anchors([sample(gold_supports=[A])], {"s": output(retrieved=items)})
    expected = [
        "sample 's': the 'rank' fields of the retrieved items are not increasing in list order; "
        "list order is used as rank order"
    ]
    assert m.warnings == (expected if warned else [])


def test_a_chunk_without_rel_path_is_an_error_only_when_relevance_comes_from_anchors() -> None:
    gold = [AnchorKey.of("a.md", "Setup")]
    item = RetrievedItem.model_validate({"id": "c"})
    assert chunk_matches("s", 1, item, gold, snippet_matching=True, required=False) == frozenset()
    with pytest.raises(MissingFieldError) as error:
        chunk_matches("s", 3, item, gold, snippet_matching=True)
    assert (
        str(error.value)
        == "sample 's': retrieved item at rank 3 has no 'rel_path', needed to match gold_supports"
    )


def test_snippets_decide_only_with_snippet_matching_on() -> None:
    gold = [AnchorKey.of("a.md", "Sleep", ["8 hours"]), AnchorKey.of("a.md", None)]
    item = RetrievedItem.model_validate({"rel_path": "a.md", "heading_path": "Sleep", "text": "nine hours"})
    assert chunk_matches("s", 1, item, gold, snippet_matching=True) == frozenset({1})
    assert chunk_matches("s", 1, item, gold, snippet_matching=False) == frozenset({0, 1})
    no_text = RetrievedItem.model_validate({"rel_path": "a.md", "heading_path": "Sleep"})
    with pytest.raises(MissingFieldError) as error:
        chunk_matches("s", 2, no_text, gold, snippet_matching=True)
    assert str(error.value) == (
        "sample 's': retrieved item at rank 2 has no 'text', needed to check the snippets of gold_supports "
        "(turn snippet matching off to match on anchors only)"
    )
    assert chunk_matches("s", 2, no_text, gold[1:], snippet_matching=True) == frozenset({0})


@pytest.mark.parametrize(
    ("path", "folder", "inside"),
    [
        ("Xdocs/a.md", "Xdocs", True),
        ("Xdocs/a.md", "docs", False),
        ("a.md", "/", True),
        ("a/b.md", "a/b.md", True),
    ],
)
def test_in_folder_compares_whole_components(path: str, folder: str, inside: bool) -> None:
    from ragmeter.matching.anchors import in_folder

    assert in_folder(path, folder) is inside


def test_anchor_keys_normalise_and_drop_empty_snippets() -> None:
    key = AnchorKey.of("./a.md", "Setup > Install", ["  Eight  HOURS ", "", "   "], newer=True)
    assert key == AnchorKey("a.md", ("Setup", "Install"), ("eight hours",), True)
    assert key.snippet_found("I sleep EIGHT hours.") and not key.snippet_found("eight  minutes")
    assert AnchorKey.of("a.md", None).snippet_found("anything")
    assert not key.covers(None, "Setup > Install")
    assert not key.covers("a.md", "Setup")
    assert key.covers("a.md", ["Setup", "Install", "Linux"])


def test_merged_tables_take_id_rows_or_anchor_rows_per_sample() -> None:
    samples = [
        sample(expected_output={"d1": 2.0, "d2": 1.0}),
        Sample.model_validate({"id": "t", "gold_supports": [A]}),
        Sample.model_validate({"id": "u", "expected_output": ["d1"], "answerable": False}),
    ]
    id_table = RelevanceTable.from_lists(["s", "t", "u"], [[2.0, 0.0], [], [1.0]], [[2.0, 1.0], [], [1.0]])
    anchors = match_anchors(
        samples, {"t": output(retrieved=[chunk("a.md", "Setup"), chunk("a.md", "Setup")])}
    )
    support, chunks = merged_tables(samples, id_table, anchors)
    assert chunks is not None
    assert support.query_ids == ["s", "t", "u"]
    assert support.gains.tolist() == [2.0, 0.0, 1.0, 0.0, 1.0]
    assert chunks.gains.tolist() == [2.0, 0.0, 1.0, 1.0, 1.0]
    assert support.ideal_gains.tolist() == [2.0, 1.0, 1.0]  # u is unanswerable: no ground truth
    assert support.offsets.tolist() == [0, 2, 4, 5] and support.ideal_offsets.tolist() == [0, 2, 3, 3]


def test_merged_tables_keep_an_id_only_table_as_it_is() -> None:
    samples = [sample(expected_output=["d1"])]
    id_table = RelevanceTable.from_lists(["s"], [[1.0]], [[1.0]])
    assert merged_tables(samples, id_table, match_anchors(samples, {})) == (id_table, None)
