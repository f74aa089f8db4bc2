"""Random titles and snippets for the batch normalisation tests: plain ASCII pieces and the others."""

from __future__ import annotations

from hypothesis import strategies as st

from ragmeter.dedup.content_key import EDGE_PUNCTUATION

ASCII_WHITESPACE = [chr(b) for b in range(128) if chr(b).isspace()]
ASCII_PUNCTUATION = [ch for ch in EDGE_PUNCTUATION if ch.isascii()]

PLAIN_PIECES = [
    *ASCII_WHITESPACE,
    *ASCII_PUNCTUATION,
    *"aZq09#%@$+=^|~`>\x01\x08\x0e\x1b\x7f",
    "word",
    "C++",
    "3.11",
    "e.g.",
    "...",
    "(see)",
    "  ",
]
"""Pieces of plain text (ASCII, no ``<``, ``&`` or NUL): every ASCII whitespace (``\\x1c-\\x1f`` too),
every edge punctuation, kept punctuation, symbols and control characters that are neither."""

OTHER_PIECES = [
    "\x00",
    "<",
    "&",
    "<b>",
    "</i>",
    "<!-- c -->",
    "&amp;",
    "&nbsp;",
    "&#39;",
    "é",
    "É",
    "…",
    "—",
    "“",
    "’",
    "ﬁ",
    "ß",
    "\u3000",
    "\u00a0",
    "。",
    "¡",
    "日本",
    "\U0001f600",
    "\ud800",
    "\uff1c",  # fullwidth <, > and &: NFKC makes them ASCII after the tags and entities were read
    "\uff1e",
    "\uff06",
    "\uff21",
    "\uff0e",
    "\u2024",
    "\u00bd",
    "\u2126",
    "\u00b2",
]
"""Pieces that make a text go the reference way: NUL, tags, entities, non-ASCII (its whitespace too, and
a lone surrogate, which JSON can spell)."""


def _texts(pieces: list[str], max_pieces: int) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(pieces), max_size=max_pieces).map("".join)


plain_texts = _texts(PLAIN_PIECES, 30)
any_texts = st.one_of(plain_texts, _texts(PLAIN_PIECES + OTHER_PIECES, 30))
chunk_sizes = st.one_of(st.integers(1, 64), st.just(1 << 20))
unifiable_texts = _texts(PLAIN_PIECES + [p for p in OTHER_PIECES if not {"\x00", "<", "&"} & set(p)], 30)
"""Texts with no NUL, ``<`` or ``&`` as written: a chunk of them is unified first (curly quotes,
fullwidth letters, and fullwidth ``<``/``&`` that NFKC makes ASCII), then goes the plain way."""
