"""The pipeline's tokenizer: Unicode words, split on whitespace and punctuation; no model downloads.

A *token* is a maximal run of Unicode letters and digits after NFKC
normalisation and case-folding; everything else (whitespace, punctuation,
underscores, symbols) separates tokens. Token counts in the index statistics
and the chunk size limits use :func:`tokenize`. Retrieval and answer scoring
use :func:`terms`: the same tokens without a small list of English stopwords,
each reduced by Harman's "S" stemmer (plural endings only: ``policies`` →
``policy``, ``approvals`` → ``approval``; see :func:`s_stem`).

>>> tokenize("Run `apt install ragcli` — it's v2.3!")
['run', 'apt', 'install', 'ragcli', 'it', 's', 'v2', '3']
>>> terms("How do I install the CLIs on Linux?")
['install', 'cli', 'linux']
"""

from __future__ import annotations

import re
import unicodedata

TOKENIZER_NAME = "unicode-words-1+s-stem"

_WORD = re.compile(r"[^\W_]+")

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing done down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me might more most must my myself no nor not now of off on once only or other
    our ours ourselves out over own same shall she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up upon us very
    was we were what when where which while who whom whose why will with within without would you
    your yours yourself yourselves s t d ll m re ve don didn doesn isn aren wasn weren won
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


def tokenize(text: str) -> list[str]:
    """Split ``text`` into lower-case word tokens (NFKC, case-folded, split on non-alphanumerics).

    >>> tokenize("Setup > Install: ÉTÉ_2024")
    ['setup', 'install', 'été', '2024']
    >>> tokenize("  ... ")
    []
    """
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def s_stem(token: str) -> str:
    """Harman's "S" stemmer (1991): strip English plural endings, nothing else.

    ``-ies`` → ``-y`` (not after ``e``/``a``), ``-es`` → ``-e`` (not after ``a``/``e``/``o``),
    ``-s`` → removed (not after ``u``/``s``); tokens of three letters or fewer stay as they are.

    >>> [s_stem(t) for t in ["policies", "changes", "weeks", "status", "glass", "gas"]]
    ['policy', 'change', 'week', 'status', 'glass', 'gas']
    """
    if len(token) <= 3:
        return token
    if token.endswith("ies") and not token.endswith(("eies", "aies")):
        return token[:-3] + "y"
    if token.endswith("es") and not token.endswith(("aes", "ees", "oes")):
        return token[:-1]
    if token.endswith("s") and not token.endswith(("us", "ss")):
        return token[:-1]
    return token


def terms(text: str) -> list[str]:
    """The tokens of ``text`` that carry meaning: :func:`tokenize`, without :data:`STOPWORDS`, S-stemmed.

    >>> terms("What are the escalation timeouts?")
    ['escalation', 'timeout']
    """
    return [s_stem(token) for token in tokenize(text) if token not in STOPWORDS]


def count_tokens(text: str) -> int:
    """How many tokens :func:`tokenize` finds in ``text``.

    >>> count_tokens("one, two; three")
    3
    """
    return len(tokenize(text))
