"""Deduplicated results of one trace: clusters, their names, and lookup by any result key.

A cluster's *key* names it in reports, labels files and labeller caches: the first
occurrence's domain id (``domain:…``), else generic id (``id:…``), else URL key
(``url:…``), else content hash (``content:…``). Any member's key finds its cluster.
"""

from __future__ import annotations

from functools import cached_property

from ragmeter.agentic.prepare import FlatResult, PreparedTrace
from ragmeter.dedup.domain_id import normalise_domain_id
from ragmeter.dedup.keys import KeyMaker, ResultKeys
from ragmeter.dedup.policy import DedupPolicy
from ragmeter.dedup.two_phase import DedupOutcome, deduplicate


class Clusters:
    """The dedup outcome of one trace with a name per cluster and a key → cluster index.

    The index over every member's keys is built on first use (labels, known good results).
    """

    def __init__(self, prepared: PreparedTrace, outcome: DedupOutcome) -> None:
        self.prepared = prepared
        self.outcome = outcome
        self.keys: tuple[str, ...] = tuple(
            result_key_names(prepared.results[i], prepared.keys[i])[0] for i in outcome.first
        )

    @property
    def n(self) -> int:
        """The number of clusters (unique results)."""
        return self.outcome.n_clusters

    @cached_property
    def index(self) -> dict[str, int]:
        """Every key of every member (``domain:…``, ``id:…``, ``url:…``, ``content:…``) → its cluster."""
        index: dict[str, int] = {}
        for result, keys, cluster in zip(
            self.prepared.results, self.prepared.keys, self.outcome.cluster, strict=True
        ):
            for name in result_key_names(result, keys):
                index.setdefault(name, cluster)
        return index


def result_key_names(result: FlatResult, keys: ResultKeys) -> list[str]:
    """Every key naming ``result``, strongest first (``domain:``, ``id:``, ``url:``, ``content:``)."""
    names = []
    if result.domain_id is not None:
        names.append("domain:" + result.domain_id)
    if result.id is not None:
        names.append("id:" + result.id)
    if keys.url_key is not None:
        names.append("url:" + keys.url_key)
    names.append("content:" + keys.content_key.hex())
    return names


def normalise_key_name(name: str, maker: KeyMaker) -> str | None:
    """A user-written key (``url:https://www.a.org/x/`` …) in the form the index uses; ``None`` if malformed.

    >>> normalise_key_name("url:https://www.a.org/x/", KeyMaker()), normalise_key_name("doc-1", KeyMaker())
    ('url:a.org/x', None)
    """
    kind, sep, value = name.partition(":")
    if not sep or not value.strip() or kind not in ("domain", "id", "url", "content"):
        return None
    if kind == "url":
        url = maker.url_key(value)
        return None if url is None else "url:" + url
    if kind == "domain":
        return "domain:" + normalise_domain_id(value)
    return f"{kind}:{value}"


def cluster_trace(
    prepared: PreparedTrace,
    *,
    policy: DedupPolicy | None = None,
    boilerplate: frozenset[bytes] | None = None,
) -> Clusters:
    """Deduplicate the results of ``prepared`` and index the clusters by every member key.

    >>> from ragmeter.agentic.trace import Trace
    >>> from ragmeter.agentic.prepare import prepare_trace
    >>> from ragmeter.dedup import KeyMaker
    >>> t = Trace.model_validate({"trace_id": "t", "turns": [{"iterations": [{"searches": [{"results": [
    ...     {"url": "https://www.a.org/x/"}, {"id": "7", "url": "http://a.org/x"}]}]}]}]})
    >>> c = cluster_trace(prepare_trace(t, where="-", keys=KeyMaker()))
    >>> c.keys, c.index["id:7"]
    (('url:a.org/x',), 0)
    """
    return Clusters(prepared, deduplicate(prepared.keys, policy=policy, boilerplate=boilerplate))
