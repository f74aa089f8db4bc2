"""Content keys: an exact hash of conservatively normalised title and snippet text.

Normalisation removes what search engines vary between copies of one page and
keeps what changes its meaning: HTML tags removed, entities unescaped, Unicode
NFKC, case-folded, curly quotes and dashes made ASCII, punctuation stripped only
at the edges of words (``3.11``, ``C#``, ``C++`` and ``10%`` stay distinct),
whitespace collapsed. Hashes are ``blake2b`` (16 bytes), stable across processes.

>>> normalise_text("<b>Python&nbsp;3.11</b> — What’s NEW?")
"python 3.11 what's new"
>>> normalise_text("C# tutorial") == normalise_text("C++ tutorial")
False
>>> content_key("Title", "A <em>snippet</em>.") == content_key("title", "a snippet")
True
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata

_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]*>", re.DOTALL)
_UNIFIED = {  # curly quotes, dashes and the ellipsis, as ASCII
    "\u2018": "'",
    "\u2019": "'",
    "\u201a": "'",
    "\u201b": "'",
    "\u2032": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u201e": '"',
    "\u201f": '"',
    "\u2033": '"',
    "\u00ab": '"',
    "\u00bb": '"',
    "\u2010": "-",
    "\u2011": "-",
    "\u2012": "-",
    "\u2013": "-",
    "\u2014": "-",
    "\u2015": "-",
    "\u2212": "-",
    "\u2026": "...",
}
_UNIFY = re.compile("[" + re.escape("".join(_UNIFIED)) + "]")
_KEPT_PUNCTUATION = frozenset("#%&@")
EDGE_PUNCTUATION = "".join(
    ch
    for ch in map(chr, range(0x10000))
    if unicodedata.category(ch).startswith("P") and ch not in _KEPT_PUNCTUATION
)
"""Characters stripped from the edges of each word: punctuation of the Basic Multilingual Plane
(Unicode categories P*) except ``# % & @``."""

_ASCII_EDGE_PUNCTUATION = "".join(ch for ch in EDGE_PUNCTUATION if ch.isascii())

FIELD_SEPARATOR = "\x1f"
"""Separates the normalised title from the normalised snippet inside a content key."""


def normalise_text(text: str) -> str:
    """Normalise title or snippet text for content keys (see the module docstring).

    >>> normalise_text("  The END…  ")
    'the end'
    >>> normalise_text("ＡＢＣ ﬁne (see: “quotes”)")
    'abc fine see quotes'
    """
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = html.unescape(text)
    if not text.isascii():
        text = nfkc_unified(text)
    text = text.casefold()
    if text.isascii():
        words = [word.strip(_ASCII_EDGE_PUNCTUATION) for word in text.split()]
    else:
        words = [
            word.strip(_ASCII_EDGE_PUNCTUATION if word.isascii() else EDGE_PUNCTUATION)
            for word in text.split()
        ]
    return " ".join(filter(None, words))


def nfkc_unified(text: str) -> str:
    """Unicode NFKC, then curly quotes, dashes and the ellipsis made ASCII: what :func:`normalise_text` does to non-ASCII text.

    >>> nfkc_unified("Ｗhat’s ﬁne — ok…")
    "What's fine - ok..."
    """
    return _UNIFY.sub(_unified_char, unicodedata.normalize("NFKC", text))


def nfkc_unified_all(texts: list[str]) -> list[str]:
    """:func:`nfkc_unified` of each text, done once over all of them joined by NUL.

    NUL is a starter that composes with nothing, so NFKC of the joined text is the NFKC of each
    text, joined; a listed character is replaced wherever it stands. Texts holding a NUL are done
    one by one.

    >>> nfkc_unified_all(["It’s", "ﬁne — ok…", "e\u0301"])
    ["It's", 'fine - ok...', 'é']
    """
    joined = "\x00".join(texts)
    if joined.count("\x00") != len(texts) - 1:
        return [nfkc_unified(t) for t in texts]
    joined = unicodedata.normalize("NFKC", joined)
    for char in set(_UNIFY.findall(joined)):
        joined = joined.replace(char, _UNIFIED[char])
    return joined.split("\x00") if texts else []


def _unified_char(match: re.Match[str]) -> str:
    """A regular expression rather than ``str.translate``: that looks up every character of the text."""
    return _UNIFIED[match.group()]


def digest(text: str) -> bytes:
    """The 16-byte blake2b digest of ``text`` (UTF-8).

    >>> digest("abc").hex()
    'cf4ab791c62b8d2b2109c90275287816'
    """
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def content_key(title: str | None, snippet: str | None) -> bytes:
    """The content key of a result: the digest of normalised title and snippet.

    >>> content_key(None, "x") == content_key("", "X!")
    True
    """
    return digest(normalise_text(title or "") + FIELD_SEPARATOR + normalise_text(snippet or ""))
