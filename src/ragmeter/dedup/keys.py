"""Phase-1 candidate keys of one search result, computed once and memoised per run.

>>> maker = KeyMaker()
>>> k = maker.keys(url="https://www.example.com/a/", title="A page", snippet="Some text")
>>> k.url_key, k.domain_id, k.content_candidate
('example.com/a', None, False)
>>> maker.keys(domain_id="doi:10.1/x", generic_id="g-1").generic_id is None
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ragmeter.dedup.content_key import FIELD_SEPARATOR, digest, normalise_text
from ragmeter.dedup.policy import DedupPolicy
from ragmeter.dedup.url_key import url_key


class ResultKeys(NamedTuple):
    """Everything phase 1 looks up and phase 2 checks for one result.

    ``generic_id`` is ``None`` whenever ``domain_id`` is set: the two are mutually
    exclusive and the domain-specific id wins. ``content_key`` is always set (it also
    names content-only results); it proposes candidates only when
    ``content_candidate`` is true. ``prefix_key`` covers the title and the first
    ``prefix_chars`` characters of the snippet, to find truncated copies. (A named
    tuple: a million of them are made per run, so they must be cheap.)
    """

    domain_id: str | None
    generic_id: str | None
    url_key: str | None
    content_key: bytes
    prefix_key: bytes | None
    snippet: str
    content_candidate: bool


def content_digest(norm_title: str, norm_snippet: str) -> bytes:
    """The content key of a normalised title and snippet.

    >>> content_digest("a", "b").hex()[:8]
    '065ab574'
    """
    return digest(norm_title + FIELD_SEPARATOR + norm_snippet)


def prefix_digest(norm_title: str, norm_snippet: str, prefix_chars: int) -> bytes:
    """The prefix key: the normalised title and the first ``prefix_chars`` characters of the snippet."""
    return digest("prefix" + FIELD_SEPARATOR + norm_title + FIELD_SEPARATOR + norm_snippet[:prefix_chars])


@dataclass(frozen=True, slots=True)
class _Content:
    key: bytes
    prefix_key: bytes | None
    snippet: str
    candidate: bool


class KeyMaker:
    """Computes :class:`ResultKeys`, memoising URL and content work across a run."""

    def __init__(self, policy: DedupPolicy | None = None) -> None:
        self.policy = policy or DedupPolicy()
        self._urls: dict[str, str | None] = {}
        self._texts: dict[str, str] = {}
        self._contents: dict[tuple[str, str], _Content] = {}

    def url_key(self, url: str | None) -> str | None:
        """The memoised URL key of ``url`` (``None`` for no URL)."""
        if url is None:
            return None
        if url in self._urls:
            return self._urls[url]
        key = url_key(
            url, tracking_names=self.policy.tracking_names, tracking_prefixes=self.policy.tracking_prefixes
        )
        self._urls[url] = key
        return key

    def _text(self, text: str) -> str:
        found = self._texts.get(text)
        if found is None:
            found = self._texts[text] = normalise_text(text)
        return found

    def _content(self, title: str, snippet: str) -> _Content:
        found = self._contents.get((title, snippet))
        if found is not None:
            return found
        policy = self.policy
        norm_title, norm_snippet = self._text(title), self._text(snippet)
        text = norm_title + FIELD_SEPARATOR + norm_snippet
        words = norm_title.count(" ") + norm_snippet.count(" ") + bool(norm_title) + bool(norm_snippet)
        candidate = bool(norm_snippet) and len(text) - 1 >= policy.min_content_chars
        candidate = candidate and words >= policy.min_content_words
        prefix = None
        if candidate and len(norm_snippet) >= policy.prefix_chars:
            prefix = prefix_digest(norm_title, norm_snippet, policy.prefix_chars)
        found = _Content(content_digest(norm_title, norm_snippet), prefix, norm_snippet, candidate)
        self._contents[(title, snippet)] = found
        return found

    def of(
        self,
        domain_id: str | None,
        generic_id: str | None,
        url: str | None,
        title: str | None,
        snippet: str | None,
    ) -> ResultKeys:
        """:meth:`keys` with positional arguments (the fast path for loaders)."""
        content = self._content(title or "", snippet or "")
        return ResultKeys(
            domain_id,
            None if domain_id is not None else generic_id,
            None if url is None else self._urls[url] if url in self._urls else self.url_key(url),
            content.key,
            content.prefix_key,
            content.snippet,
            content.candidate,
        )

    def keys(
        self,
        *,
        domain_id: str | None = None,
        generic_id: str | None = None,
        url: str | None = None,
        title: str | None = None,
        snippet: str | None = None,
    ) -> ResultKeys:
        """The keys of one result from its fields (``None`` or absent = not given)."""
        return self.of(domain_id, generic_id, url, title, snippet)
