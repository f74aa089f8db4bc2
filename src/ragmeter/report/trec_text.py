"""A result as trec_eval ``-q`` prints one: ``metric<TAB>query<TAB>value`` lines, then the ``all`` lines.

``ragmeter eval --format trec`` prints this. As in trec_eval, the metric name is padded to 22
characters and values have four decimals (``%6.4f``); per query, every metric of the query in
the result's metric order, queries in the result's order; then each metric's aggregate under
``all``. Each metric is named as the user typed it (``nDCG@10``, ``P@5``). A query a metric
left unscored (no relevant items, for example) has no line for that metric, and an aggregate
that is undefined has none either: a missing line is never a 0.
Tools that read trec_eval's per-query output (trectools, ranx's ``Run.from_file`` for
evaluations, spreadsheets) read this.

>>> from ragmeter.results import EvalResult
>>> r = EvalResult(aggregate={"mrr": 0.75}, per_query={"q1": {"mrr": 1.0}, "q2": {"mrr": 0.5}, "q3": {"mrr": None}},
...                n_queries=3, n_scored={"mrr": 2}, n_skipped={"mrr": 1})
>>> for line in per_query_trec_lines(r):
...     print(line.split("\\t"))
['mrr                   ', 'q1', '1.0000']
['mrr                   ', 'q2', '0.5000']
['mrr                   ', 'all', '0.7500']
"""

from __future__ import annotations

from collections.abc import Iterator

from ragmeter.results import EvalResult


def _line(metric: str, query: str, value: float) -> str:
    return f"{metric:<22}\t{query}\t{value:6.4f}"


def per_query_trec_lines(result: EvalResult) -> Iterator[str]:
    """The lines (without newlines): per query, then ``all``; each metric under the name the user typed."""
    typed = result.requested_names()
    for query, values in result.per_query.items():
        for metric in result.aggregate:
            value = values.get(metric)
            if value is not None:
                yield _line(typed[metric], query, value)
    for metric, value in result.aggregate.items():
        if value is not None:
            yield _line(typed[metric], "all", value)


def per_query_trec_text(result: EvalResult) -> str:
    """:func:`per_query_trec_lines` as text, each line ending in a newline."""
    return "".join(line + "\n" for line in per_query_trec_lines(result))
