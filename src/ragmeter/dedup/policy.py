"""The settings of two-phase deduplication, with a fingerprint for provenance.

>>> DedupPolicy().min_content_chars
40
>>> DedupPolicy(boilerplate_urls=5).fingerprint() != DedupPolicy().fingerprint()
True
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

from ragmeter.dedup.url_key import TRACKING_PARAM_NAMES, TRACKING_PARAM_PREFIXES


@dataclass(frozen=True)
class DedupPolicy:
    """How results are keyed and when content evidence may merge them.

    ``min_content_chars`` / ``min_content_words``: normalised title + snippet shorter than
    this never proposes a content candidate. ``prefix_chars``: a truncated snippet merges
    with a longer one only when it is a prefix of at least this many characters.
    ``boilerplate_urls``: a content key seen under this many distinct URL keys in one run
    is boilerplate (cookie banners, "Access denied") and proposes nothing.
    """

    min_content_chars: int = 40
    min_content_words: int = 6
    prefix_chars: int = 50
    boilerplate_urls: int = 3
    tracking_names: frozenset[str] = TRACKING_PARAM_NAMES
    tracking_prefixes: tuple[str, ...] = TRACKING_PARAM_PREFIXES

    def __post_init__(self) -> None:
        for name in ("min_content_chars", "min_content_words", "prefix_chars", "boilerplate_urls"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"DedupPolicy.{name} must be an int >= 1, got {value!r}")

    def as_dict(self) -> dict[str, object]:
        """The settings as plain JSON data (sets sorted)."""
        data = asdict(self)
        data["tracking_names"] = sorted(self.tracking_names)
        data["tracking_prefixes"] = list(self.tracking_prefixes)
        return data

    def fingerprint(self) -> str:
        """A short stable hash of the settings, reported beside every redundancy figure."""
        text = json.dumps(self.as_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]
