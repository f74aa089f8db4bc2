"""Heading-aware markdown chunker: one chunk per section, oversize sections split or skipped.

A note is cut at its headings (ATX ``#`` … ``######`` and setext ``===``/``---``
underlines; headings inside fenced code blocks and a leading YAML front matter
block are ignored). Each section's *heading path* lists the heading texts from
the note's top heading down to the section's own heading; text before the first
heading has the empty path. A section whose body has no tokens (a heading
directly followed by a sub-heading) yields no chunk.

A body with more than ``max_tokens`` tokens is, with ``oversize="split"``,
packed greedily into pieces of whole paragraphs (blank-line separated, fenced
code kept whole); a paragraph that alone is too long is packed by sentences
(split after ``.``, ``!`` or ``?`` and at line breaks); a sentence that alone is
too long is skipped (reason ``sentence_exceeds_max_tokens``). With
``oversize="skip"`` the whole section is skipped (``exceeds_max_tokens``).
Pieces below ``min_tokens`` are skipped (``below_min_tokens``). Every piece is
an exact substring of the note.

>>> note = chunk_note("a.md", "# Setup\\n## Install\\nRun it.\\n## Installer\\nClick it.\\n", max_tokens=50)
>>> [(c.id, c.heading_path, c.text) for c in note.chunks]
[('a.md#Setup > Install', ('Setup', 'Install'), 'Run it.'), ('a.md#Setup > Installer', ('Setup', 'Installer'), 'Click it.')]
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from ragmeter.pipeline.tokenizer import count_tokens

CHUNKER_VERSION = "ragmeter-md-heading-1"

OversizePolicy = Literal["split", "skip"]

SKIP_EXCEEDS_MAX = "exceeds_max_tokens"
SKIP_SENTENCE_EXCEEDS_MAX = "sentence_exceeds_max_tokens"
SKIP_BELOW_MIN = "below_min_tokens"

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NOT_SETEXT_TEXT = re.compile(r"^ {0,3}(?:[-*+>]|\d+[.)]|`{3}|~{3})(?:\s|$)")
_SPACES = re.compile(r"\s+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[ \t]+|\n")


@dataclass(frozen=True)
class Chunk:
    """One indexed unit: a note section (or a piece of one) with its anchor and token count."""

    id: str
    rel_path: str
    heading_path: tuple[str, ...]
    text: str
    n_tokens: int


@dataclass(frozen=True)
class SkippedChunk:
    """A chunk the chunker produced but did not keep, and why."""

    rel_path: str
    heading_path: tuple[str, ...]
    reason: str
    n_tokens: int


@dataclass
class ChunkedNote:
    """What one note produced: kept chunks and skipped ones (``attempted`` counts both)."""

    rel_path: str
    chunks: list[Chunk] = field(default_factory=list)
    skipped: list[SkippedChunk] = field(default_factory=list)

    @property
    def attempted(self) -> int:
        """Chunks produced, kept or skipped."""
        return len(self.chunks) + len(self.skipped)


@dataclass(frozen=True)
class Section:
    """The text between one heading and the next, with the heading path above it."""

    heading_path: tuple[str, ...]
    body: str


def _closes(fence: str, match: re.Match[str] | None) -> bool:
    """Whether a fence line ``match`` closes the code block opened by ``fence`` (same char, as long)."""
    return match is not None and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence)


def _heading_text(raw: str) -> str:
    text = _ATX_CLOSING.sub("", raw.strip())
    return _SPACES.sub(" ", text).strip()


def _front_matter_end(lines: list[str]) -> int:
    """Index of the first line after a leading ``---`` front matter block (0 when there is none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return i + 1
    return 0


def parse_sections(text: str) -> list[Section]:
    """Cut a markdown note into sections at its headings (bodies trimmed; empty bodies kept).

    >>> [(s.heading_path, s.body) for s in parse_sections("intro\\n# A\\ntext\\n## B ##\\nmore\\n# C\\n")]
    [((), 'intro'), (('A',), 'text'), (('A', 'B'), 'more'), (('C',), '')]
    >>> [s.heading_path for s in parse_sections("```\\n# not a heading\\n```\\nTitle\\n=====\\nbody")]
    [(), ('Title',)]
    """
    lines = text.splitlines()
    start = _front_matter_end(lines)
    stack: list[tuple[int, str]] = []
    sections: list[Section] = []
    current_path: tuple[str, ...] = ()
    body: list[str] = []
    fence: str | None = None

    def close() -> None:
        sections.append(Section(current_path, "\n".join(body).strip()))

    def open_heading(level: int, heading: str) -> None:
        nonlocal current_path, body
        close()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        current_path = tuple(h for _, h in stack if h)
        body = []

    in_paragraph = False  # the previous line continues a paragraph (so it cannot start a setext heading)
    i = start
    while i < len(lines):
        line = lines[i]
        fence_match = _FENCE.match(line)
        if fence is not None:
            if _closes(fence, fence_match):
                fence = None
            body.append(line)
            in_paragraph = False
        elif fence_match:
            fence = fence_match.group(1)
            body.append(line)
        elif atx := _ATX.match(line):
            open_heading(len(atx.group(1)), _heading_text(atx.group(2) or ""))
            in_paragraph = False
        elif (
            i + 1 < len(lines)
            and line.strip()
            and not in_paragraph
            and not _NOT_SETEXT_TEXT.match(line)
            and (setext := _SETEXT.match(lines[i + 1]))
        ):
            open_heading(1 if setext.group(1)[0] == "=" else 2, _heading_text(line))
            in_paragraph = False
            i += 1
        else:
            body.append(line)
            in_paragraph = bool(line.strip())
        i += 1
    close()
    if sections and not sections[0].heading_path and not sections[0].body:
        sections = sections[1:]
    return sections


def _paragraph_spans(body: str) -> list[tuple[int, int]]:
    """Spans of blank-line separated paragraphs; fenced code blocks stay whole."""
    spans: list[tuple[int, int]] = []
    start: int | None = None
    last_end = 0
    fence: str | None = None
    pos = 0
    for line in body.splitlines(keepends=True):
        content = line.rstrip("\r\n")
        end = pos + len(content)
        fence_match = _FENCE.match(content)
        if fence is not None:
            if _closes(fence, fence_match):
                fence = None
        elif fence_match:
            fence = fence_match.group(1)
        if not content.strip() and fence is None:
            if start is not None:
                spans.append((start, last_end))
                start = None
        else:
            if start is None:
                start = pos
            last_end = end
        pos += len(line)
    if start is not None:
        spans.append((start, last_end))
    return spans


def _sentence_spans(body: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans of the sentences (and lines) of ``body[start:end]``."""
    spans: list[tuple[int, int]] = []
    pos = start
    for match in _SENTENCE_BREAK.finditer(body, start, end):
        if body[pos : match.start()].strip():
            spans.append((pos, match.start()))
        pos = match.end()
    if body[pos:end].strip():
        spans.append((pos, end))
    return spans


def _pack(body: str, spans: list[tuple[int, int]], max_tokens: int) -> Iterator[tuple[int, int, int]]:
    """Greedily join adjacent spans while the joined text stays within ``max_tokens``."""
    current: tuple[int, int] | None = None
    for start, end in spans:
        if current is None:
            current = (start, end)
            continue
        joined = count_tokens(body[current[0] : end])
        if joined <= max_tokens:
            current = (current[0], end)
        else:
            yield current[0], current[1], count_tokens(body[current[0] : current[1]])
            current = (start, end)
    if current is not None:
        yield current[0], current[1], count_tokens(body[current[0] : current[1]])


def _split_body(body: str, max_tokens: int) -> Iterator[tuple[str, int]]:
    """Pieces of an oversize body: whole paragraphs, else sentences; each (text, tokens).

    A sentence longer than ``max_tokens`` is yielded as is; the caller skips it.
    """
    units: list[tuple[int, int]] = []
    for start, end in _paragraph_spans(body):
        if count_tokens(body[start:end]) <= max_tokens:
            units.append((start, end))
            continue
        units.extend(_sentence_spans(body, start, end))
    for start, end, n_tokens in _pack(body, units, max_tokens):
        yield body[start:end].strip(), n_tokens


def _section_pieces(
    section: Section, *, max_tokens: int, oversize: OversizePolicy
) -> Iterator[tuple[str, int, str | None]]:
    """(text, tokens, skip reason or None) for each piece of one section."""
    n_tokens = count_tokens(section.body)
    if n_tokens == 0:
        return
    if n_tokens <= max_tokens:
        yield section.body, n_tokens, None
    elif oversize == "skip":
        yield section.body, n_tokens, SKIP_EXCEEDS_MAX
    else:
        for text, tokens in _split_body(section.body, max_tokens):
            yield text, tokens, SKIP_SENTENCE_EXCEEDS_MAX if tokens > max_tokens else None


def chunk_note(
    rel_path: str,
    text: str,
    *,
    max_tokens: int,
    min_tokens: int = 1,
    oversize: OversizePolicy = "split",
) -> ChunkedNote:
    """Chunk one note; chunk ids are ``rel_path#A > B`` with `` [2]``, `` [3]`` … for repeats.

    >>> note = chunk_note("n.md", "# A\\nOne. Two three.\\n# A\\nFour five six seven.", max_tokens=2)
    >>> [(c.id, c.text) for c in note.chunks], [(s.heading_path, s.reason) for s in note.skipped]
    ([('n.md#A', 'One.'), ('n.md#A [2]', 'Two three.')], [(('A',), 'sentence_exceeds_max_tokens')])
    """
    note = ChunkedNote(rel_path)
    seen: dict[str, int] = {}
    used: set[str] = set()
    for section in parse_sections(text):
        for piece, n_tokens, reason in _section_pieces(section, max_tokens=max_tokens, oversize=oversize):
            if reason is None and n_tokens < min_tokens:
                reason = SKIP_BELOW_MIN
            if reason is not None:
                note.skipped.append(SkippedChunk(rel_path, section.heading_path, reason, n_tokens))
                continue
            base = f"{rel_path}#{' > '.join(section.heading_path)}"
            chunk_id = base
            while chunk_id in used:
                seen[base] = seen.get(base, 1) + 1
                chunk_id = f"{base} [{seen[base]}]"
            used.add(chunk_id)
            note.chunks.append(Chunk(chunk_id, rel_path, section.heading_path, piece, n_tokens))
    return note
