"""Two-phase deduplication of an ordered sequence of search results.

Phase 1 proposes a candidate cluster by O(1) dictionary lookups, strongest key
first: domain-specific id, generic id (only for results without a domain id),
URL key, then content (exact content key, or the title + snippet-prefix key for
truncated snippets). Phase 2 verifies the candidate field by field:

* two present ids of the same kind that differ reject any candidate;
* an id or URL match is decisive: a different title or snippet never undoes it
  (search snippets are query-biased);
* a content candidate needs confirming evidence: equal normalised snippets (the exact
  key) or one snippet a prefix of the other of at least ``prefix_chars`` characters,
  and its key must not be boilerplate (seen under many distinct URL keys in the run).

A rejected candidate falls through to the next key; with none left the result
starts a new cluster. Every duplicate records the :class:`MatchKind` that matched.

>>> from ragmeter.dedup.keys import KeyMaker
>>> m = KeyMaker()
>>> rs = [m.keys(url="https://a.com/x", snippet="one"), m.keys(url="http://www.a.com/x/", snippet="two"),
...       m.keys(url="https://a.com/y")]
>>> out = deduplicate(rs)
>>> out.cluster, [k and k.value for k in out.match]
((0, 0, 1), [None, 'url', None])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from ragmeter.dedup.keys import ResultKeys
from ragmeter.dedup.policy import DedupPolicy


class MatchKind(StrEnum):
    """The key by which a duplicate was recognised."""

    DOMAIN_ID = "domain_id"
    GENERIC_ID = "generic_id"
    URL = "url"
    CONTENT = "content"


MATCH_KINDS: tuple[MatchKind, ...] = tuple(MatchKind)
"""Every match kind, strongest first (the order of the redundancy breakdown)."""

DOMAIN_ID, GENERIC_ID, URL, CONTENT = MATCH_KINDS


def find_boilerplate(keys: Iterable[ResultKeys], *, min_urls: int = 3) -> frozenset[bytes]:
    """Content (and prefix) keys seen under at least ``min_urls`` distinct URL keys.

    >>> from ragmeter.dedup.keys import KeyMaker
    >>> m = KeyMaker()
    >>> banner = "We use cookies to improve your experience on this website. Accept all cookies"
    >>> ks = [m.keys(url=f"https://site{i}.com/", title="Notice", snippet=banner) for i in range(3)]
    >>> len(find_boilerplate(ks, min_urls=3)), len(find_boilerplate(ks, min_urls=4))
    (2, 0)
    """
    pairs = [
        (content, k.url_key)
        for k in keys
        if k.content_candidate and k.url_key is not None
        for content in (k.content_key, k.prefix_key)
        if content is not None
    ]
    often = {content for content, n in Counter(c for c, _ in pairs).items() if n >= min_urls}
    urls: dict[bytes, set[str]] = {}
    for content, url in pairs:
        if content in often:
            urls.setdefault(content, set()).add(url)
    return frozenset(content for content, seen in urls.items() if len(seen) >= min_urls)


@dataclass(frozen=True)
class DedupOutcome:
    """Which cluster each result belongs to, how duplicates matched, and the key maps.

    Clusters are numbered in order of first occurrence. ``first[c]`` is the index of
    cluster ``c``'s first result; ``match[i]`` is ``None`` for a first occurrence.
    The maps (``by_domain_id`` …) send each registered key to its cluster.
    """

    cluster: tuple[int, ...]
    match: tuple[MatchKind | None, ...]
    first: tuple[int, ...]
    by_domain_id: dict[str, int]
    by_generic_id: dict[str, int]
    by_url: dict[str, int]
    by_content: dict[bytes, int]

    @property
    def n_clusters(self) -> int:
        """The number of unique results."""
        return len(self.first)

    def duplicates_by_kind(self) -> dict[str, int]:
        """How many duplicates each kind of key caught (every kind listed).

        >>> from ragmeter.dedup.keys import KeyMaker
        >>> m = KeyMaker()
        >>> deduplicate([m.keys(generic_id="a"), m.keys(generic_id="a")]).duplicates_by_kind()
        {'domain_id': 0, 'generic_id': 1, 'url': 0, 'content': 0}
        """
        counts = dict.fromkeys(MATCH_KINDS, 0)
        for kind in self.match:
            if kind is not None:
                counts[kind] += 1
        return {str(kind): n for kind, n in counts.items()}


def _compatible(domain: str | None, generic: str | None, c_domain: str | None, c_generic: str | None) -> bool:
    """Phase 2's veto: two present ids of the same kind that differ."""
    if domain is not None and c_domain is not None and domain != c_domain:
        return False
    return generic is None or c_generic is None or generic == c_generic


def deduplicate(
    keys: Sequence[ResultKeys],
    *,
    policy: DedupPolicy | None = None,
    boilerplate: frozenset[bytes] | None = None,
) -> DedupOutcome:
    """Cluster ``keys`` (in order: the first occurrence founds a cluster).

    ``boilerplate`` is the run-wide set from :func:`find_boilerplate`; when ``None``
    it is computed from ``keys`` alone.

    >>> from ragmeter.dedup.keys import KeyMaker
    >>> m = KeyMaker()
    >>> a = m.keys(domain_id="doi:1", url="https://x.org/p")
    >>> b = m.keys(domain_id="doi:2", url="https://x.org/p")
    >>> deduplicate([a, b]).cluster
    (0, 1)
    """
    policy = policy or DedupPolicy()
    if boilerplate is None:
        boilerplate = find_boilerplate(keys, min_urls=policy.boilerplate_urls)
    by_domain: dict[str, int] = {}
    by_generic: dict[str, int] = {}
    by_url: dict[str, int] = {}
    by_content: dict[bytes, int] = {}
    by_prefix: dict[bytes, tuple[int, str]] = {}
    domains: list[str | None] = []
    generics: list[str | None] = []
    cluster: list[int] = []
    match: list[MatchKind | None] = []
    first: list[int] = []
    min_prefix = policy.prefix_chars

    for index, (domain, generic, url, content, prefix, snippet, candidate) in enumerate(keys):
        found: int | None = None
        kind: MatchKind | None = None
        if domain is not None:
            found = by_domain.get(domain)
            kind = DOMAIN_ID
        elif generic is not None:
            c = by_generic.get(generic)
            if c is not None and _compatible(None, generic, domains[c], generics[c]):
                found, kind = c, GENERIC_ID
        if found is None and url is not None:
            c = by_url.get(url)
            if c is not None and _compatible(domain, generic, domains[c], generics[c]):
                found, kind = c, URL
        if found is None and candidate:
            c = by_content.get(content) if content not in boilerplate else None
            if c is not None and _compatible(domain, generic, domains[c], generics[c]):
                found, kind = c, CONTENT
            elif prefix is not None and prefix not in boilerplate and prefix in by_prefix:
                c, other = by_prefix[prefix]
                shorter, longer = (snippet, other) if len(snippet) <= len(other) else (other, snippet)
                if (
                    len(shorter) >= min_prefix
                    and longer.startswith(shorter)
                    and _compatible(domain, generic, domains[c], generics[c])
                ):
                    found, kind = c, CONTENT

        if found is None:
            found, kind = len(first), None
            first.append(index)
            domains.append(domain)
            generics.append(generic)
        else:
            if domains[found] is None:
                domains[found] = domain
            if generics[found] is None:
                generics[found] = generic
        cluster.append(found)
        match.append(kind)

        if domain is not None and domain not in by_domain:
            by_domain[domain] = found
        if generic is not None and generic not in by_generic:
            by_generic[generic] = found
        if url is not None and url not in by_url:
            by_url[url] = found
        if content not in by_content:
            by_content[content] = found
        if prefix is not None and prefix not in by_prefix:
            by_prefix[prefix] = (found, snippet)

    return DedupOutcome(
        cluster=tuple(cluster),
        match=tuple(match),
        first=tuple(first),
        by_domain_id=by_domain,
        by_generic_id=by_generic,
        by_url=by_url,
        by_content=by_content,
    )
