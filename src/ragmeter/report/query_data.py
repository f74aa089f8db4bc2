"""The drill-down's data: every query once, as compact JSON that the page's script renders on demand.

No row's HTML is written in advance: the page holds one JSON object and draws
the visible page of the query table, and a query's details when it is opened.
That keeps a report of 1,000 queries under 1 MB and one of 10,000 usable.

One query is an object with short keys (absent when empty):

====== ================================================================
``id``  the sample or trace id
``q``   the question (or an agentic trace's task) as text
``x``   other input fields, ``{name: text}``
``v``   the values, in the order of ``metrics`` (``null``: not scored)
``u``   why a metric left it unscored: ``[[metric index, string index]]``
``d``   its dimension values (``category``, ``difficulty``, …); ``t`` its tags
``g``   gold supports: ``[rel_path, heading, [snippets], first matching rank or 0]``
        (``rel_path`` and ``heading`` index ``strings``, as everywhere below)
``gi``  gold ids: ``[id, gain, first rank or 0]`` (id-matched datasets)
``r``   the top k retrieved: ``[chunk index, score, gain, [gold indexes matched]]`` (absent when
        no output was recorded); ``k`` the cutoff, ``rn`` how many were retrieved when more
``a``   the answer; ``ab`` abstained; ``e`` the error; ``to`` timed out
``rf``  references: ``[rel_path, heading, [gold indexes covered]]``; ``ex`` expected answers
``j``   judges: ``{n, m, v, c, why, ra, d, raw, mo, sp}`` (name, metric when not the name,
        value, unscored code and reason, rationale, other details, raw replies, model as a
        string index, spot-check)
``ag``  an agentic trace: status, reason, iterations, IterationsForAllGoodResults, series
====== ================================================================

Chunks (``[id, rel_path, heading, text]``, the id ``null`` when it is just
``rel_path#heading``) are stored once in ``chunks``; unscored reasons, paths,
headings and model names once in ``strings``; both are referred to by index. Long texts are cut to
fit a size budget (:data:`BYTES_PER_QUERY`, :mod:`ragmeter.report.text_budget`);
what was cut is said on the page.

>>> data = build_query_data([{"id": "q1", "metrics": {"mrr": 0.5}, "input": {"question": "Why?"},
...                           "output": {"answer": "Because."}}], ["mrr"], Sources())
>>> dumps(data["queries"][0])
'{"id":"q1","v":[0.5],"q":"Why?","r":[],"a":"Because."}'
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from ragmeter.matching.anchors import AnchorKey, normalize_rel_path
from ragmeter.report.sources import Sources
from ragmeter.report.text_budget import LongTexts, dumps
from ragmeter.schema.samples import Sample

BYTES_PER_QUERY = 900
"""The data budget per query (at least :data:`MIN_BUDGET` in all): 1,000 queries stay under 1 MB."""
MIN_BUDGET = 400_000
RETRIEVED_SHOWN = 10
"""Ranked items shown per query when its cutoff k is unknown (else the top k, at most :data:`RETRIEVED_MAX`)."""
RETRIEVED_MAX = 20
DETAILS_SHOWN = 20
"""Items of a judge's list details (claims, key facts) kept per detail."""


def compact_number(value: Any) -> float | int | None:
    """A value as short as the page needs it; non-numbers (and NaN, infinities) are ``None``.

    Below 1: 5 significant digits (more than the 4 decimals shown, and 0.01 ms of a latency in
    seconds); from 1 up: 6 decimals, so counts and token sums stay exact. Integers lose ``.0``.

    >>> compact_number(0.65092092983), compact_number(0.000437381), compact_number(123456.7), compact_number(1.0)
    (0.65092, 0.00043738, 123456.7, 1)
    >>> compact_number(float("nan")), compact_number(True)
    (None, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    rounded = round(float(value), 6) if abs(value) >= 1 else float(f"{value:.5g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < 1e15 else rounded


def heading_text(heading: str | Sequence[str] | None) -> str:
    """``["A", "B"]`` → ``A > B``; a string as written."""
    if heading is None:
        return ""
    return heading if isinstance(heading, str) else " > ".join(heading)


QUESTION_KEYS = ("question", "query", "input", "text")
"""Where a question is found in an input object (the keys :meth:`Sample.question` reads)."""


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _last_user_message(messages: Any) -> str | None:
    """The text of the last ``{"role": "user", "content": "..."}`` of a chat-style input."""
    if not isinstance(messages, list):
        return None
    said = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    return said[-1] if said and isinstance(said[-1], str) else None


def question_and_input(raw: Any, sample: Sample | None) -> tuple[str | None, dict[str, str]]:
    """The question text and the other input fields (as text) of a row's ``input`` (else the sample's).

    >>> question_and_input({"question": "Why?", "lang": "en"}, None)
    ('Why?', {'lang': 'en'})
    >>> question_and_input({"messages": [{"role": "user", "content": "Hi?"}]}, None)[0]
    'Hi?'
    >>> question_and_input(["a", 1], None)
    (None, {'input': '["a", 1]'})
    """
    if raw is None and sample is not None:
        raw = sample.input
        if raw is None:  # a sample may give its question as a field of its own
            extra = sample.model_extra or {}
            found = next((extra[k] for k in ("question", "query") if isinstance(extra.get(k), str)), None)
            return found, {}
    if isinstance(raw, str):
        return raw, {}
    if isinstance(raw, dict):
        key = next((k for k in QUESTION_KEYS if isinstance(raw.get(k), str)), None)
        question = raw[key] if key is not None else _last_user_message(raw.get("messages"))
        return question, {k: _as_text(v) for k, v in raw.items() if k != key}
    if raw is None:
        return None, {}
    return None, {"input": _as_text(raw)}


_normal_path = lru_cache(maxsize=65_536)(normalize_rel_path)


class _Builder:
    """Turns rows into compact query objects, storing chunks and reasons once."""

    def __init__(
        self, metric_names: Sequence[str], sources: Sources, *, snippets: bool, default_k: int | None
    ) -> None:
        self.metric_names = metric_names
        self.metric_index = {name: i for i, name in enumerate(metric_names)}
        self.sources = sources
        self.snippets = snippets
        self.default_k = default_k
        self.chunks: list[list[Any]] = []
        self.chunk_index: dict[tuple[Any, ...], int] = {}
        self.strings: list[str] = []
        self.string_index: dict[str, int] = {}
        self.texts = LongTexts()

    def string(self, text: str | None) -> int | None:
        """The index of ``text`` in the string table (``None`` for no text)."""
        if text is None:
            return None
        if text not in self.string_index:
            self.string_index[text] = len(self.strings)
            self.strings.append(text)
        return self.string_index[text]

    def place(self, path: Any, heading: Any) -> list[int | None]:
        """``[rel_path, heading]`` as indexes into the string table."""
        return [
            self.string(path if isinstance(path, str) else None),
            self.string(heading_text(heading) or None),
        ]

    def chunk(self, item: Mapping[str, Any]) -> int:
        path, heading = item.get("rel_path"), heading_text(item.get("heading_path"))
        key = (item.get("id"), path, heading, item.get("text"))
        if key not in self.chunk_index:
            plain = path is not None and key[0] == f"{path}#{heading}"
            self.chunk_index[key] = len(self.chunks)
            self.chunks.append(
                [None if plain else key[0], *self.place(path, heading), self.texts.add("chunk_text", key[3])]
            )
        return self.chunk_index[key]

    def query(self, row: Mapping[str, Any]) -> dict[str, Any]:
        qid = str(row.get("id", ""))
        sample = self.sources.samples.get(qid)
        gold = [AnchorKey.from_anchor(a) for a in sample.supports()] if sample is not None else []
        values = row.get("metrics") or {}
        out: dict[str, Any] = {"id": qid, "v": [compact_number(values.get(m)) for m in self.metric_names]}
        question, extra = question_and_input(row.get("input"), sample)
        out["q"] = question
        out["x"] = {k: self.texts.add("answer", v) for k, v in extra.items()}
        reasons = row.get("unscored") or {}
        out["u"] = [
            [self.metric_index[m], self.string(str(r))] for m, r in reasons.items() if m in self.metric_index
        ]
        out["d"] = {
            k: row[k] for k in ("category", "difficulty", "vault", "answerable") if row.get(k) is not None
        }
        out["t"] = list(row.get("tags") or [])
        self._retrieval(out, row, sample, gold)
        self._answer(out, row, sample, gold)
        out["j"] = self._judges(row, qid)
        if row.get("trace") is not None:
            out["ag"] = self._trace(row["trace"], out)
        kept = {"v"} | (
            {"r"} if out["r"] is not None else set()
        )  # an empty ranking is news; no ranking is not
        return {k: v for k, v in out.items() if k in kept or v not in (None, [], {})}

    def _retrieval(
        self, out: dict[str, Any], row: Mapping[str, Any], sample: Sample | None, gold: Sequence[AnchorKey]
    ) -> None:
        output = self.sources.outputs.get(out["id"])
        shown_rows = [r for r in row.get("retrieved") or [] if isinstance(r, dict)]
        items = (
            [i.model_dump(exclude_none=True) for i in output.retrieved] if output is not None else shown_rows
        )
        recorded = output is not None or "retrieved" in row or isinstance(row.get("output"), dict)
        k = sample.metadata.k if sample is not None and sample.metadata.k else self.default_k
        matches = [self._gold_hits(item, gold) for item in items]
        if sample is not None and gold:
            first = [next((r for r, hits in enumerate(matches, 1) if i in hits), 0) for i in range(len(gold))]
            out["g"] = [
                [*self.place(a.rel_path, a.heading_path), list(a.snippets), first[i]]
                for i, a in enumerate(sample.supports())
            ]
        elif sample is not None and sample.expected_output:
            expected = sample.expected_output
            grades = expected if isinstance(expected, dict) else dict.fromkeys(expected, 1.0)
            ranks: dict[Any, int] = {}
            for rank, item in enumerate(items, 1):
                ranks.setdefault(item.get("id"), rank)
            out["gi"] = [[doc, compact_number(g), ranks.get(doc, 0)] for doc, g in grades.items()]
        limit = min(k or RETRIEVED_SHOWN, RETRIEVED_MAX)
        gains = [r.get("gain") for r in shown_rows]
        out["r"] = (
            None
            if not recorded
            else [
                [
                    self.chunk(item),
                    compact_number(item.get("score")),
                    compact_number(gains[rank] if rank < len(gains) else None),
                    sorted(matches[rank]),
                ]
                for rank, item in enumerate(items[:limit])
            ]
        )
        out["rn"] = len(items) if len(items) > limit else None
        out["k"] = k if items else None

    def _gold_hits(self, item: Mapping[str, Any], gold: Sequence[AnchorKey]) -> set[int]:
        """The gold supports the chunk matches (anchor and, with snippet matching, a snippet)."""
        path = item.get("rel_path")
        if not gold or not isinstance(path, str):
            return set()
        hits = set()
        for i, anchor in enumerate(gold):
            if _normal_path(path) != anchor.rel_path or not anchor.covers(path, item.get("heading_path")):
                continue
            if self.snippets and anchor.snippets and not anchor.snippet_found(str(item.get("text") or "")):
                continue
            hits.add(i)
        return hits

    def _answer(
        self, out: dict[str, Any], row: Mapping[str, Any], sample: Sample | None, gold: Sequence[AnchorKey]
    ) -> None:
        recorded = row.get("output")
        summary: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
        output = self.sources.outputs.get(out["id"])
        if output is not None:
            summary = output.model_dump(mode="json", exclude_none=True) | summary
        out["a"] = self.texts.add("answer", summary.get("answer"))
        out["ab"] = summary.get("abstained")
        out["abs"] = row.get("abstained_source")
        out["e"] = summary.get("error")
        out["to"] = summary.get("timed_out") or None
        out["rf"] = [
            [
                *self.place(ref.get("rel_path"), ref.get("heading_path")),
                [i for i, a in enumerate(gold) if a.covers(ref.get("rel_path"), ref.get("heading_path"))],
            ]
            for ref in summary.get("references") or []
            if isinstance(ref, dict)
        ]
        out["ex"] = sample.metadata.expected_answers() if sample is not None else None

    def _judges(self, row: Mapping[str, Any], qid: str) -> list[dict[str, Any]]:
        found: list[tuple[dict[str, Any], bool]] = []
        for key, spot in (("judges", False), ("judges_spot_check", True)):
            block = row.get(key)
            if isinstance(block, dict):
                found.extend((o, spot) for o in block.values() if isinstance(o, dict))
        if not found:
            found = [(o, o.get("role") == "reliability") for o in self.sources.judge_outcomes.get(qid, [])]
        judges = [_judge(o, spot, self.texts) for o, spot in found]
        for judge in judges:
            judge["mo"] = self.string(judge.get("mo"))
        return [{k: v for k, v in j.items() if v is not None} for j in judges]

    def _trace(self, trace: Mapping[str, Any], out: dict[str, Any]) -> dict[str, Any]:
        known = self.sources.traces.get(out["id"]) or {}
        if out.get("q") is None:
            out["q"] = known.get("task")
        info = {
            "st": trace.get("status"),
            "rs": trace.get("reason"),
            "w": trace.get("where"),
            "n": trace.get("n_iterations"),
            "it": trace.get("iterations_for_all_good"),
            "itr": trace.get("iterations_for_all_good_reason"),
            "gk": trace.get("good_results_known"),
            "s": {k: [compact_number(x) for x in v] for k, v in (trace.get("series") or {}).items()},
            "dk": trace.get("duplicates_by_key"),
            "un": trace.get("n_unscored"),
            "sq": known.get("searches"),
        }
        return {k: v for k, v in info.items() if v not in (None, [], {})}


def _judge(outcome: Mapping[str, Any], spot: bool, texts: LongTexts) -> dict[str, Any]:
    """One judge outcome: verdict or unscored reason, rationale, other details, raw replies, model."""
    details = dict(outcome.get("details") or {})
    rationale = next(
        (details.pop(k) for k in ("reasoning", "rationale", "explanation") if k in details), None
    )
    calls = [c for c in outcome.get("calls") or [] if isinstance(c, dict)]
    raw = [texts.add("raw_reply", r) for c in calls for r in c.get("raw_replies") or []]
    judge = {
        "n": outcome.get("judge"),
        "m": outcome.get("metric") if outcome.get("metric") != outcome.get("judge") else None,
        "v": compact_number(outcome.get("value")),
        "c": outcome.get("unscored_code"),
        "why": outcome.get("unscored_reason"),
        "ra": texts.add("rationale", rationale),
        "d": {
            k: [texts.add("rationale", x) for x in v[:DETAILS_SHOWN]]
            if isinstance(v, list)
            else texts.add("rationale", v)
            for k, v in details.items()
        },
        "raw": raw,
        "mo": next((c.get("model_reported") or c.get("model_requested") for c in calls), None),
        "src": outcome.get("source") if outcome.get("source") not in (None, "judge") else None,
        "sp": 1 if spot else None,
    }
    return {k: v for k, v in judge.items() if v not in (None, [], {})}


def build_query_data(
    rows: Iterable[Mapping[str, Any]],
    metric_names: Sequence[str],
    sources: Sources,
    *,
    snippet_matching: bool = True,
    default_k: int | None = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """``{"queries", "chunks", "strings", "cut"}`` for the page, its long texts cut to fit ``budget`` bytes.

    Write it with :func:`ragmeter.report.text_budget.dumps` (the long texts are objects until then).

    ``default_k`` is the cutoff of queries whose sample sets none (ranks beyond it are shown faded).
    ``budget`` defaults to :data:`BYTES_PER_QUERY` per query (at least :data:`MIN_BUDGET`).
    ``cut`` names each kind of text that had to be shortened, with its limit in characters.
    """
    builder = _Builder(metric_names, sources, snippets=snippet_matching, default_k=default_k)
    queries = [builder.query(row) for row in rows]
    allowed = budget if budget is not None else max(MIN_BUDGET, BYTES_PER_QUERY * len(queries))
    data = {"queries": queries, "chunks": builder.chunks, "strings": builder.strings}
    return {**data, "cut": builder.texts.fit(dumps(data), budget=allowed)}
