from __future__ import annotations

import pytest

from ragmeter.pipeline.chunker import (
    SKIP_BELOW_MIN,
    SKIP_EXCEEDS_MAX,
    SKIP_SENTENCE_EXCEEDS_MAX,
    chunk_note,
    parse_sections,
)
from ragmeter.pipeline.tokenizer import count_tokens, s_stem, terms, tokenize


def test_pipeline_tokenizer_splits_on_whitespace_and_punctuation() -> None:
    assert tokenize("Setup>Install: `atlas-cli` v2.3, ÉTÉ_2024!") == [
        "setup",
        "install",
        "atlas",
        "cli",
        "v2",
        "3",
        "été",
        "2024",
    ]
    assert tokenize("ﬁle") == ["file"]  # NFKC
    assert count_tokens("") == 0


def test_pipeline_terms_drop_stopwords_and_plural_endings() -> None:
    assert terms("What are the policies for the on-call weeks?") == ["policy", "call", "week"]
    assert [s_stem(w) for w in ("status", "class", "bus", "ies", "series")] == [
        "status",
        "class",
        "bus",
        "ies",
        "sery",
    ]


NOTE = """---
title: front matter is not a heading
---
Intro before any heading.

# Setup

Top text.

## Install

### Linux

apt install tool

### macOS

brew install tool

## Installer

Click the installer.

```
# not a heading inside a fence
```

Notes
-----

Setext heading body.
"""


def test_pipeline_heading_paths_follow_the_heading_tree() -> None:
    sections = [(s.heading_path, s.body) for s in parse_sections(NOTE)]
    assert sections == [
        ((), "Intro before any heading."),
        (("Setup",), "Top text."),
        (("Setup", "Install"), ""),
        (("Setup", "Install", "Linux"), "apt install tool"),
        (("Setup", "Install", "macOS"), "brew install tool"),
        (("Setup", "Installer"), "Click the installer.\n\n```\n# not a heading inside a fence\n```"),
        (("Setup", "Notes"), "Setext heading body."),
    ]


def test_pipeline_chunks_skip_empty_sections_and_carry_ids() -> None:
    note = chunk_note("work/setup.md", NOTE, max_tokens=100)
    assert [c.id for c in note.chunks] == [
        "work/setup.md#",
        "work/setup.md#Setup",
        "work/setup.md#Setup > Install > Linux",
        "work/setup.md#Setup > Install > macOS",
        "work/setup.md#Setup > Installer",
        "work/setup.md#Setup > Notes",
    ]
    assert note.skipped == [] and note.attempted == 6
    assert all(c.n_tokens == count_tokens(c.text) for c in note.chunks)


def test_pipeline_repeated_heading_paths_get_a_counter() -> None:
    text = "# Log\n## Day\none\n## Day\ntwo\n# Log\n## Day\nthree\n"
    ids = [c.id for c in chunk_note("log.md", text, max_tokens=50).chunks]
    assert ids == ["log.md#Log > Day", "log.md#Log > Day [2]", "log.md#Log > Day [3]"]


def test_pipeline_closing_hashes_and_blank_headings() -> None:
    sections = parse_sections("## Title ##\nbody\n#\nunder blank\n####### seven\n")
    assert [(s.heading_path, s.body) for s in sections] == [
        (("Title",), "body"),
        ((), "under blank\n####### seven"),
    ]


def test_pipeline_note_without_headings_is_one_chunk_and_empty_note_none() -> None:
    plain = chunk_note("scratch.md", "Just some text.\n\nAnd more.", max_tokens=50)
    assert [(c.heading_path, c.text) for c in plain.chunks] == [((), "Just some text.\n\nAnd more.")]
    assert chunk_note("empty.md", "", max_tokens=50).attempted == 0
    assert chunk_note("only-headings.md", "# A\n## B\n", max_tokens=50).attempted == 0


def test_pipeline_oversize_sections_split_by_paragraph_then_sentence() -> None:
    para1 = "one two three four five."
    para2 = "six seven eight. nine ten eleven twelve thirteen. fourteen."
    text = f"# Big\n{para1}\n\n{para2}\n"
    note = chunk_note("big.md", text, max_tokens=6)
    assert [c.text for c in note.chunks] == [
        "one two three four five.",
        "six seven eight.",
        "nine ten eleven twelve thirteen. fourteen.",
    ]
    assert [c.id for c in note.chunks] == ["big.md#Big", "big.md#Big [2]", "big.md#Big [3]"]
    assert all(c.text in text for c in note.chunks)
    assert all(c.n_tokens <= 6 for c in note.chunks)


def test_pipeline_unsplittable_sentences_are_skipped_with_a_reason() -> None:
    text = "# Log\nshort line.\n" + " ".join(f"w{i}" for i in range(30)) + "\n"
    note = chunk_note("log.md", text, max_tokens=10)
    assert [c.text for c in note.chunks] == ["short line."]
    assert [(s.heading_path, s.reason, s.n_tokens) for s in note.skipped] == [
        (("Log",), SKIP_SENTENCE_EXCEEDS_MAX, 30)
    ]
    assert note.attempted == 2


def test_pipeline_oversize_skip_policy_and_min_tokens() -> None:
    text = "# A\none two three four\n# B\nfive\n"
    skipped = chunk_note("n.md", text, max_tokens=3, oversize="skip")
    assert [c.id for c in skipped.chunks] == ["n.md#B"]
    assert [s.reason for s in skipped.skipped] == [SKIP_EXCEEDS_MAX]
    small = chunk_note("n.md", text, max_tokens=10, min_tokens=2)
    assert [c.id for c in small.chunks] == ["n.md#A"]
    assert [s.reason for s in small.skipped] == [SKIP_BELOW_MIN]


@pytest.mark.parametrize("fence", ["```", "~~~~"])
def test_pipeline_fenced_code_stays_whole_when_splitting(fence: str) -> None:
    code = f"{fence}\nline one\n\nline two\n{fence}"
    text = f"# Code\nIntro words here.\n\n{code}\n\nOutro words here.\n"
    note = chunk_note("c.md", text, max_tokens=5)
    assert code in [c.text for c in note.chunks]
