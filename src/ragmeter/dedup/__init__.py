"""Deduplication of search results: URL keys, content keys, two-phase clustering.

>>> from ragmeter.dedup import KeyMaker, deduplicate
>>> m = KeyMaker()
>>> deduplicate([m.keys(url="https://a.org/p?utm_source=n"), m.keys(url="http://a.org/p")]).n_clusters
1
"""

from __future__ import annotations

from ragmeter.dedup.content_key import content_key, normalise_text
from ragmeter.dedup.keys import KeyMaker, ResultKeys
from ragmeter.dedup.policy import DedupPolicy
from ragmeter.dedup.two_phase import MATCH_KINDS, DedupOutcome, MatchKind, deduplicate, find_boilerplate
from ragmeter.dedup.url_key import url_key

__all__ = [
    "MATCH_KINDS",
    "DedupOutcome",
    "DedupPolicy",
    "KeyMaker",
    "MatchKind",
    "ResultKeys",
    "content_key",
    "deduplicate",
    "find_boilerplate",
    "normalise_text",
    "url_key",
]
