"""The demo vault and its questions: every gold anchor and snippet is right, and the baseline is imperfect."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ragmeter.api import evaluate
from ragmeter.io.datasets import load_dataset
from ragmeter.matching.anchors import AnchorKey, split_heading
from ragmeter.metrics.containment import normalize_text
from ragmeter.pipeline import ReferencePipeline
from ragmeter.pipeline.chunker import chunk_note, parse_sections
from ragmeter.schema.rag import Anchor
from ragmeter.schema.samples import Sample

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
VAULT = EXAMPLES / "vault"
SAMPLES = load_dataset(EXAMPLES / "tests.yaml")


def _anchors(sample: Sample) -> list[Anchor]:
    out = list(sample.gold_supports or [])
    for group in sample.required_support_groups or []:
        out.extend(group)
    return out


def _heading_paths(rel_path: str) -> set[tuple[str, ...]]:
    """Every heading path of a note, and each of its prefixes."""
    paths: set[tuple[str, ...]] = {()}
    for section in parse_sections((VAULT / rel_path).read_text(encoding="utf-8")):
        for n in range(1, len(section.heading_path) + 1):
            paths.add(tuple(split_heading(list(section.heading_path[:n]))))
    return paths


def test_pipeline_examples_cover_every_category_and_rule() -> None:
    assert 28 <= len(SAMPLES) <= 40
    categories = Counter(s.category for s in SAMPLES)
    assert set(categories) == {
        "factual",
        "reasoning",
        "multi_hop",
        "recency/conflict",
        "general",
        "adversarial",
    }
    rules = {s.recency_conflict_rule for s in SAMPLES if s.recency_conflict_rule}
    assert rules == {"cite_newer", "cite_both", "acknowledge_both"}
    assert sum(not s.answerable for s in SAMPLES) >= 4
    assert all(s.required_support_groups for s in SAMPLES if s.category == "multi_hop")
    assert all(s.question() for s in SAMPLES)
    assert {s.difficulty for s in SAMPLES} == {"easy", "medium", "hard"}
    assert all(s.supports() for s in SAMPLES if s.answerable)
    assert not any(s.supports() for s in SAMPLES if not s.answerable)


@pytest.mark.parametrize("sample", SAMPLES, ids=[s.id for s in SAMPLES])
def test_pipeline_examples_gold_supports_exist_in_the_vault(sample: Sample) -> None:
    for anchor in _anchors(sample):
        path = VAULT / anchor.rel_path
        assert path.is_file(), f"{sample.id}: {anchor.rel_path} is not in the vault"
        wanted = split_heading(anchor.heading_path)
        assert wanted in _heading_paths(anchor.rel_path), (
            f"{sample.id}: no heading {wanted} in {anchor.rel_path}"
        )
        text = normalize_text(path.read_text(encoding="utf-8"))
        for snippet in anchor.snippets:
            assert normalize_text(snippet) in text, (
                f"{sample.id}: snippet {snippet!r} not in {anchor.rel_path}"
            )
        # ... and the chunker produces a chunk that the anchor (with its snippets) matches.
        key = AnchorKey.from_anchor(anchor)
        chunks = chunk_note(anchor.rel_path, path.read_text(encoding="utf-8"), max_tokens=200).chunks
        covering = [c for c in chunks if key.covers(c.rel_path, list(c.heading_path))]
        assert covering, f"{sample.id}: no chunk under {wanted} in {anchor.rel_path}"
        if key.snippets:
            assert any(any(s in normalize_text(c.text) for s in key.snippets) for c in covering), sample.id


def test_pipeline_examples_factual_answers_are_in_the_gold_notes() -> None:
    for sample in SAMPLES:
        if sample.category != "factual" or not sample.answerable:
            continue
        texts = " ".join(
            normalize_text((VAULT / a.rel_path).read_text(encoding="utf-8")) for a in _anchors(sample)
        )
        answers = sample.metadata.expected_answers()
        assert answers and any(normalize_text(a) in texts for a in answers), sample.id


def test_pipeline_examples_install_and_installer_are_different_anchors() -> None:
    key = AnchorKey.of("work/projects/atlas/setup.md", "Setup > Install")
    assert key.covers("work/projects/atlas/setup.md", ["Setup", "Install", "Linux"])
    assert not key.covers("work/projects/atlas/setup.md", ["Setup", "Installer"])


def test_pipeline_examples_baseline_scores_are_sensible_but_imperfect() -> None:
    pipeline = ReferencePipeline({"vault": VAULT, "folder_mode": "on"})
    outputs = {s.id: pipeline.answer(s.question() or "", k=5) for s in SAMPLES}
    metrics = [
        "hit@5",
        "mrr",
        "recall_all@5",
        "attribution_hit_rate",
        "recency_rule_pass",
        "abstention_accuracy",
        "scope_miss_rate",
    ]
    result = evaluate(SAMPLES, outputs, metrics=metrics)
    scores = result.aggregate
    assert 0.6 <= scores["hit@5"] < 1.0
    assert 0.5 <= scores["mrr"] < 1.0
    assert 0.5 <= scores["attribution_hit_rate"] < 1.0
    assert 0.0 < scores["recency_rule_pass"] < 1.0
    assert 0.0 < scores["abstention_accuracy"] < 1.0
    assert 0.0 < scores["scope_miss_rate"] < 0.5
    assert scores["recall_all@5"] > 0.5
