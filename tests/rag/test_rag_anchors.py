"""Anchor matching: rel_path and heading normalisation, component-wise prefix, snippets."""

from __future__ import annotations

from typing import Any

import pytest

from ragmeter import evaluate
from ragmeter.errors import MissingFieldError
from ragmeter.matching.anchors import AnchorKey, in_folder, normalize_rel_path, split_heading


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Setup > Install", ("Setup", "Install")),
        ("  Setup   >   Install  ", ("Setup", "Install")),  # extra spaces
        ("Setup>Install", ("Setup", "Install")),  # '>' without spaces
        ("Setup/Install", ("Setup", "Install")),  # '/' delimiter
        ("Setup / Install / Linux", ("Setup", "Install", "Linux")),
        ("Setup # Install", ("Setup", "Install")),  # '#' delimiter
        ("## Setup", ("Setup",)),  # markdown heading marks are not components
        ("Install   guide  >  Step\t1", ("Install guide", "Step 1")),  # inner whitespace collapsed
        (["Setup", " Install "], ("Setup", "Install")),  # list form
        (["Setup > Install"], ("Setup", "Install")),  # list items are split the same way
        ("", ()),
        (None, ()),
    ],
)
def test_split_heading(raw: Any, expected: tuple[str, ...]) -> None:
    assert split_heading(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("notes/setup.md", "notes/setup.md"),
        ("./notes/setup.md", "notes/setup.md"),
        ("notes//setup.md", "notes/setup.md"),
        ("notes\\sub\\setup.md", "notes/sub/setup.md"),
        (".\\notes\\\\setup.md", "notes/setup.md"),
        ("notes/./setup.md", "notes/setup.md"),
        (" notes/setup.md ", "notes/setup.md"),
    ],
)
def test_normalize_rel_path(raw: str, expected: str) -> None:
    assert normalize_rel_path(raw) == expected


GOLD = AnchorKey.of("notes/setup.md", "Setup > Install")


@pytest.mark.parametrize(
    ("rel_path", "heading", "matches"),
    [
        ("notes/setup.md", "Setup > Install", True),  # equal
        ("notes/setup.md", "Setup > Install > Linux", True),  # deeper chunk path
        ("notes/setup.md", "Setup>Install>Linux>Debian", True),
        ("notes/setup.md", "  Setup  /  Install ", True),
        ("notes/setup.md", ["Setup", "Install", "Linux"], True),
        ("./notes//setup.md", "Setup > Install", True),  # path normalisation
        ("notes\\setup.md", "Setup # Install", True),
        ("notes/setup.md", "Setup > Installer", False),  # sibling starting with the gold name
        ("notes/setup.md", "Setup > Installer > Linux", False),
        ("notes/setup.md", "Setup", False),  # shallower than the gold path
        ("notes/setup.md", "Setup > install", False),  # case matters
        ("notes/setup.md", "Intro > Setup > Install", False),  # prefix, not substring
        ("notes/setup2.md", "Setup > Install", False),
        ("other/notes/setup.md", "Setup > Install", False),
        (None, "Setup > Install", False),
    ],
)
def test_component_wise_prefix(rel_path: str | None, heading: Any, matches: bool) -> None:
    assert GOLD.covers(rel_path, heading) is matches


def test_gold_without_heading_matches_the_whole_file() -> None:
    whole = AnchorKey.of("a.md", None)
    assert whole.covers("a.md", "Anything > Here") and whole.covers("a.md", None)
    assert not whole.covers("b.md", None)


@pytest.mark.parametrize(
    ("rel_path", "folder", "inside"),
    [
        ("work/projects/a.md", "work", True),
        ("work/projects/a.md", "work/projects/", True),
        ("work/projects/a.md", "./work//projects", True),
        ("work2/a.md", "work", False),  # folder names compare component-wise
        ("work/a.md", "work/projects", False),
        ("a.md", "", True),
        ("a.md", "/", True),
    ],
)
def test_in_folder(rel_path: str, folder: str, inside: bool) -> None:
    assert in_folder(rel_path, folder) is inside


def _rank_of_first_match(chunks: list[dict[str, Any]], gold: dict[str, Any], **kwargs: Any) -> float | None:
    result = evaluate(
        [{"id": "q", "gold_supports": [gold]}], {"q": {"retrieved": chunks}}, metrics=["mrr"], **kwargs
    )
    return result.aggregate["mrr"]


def test_heading_normalisation_end_to_end() -> None:
    gold = {"rel_path": "notes/setup.md", "heading_path": "Setup > Install"}
    chunks = [
        {"rel_path": "notes/setup.md", "heading_path": "Setup > Installer", "text": "x"},
        {"rel_path": "notes/setup.md", "heading_path": "Setup > Installer > Linux", "text": "x"},
        {"rel_path": ".\\notes\\setup.md", "heading_path": " Setup/Install / Linux ", "text": "x"},
    ]
    assert _rank_of_first_match(chunks, gold) == pytest.approx(1 / 3)


SNIPPET_GOLD = {"rel_path": "a.md", "heading_path": "Sleep", "snippets": ["8 hours", "eight hours"]}


def test_snippet_required_by_default() -> None:
    chunks = [
        {"rel_path": "a.md", "heading_path": "Sleep > Naps", "text": "Naps are short."},
        {"rel_path": "a.md", "heading_path": "Sleep", "text": "I aim for  8\nHOURS."},  # NFKC, case, spaces
    ]
    assert _rank_of_first_match(chunks, SNIPPET_GOLD) == 0.5


def test_snippet_matching_off_matches_on_anchors_only() -> None:
    chunks = [
        {"rel_path": "a.md", "heading_path": "Sleep > Naps", "text": "Naps are short."},
        {"rel_path": "a.md", "heading_path": "Sleep", "text": "I aim for 8 hours."},
    ]
    assert _rank_of_first_match(chunks, SNIPPET_GOLD, snippet_matching=False) == 1.0
    config = {"metrics": {"rag": {"snippet_matching": False}}}
    from ragmeter.config import RagmeterConfig

    assert _rank_of_first_match(chunks, SNIPPET_GOLD, config=RagmeterConfig.model_validate(config)) == 1.0


def test_snippet_needs_chunk_text() -> None:
    chunks = [{"rel_path": "a.md", "heading_path": "Sleep"}]
    with pytest.raises(MissingFieldError, match=r"sample 'q': retrieved item at rank 1 has no 'text'"):
        _rank_of_first_match(chunks, SNIPPET_GOLD)
    # without snippet matching the text is not needed
    assert _rank_of_first_match(chunks, SNIPPET_GOLD, snippet_matching=False) == 1.0


def test_chunk_without_rel_path_is_an_error_for_anchor_samples() -> None:
    with pytest.raises(MissingFieldError, match=r"rank 2 has no 'rel_path', needed to match gold_supports"):
        _rank_of_first_match(
            [{"rel_path": "a.md", "heading_path": "X"}, {"id": "c-1"}],
            {"rel_path": "a.md", "heading_path": "Y"},
        )


def test_repeated_chunk_id_counts_once() -> None:
    chunk = {"id": "c-1", "rel_path": "a.md", "heading_path": "Y"}
    result = evaluate(
        [{"id": "q", "gold_supports": [{"rel_path": "a.md", "heading_path": "Y"}]}],
        {"q": {"retrieved": [chunk, chunk]}},
        metrics=["precision@2"],
    )
    assert result.aggregate["precision@2"] == 0.5
    assert any("repeated at rank 2" in w for w in result.warnings)


def test_rank_fields_out_of_list_order_are_reported() -> None:
    result = evaluate(
        [{"id": "q", "gold_supports": [{"rel_path": "a.md"}]}],
        {"q": {"retrieved": [{"rel_path": "b.md", "rank": 2}, {"rel_path": "a.md", "rank": 1}]}},
        metrics=["mrr"],
    )
    assert result.aggregate["mrr"] == 0.5  # list order is rank order (ruling)
    assert any("list order is used as rank order" in w for w in result.warnings)
