"""The gain of each unique result (dedup cluster), from a labels file, the trace, or a labeller.

Precedence per cluster: a labels-file entry matching any member's key; else the gain
the trace carries on the first occurrence (else on the first member that carries
one: the label is about the document and the task, not the copy); else a
:class:`GainLabeller`, called once per (task, cluster) with a representative copy
(the member with the longest title + snippet); else *unscored*. Unscored is a
state with a reason, never 0. A later copy's different gain is never counted: the
gain is credited once, at the cluster's first occurrence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from ragmeter.agentic.clusters import Clusters
from ragmeter.agentic.labels import Label
from ragmeter.agentic.prepare import PreparedTrace
from ragmeter.errors import InputError, RagmeterError

GainSource = Literal["labels", "trace", "labeller", "none"]

NO_GAIN = "no gain in the trace or the labels file"
"""Why a cluster that no label, trace gain or labeller scored is unscored."""


@dataclass(frozen=True)
class Unscored:
    """A result that has no gain, and why (a judge reply that did not parse, no label, …)."""

    reason: str


@dataclass(frozen=True)
class UniqueResult:
    """What a labeller sees of one dedup cluster: its key, a representative copy and the queries."""

    key: str
    domain_id: str | None
    id: str | None
    url: str | None
    title: str | None
    snippet: str | None
    queries: tuple[str, ...]


class GainLabeller(Protocol):
    """Labels unique results with gains 0-4 against the user's task.

    ``label`` is called at most once per trace, with every cluster that still needs a
    gain (never a duplicate), and returns one gain or :class:`Unscored` per result,
    in order. Judge against ``task`` (the user's question), not the sub-query.
    """

    @property
    def name(self) -> str:
        """Identifies the labeller (model, prompt version) in provenance."""
        ...

    def label(self, task: str | None, results: Sequence[UniqueResult]) -> Sequence[float | Unscored]:
        """One gain (0-4) or :class:`Unscored` per result, in order."""
        ...


@dataclass(frozen=True)
class ClusterGain:
    """The gain of one cluster (``None`` = unscored), where it came from, and why it is missing."""

    gain: float | None
    source: GainSource
    reason: str | None = None


@dataclass
class TraceGains:
    """The gains of one trace's clusters, plus what did not fit."""

    gains: list[ClusterGain]
    unmatched_labels: list[Label] = field(default_factory=list)
    copies_with_other_gain: int = 0


LabellerMemo = dict[tuple[str | None, str], float | Unscored]
"""Labeller answers already obtained, keyed by (task, cluster key), shared across traces."""


def representative(prepared: PreparedTrace, clusters: Clusters, cluster: int) -> UniqueResult:
    """The most complete copy of ``cluster`` (longest title + snippet; the first on ties)."""
    members = [i for i, c in enumerate(clusters.outcome.cluster) if c == cluster]
    best = max(
        members,
        key=lambda i: (len(prepared.results[i].title or "") + len(prepared.results[i].snippet or ""), -i),
    )
    r = prepared.results[best]
    queries = tuple(dict.fromkeys(q for i in members if (q := prepared.results[i].query)))
    return UniqueResult(clusters.keys[cluster], r.domain_id, r.id, r.url, r.title, r.snippet, queries)


def _check_reply(value: object, labeller: GainLabeller) -> float | Unscored:
    if isinstance(value, Unscored):
        return value
    if (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 4
    ):
        return float(value)
    return Unscored(f"labeller {labeller.name!r} returned {value!r}, not a gain in [0, 4]")


def _from_labels(clusters: Clusters, labels: Sequence[Label], out: TraceGains) -> dict[int, Label]:
    chosen: dict[int, Label] = {}
    for label in labels:
        cluster = clusters.index.get(label.key)
        if cluster is None:
            out.unmatched_labels.append(label)
            continue
        earlier = chosen.get(cluster)
        if earlier is not None and earlier.gain != label.gain:
            raise InputError(
                f"{label.key} and {earlier.key} ({earlier.where}) are the same result of trace "
                f"{label.trace_id!r} but have different gains ({label.gain} and {earlier.gain})",
                where=label.where,
            )
        chosen.setdefault(cluster, label)
    return chosen


def resolve_gains(
    prepared: PreparedTrace,
    clusters: Clusters,
    *,
    labels: Sequence[Label] = (),
    labeller: GainLabeller | None = None,
    memo: LabellerMemo | None = None,
) -> TraceGains:
    """The gain of every cluster of ``prepared`` (see the module docstring for precedence).

    >>> class Fixed:
    ...     name = "fixed"
    ...     def label(self, task, results):
    ...         return [3.0 if "good" in (r.title or "") else Unscored("no reply") for r in results]
    >>> from ragmeter.agentic.trace import Trace
    >>> from ragmeter.agentic.prepare import prepare_trace
    >>> from ragmeter.agentic.clusters import cluster_trace
    >>> from ragmeter.dedup import KeyMaker
    >>> t = Trace.model_validate({"trace_id": "t", "turns": [{"iterations": [{"searches": [{"results": [
    ...     {"url": "https://a.org/1", "title": "good"}, {"url": "https://a.org/2", "title": "x"},
    ...     {"url": "https://a.org/1", "title": "good copy"}]}]}]}]})
    >>> p = prepare_trace(t, where="-", keys=KeyMaker())
    >>> [g.gain for g in resolve_gains(p, cluster_trace(p), labels=(), labeller=Fixed()).gains]
    [3.0, None]
    """
    out = TraceGains(gains=[ClusterGain(None, "none", NO_GAIN)] * clusters.n)
    from_labels = _from_labels(clusters, labels, out)
    for cluster, label in from_labels.items():
        reason = (
            None
            if label.gain is not None
            else (label.reason or f"unscored in the labels file ({label.where})")
        )
        out.gains[cluster] = ClusterGain(label.gain, "labels", reason)
    for position, cluster in enumerate(clusters.outcome.cluster):
        gain = prepared.results[position].gain
        if gain is None or cluster in from_labels:
            continue
        current = out.gains[cluster]
        if current.source == "none":
            out.gains[cluster] = ClusterGain(gain, "trace")
        elif current.gain != gain:
            out.copies_with_other_gain += 1
    pending = [c for c in range(clusters.n) if out.gains[c].source == "none"]
    if labeller is None or not pending:
        return out
    memo = {} if memo is None else memo
    asked = [c for c in pending if (prepared.task, clusters.keys[c]) not in memo]
    if asked:
        replies = list(labeller.label(prepared.task, [representative(prepared, clusters, c) for c in asked]))
        if len(replies) != len(asked):
            raise RagmeterError(
                f"labeller {labeller.name!r} returned {len(replies)} gains for {len(asked)} results",
                where=f"trace {prepared.trace_id!r}",
            )
        for cluster, reply in zip(asked, replies, strict=True):
            memo[(prepared.task, clusters.keys[cluster])] = _check_reply(reply, labeller)
    for cluster in pending:
        reply = memo[(prepared.task, clusters.keys[cluster])]
        if isinstance(reply, Unscored):
            out.gains[cluster] = ClusterGain(None, "labeller", reply.reason)
        else:
            out.gains[cluster] = ClusterGain(reply, "labeller")
    return out
