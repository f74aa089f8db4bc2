"""From a validated trace to what scoring needs: the search iterations of the last turn.

Only the last turn counts. Iterations without a search are dropped *before*
numbering, so iteration ``i`` is the i-th iteration that invoked a search. Within an
iteration, results are taken search by search in issue order, each in rank order.
A search whose results were not captured makes the whole trace unscorable
("results not captured") — it is never read as zero results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

from ragmeter.agentic.trace import ResultRef, SearchResult, Trace
from ragmeter.dedup.keys import KeyMaker, ResultKeys
from ragmeter.errors import InputError

TraceStatus = Literal["scored", "results_not_captured", "no_search"]
_NO_FIELDS = (None, None, None, None, None)


class FlatResult(NamedTuple):
    """One result of the scored turn, with its cleaned fields (blank = absent) and its place."""

    iteration: int
    query: str | None
    domain_id: str | None
    id: str | None
    url: str | None
    title: str | None
    snippet: str | None
    gain: float | None
    search_path: str
    rank: int

    @property
    def path(self) -> str:
        """Where the result is in the trace: ``turns[t].iterations[i].searches[s].results[r]``."""
        return f"{self.search_path}.results[{self.rank}]"


@dataclass(frozen=True)
class PreparedTrace:
    """The last turn's search iterations of one trace, flattened in order, with keys."""

    trace_id: str
    where: str
    task: str | None
    status: TraceStatus
    reason: str | None
    iteration_sizes: tuple[int, ...]
    results: tuple[FlatResult, ...]
    keys: tuple[ResultKeys, ...]
    good_results: tuple[ResultRef, ...] | None
    dropped_iterations: int
    earlier_turns: int

    @property
    def n_iterations(self) -> int:
        """N: the number of iterations in which a search was invoked."""
        return len(self.iteration_sizes)


def _flat(result: SearchResult, iteration: int, query: str | None, search_path: str, rank: int) -> FlatResult:
    """The result with blank strings read as absent."""
    domain_id, id_, url, title, snippet = (
        result.domain_id,
        result.id,
        result.url,
        result.title,
        result.snippet,
    )
    return FlatResult(
        iteration,
        query,
        domain_id if domain_id and not domain_id.isspace() else None,
        id_ if id_ and not id_.isspace() else None,
        url if url and not url.isspace() else None,
        title if title and not title.isspace() else None,
        snippet if snippet and not snippet.isspace() else None,
        result.gain,
        search_path,
        rank,
    )


def _check(flat: FlatResult, where: str) -> None:
    if (
        flat.domain_id is None
        and flat.id is None
        and flat.url is None
        and flat.title is None
        and flat.snippet is None
    ):
        raise InputError(
            f"{flat.path}: a result needs at least one of domain_id, id, url, title or snippet", where=where
        )


def prepare_trace(trace: Trace, *, where: str, keys: KeyMaker) -> PreparedTrace:
    """Flatten the last turn of ``trace`` and compute every result's dedup keys.

    >>> from ragmeter.agentic.trace import Trace
    >>> from ragmeter.dedup import KeyMaker
    >>> t = Trace.model_validate({"trace_id": "t", "turns": [{"iterations": [
    ...     {"searches": []},
    ...     {"searches": [{"results": [{"url": "https://a.org"}]}, {"results": []}]}]}]})
    >>> p = prepare_trace(t, where="x.jsonl:1", keys=KeyMaker())
    >>> p.status, p.iteration_sizes, p.dropped_iterations
    ('scored', (1,), 1)
    """
    turn_index = len(trace.turns) - 1
    sizes: list[int] = []
    flat: list[FlatResult] = []
    dropped = 0
    reason: str | None = None
    for it_index, iteration in enumerate(trace.last_turn.iterations):
        if not iteration.searches:
            dropped += 1
            continue
        number = len(sizes) + 1
        size = 0
        for s_index, search in enumerate(iteration.searches):
            search_path = f"turns[{turn_index}].iterations[{it_index}].searches[{s_index}]"
            if search.results is None:
                if reason is None:
                    why = search.results_not_captured or "results not recorded in the trace"
                    reason = f"results not captured: iteration {number}, {search_path}: {why}"
                continue
            for rank, result in enumerate(search.results):
                one = _flat(result, number, search.query, search_path, rank)
                if one[2:7] == _NO_FIELDS:
                    _check(one, where)
                flat.append(one)
            size += len(search.results)
        sizes.append(size)
    status: TraceStatus = "scored"
    if reason is not None:
        status = "results_not_captured"
    elif not sizes:
        status, reason = "no_search", "no search was invoked in the last turn"
    if status != "scored":
        flat = []
    of = keys.of
    result_keys = tuple([of(r[2], r[3], r[4], r[5], r[6]) for r in flat])
    return PreparedTrace(
        trace_id=trace.trace_id,
        where=where,
        task=trace.task_text(),
        status=status,
        reason=reason,
        iteration_sizes=tuple(sizes),
        results=tuple(flat),
        keys=result_keys,
        good_results=None if trace.good_results is None else tuple(trace.good_results),
        dropped_iterations=dropped,
        earlier_turns=turn_index,
    )
