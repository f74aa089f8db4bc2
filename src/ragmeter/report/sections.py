"""The report's tables, as plain rows for the templates: summary, breakdowns, operations, index, judge.

Every number is shown with its unit (:mod:`ragmeter.report.units`); no section
is ever shown as raw JSON — a section the report does not know is laid out as
rows of labelled values (:func:`fact_rows`).

>>> rows = summary_rows({"aggregate": {"mrr": 0.5, "latency_p50": 0.002}, "n_scored": {"mrr": 3},
...                      "n_skipped": {"mrr": 1}})
>>> [(r.name, r.text, r.operational) for r in rows]
[('mrr', '0.5000', False), ('latency_p50', '2.00 ms', True)]
>>> [f.text for f in fact_rows({"n_errors": 2, "suite_seconds": 1.5, "skip_reasons": {}})]
['2', '1.50 s', 'none']
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragmeter.report.units import (
    COUNT,
    PERCENT,
    PLAIN,
    SECONDS,
    TOKENS,
    USD,
    Unit,
    format_value,
    is_operational,
    metric_direction,
    metric_unit,
)

BREAKDOWN_COLUMNS = 8
"""Category columns per breakdown table; more values make more tables (no horizontal scroll)."""
LIST_SHOWN = 20


@dataclass(frozen=True)
class SummaryRow:
    """One metric of the summary."""

    name: str
    value: float | None
    text: str
    n_scored: int | str
    n_skipped: int | str
    skip_reason: str
    k: int | None
    reliability: str
    higher_is_better: bool | None
    operational: bool


def reliability_text(stats: Any) -> str:
    """A judge metric's spot-check as ``κ 0.62 · 15% disagree · n 20`` (empty without one).

    >>> reliability_text({"disagreement_rate": 0.15, "kappa": 0.62, "spot_check_n": 20})
    'κ 0.62 · 15% disagree · n 20'
    """
    if not isinstance(stats, Mapping):
        return ""
    rate, kappa = stats.get("disagreement_rate"), stats.get("kappa")
    kappa_text = f"{kappa:.2f}" if isinstance(kappa, (int, float)) else "—"
    rate_text = f"{rate:.0%}" if isinstance(rate, (int, float)) else "—"
    n = stats.get("spot_check_n", stats.get("n", ""))
    return f"κ {kappa_text} · {rate_text} disagree · n {n}"


def summary_rows(metrics: Mapping[str, Any]) -> list[SummaryRow]:
    """Every aggregate with its counts, cutoff, skip reason and judge reliability, in results order."""
    info = (metrics.get("provenance") or {}).get("metrics") or {}
    reliability = metrics.get("judge_reliability") or {}
    rows = []
    for name, value in (metrics.get("aggregate") or {}).items():
        meta = info.get(name) or {}
        rows.append(
            SummaryRow(
                name=name,
                value=value,
                text=format_value(value, metric_unit(name)),
                n_scored=(metrics.get("n_scored") or {}).get(name, ""),
                n_skipped=(metrics.get("n_skipped") or {}).get(name, ""),
                skip_reason=str(meta.get("skip_reason") or ""),
                k=meta.get("k"),
                reliability=reliability_text(reliability.get(name)),
                higher_is_better=metric_direction(name),
                operational=is_operational(name),
            )
        )
    return rows


@dataclass(frozen=True)
class BreakdownCell:
    """A group's value of one metric; ``text`` is empty when the group scored nothing."""

    text: str
    n: int


@dataclass
class BreakdownTable:
    """Metrics as rows, up to :data:`BREAKDOWN_COLUMNS` values of one dimension as columns."""

    dimension: str
    values: list[str]
    rows: list[tuple[str, list[BreakdownCell]]] = field(default_factory=list)


def breakdown_tables(breakdowns: Mapping[str, Any], order: Sequence[str]) -> dict[str, list[BreakdownTable]]:
    """Per dimension (``category`` first), its tables: metrics (in ``order``) as rows, values as columns.

    >>> tables = breakdown_tables({"category": {"a": {"mrr": {"mean": 0.5, "n": 2}}, "b": {}}}, ["mrr"])
    >>> [(c.text, c.n) for c in tables["category"][0].rows[0][1]]
    [('0.5000', 2), ('', 0)]
    """
    dimensions = sorted(breakdowns, key=lambda d: (d != "category", list(breakdowns).index(d)))
    out: dict[str, list[BreakdownTable]] = {}
    for dimension in dimensions:
        by_value = breakdowns[dimension]
        if not isinstance(by_value, Mapping) or not by_value:
            continue
        present = {m for cell in by_value.values() if isinstance(cell, Mapping) for m in cell}
        names = [m for m in order if m in present] + sorted(present - set(order))
        values = [str(v) for v in by_value]
        tables = []
        for start in range(0, len(values), BREAKDOWN_COLUMNS):
            table = BreakdownTable(dimension, values[start : start + BREAKDOWN_COLUMNS])
            for name in names:
                cells = []
                for value in table.values:
                    cell = (by_value.get(value) or {}).get(name) or {}
                    n = int(cell.get("n") or 0)
                    mean = cell.get("mean") if n else None
                    cells.append(BreakdownCell(format_value(mean, metric_unit(name)), n))
                table.rows.append((name, cells))
            tables.append(table)
        out[dimension] = tables
    return out


@dataclass(frozen=True)
class Fact:
    """One labelled value of a table of facts; ``missing`` when nothing was recorded."""

    label: str
    text: str
    missing: bool = False
    depth: int = 0


_LABELS: dict[str, tuple[str, Unit]] = {
    # operational
    "n_queries": ("queries", COUNT),
    "n_outputs": ("outputs recorded", COUNT),
    "n_errors": ("errors", COUNT),
    "n_timeouts": ("timeouts", COUNT),
    "n_empty_answers": ("empty answers", COUNT),
    "suite_seconds": ("time answering (sum of latencies)", SECONDS),
    # index coverage
    "no_chunks_rate": ("documents without a chunk", PERCENT),
    "skipped_for_context_rate": ("chunks skipped for the context length", PERCENT),
    "docs_processed": ("documents processed", COUNT),
    "docs_with_zero_chunks": ("documents with no chunk", COUNT),
    "zero_chunk_rel_paths": ("which documents", PLAIN),
    "chunks_attempted": ("chunks made", COUNT),
    "chunks_embedded": ("chunks indexed", COUNT),
    "chunks_skipped": ("chunks skipped", COUNT),
    "chunks_skipped_for_context": ("chunks skipped for the context length", COUNT),
    "skip_reasons": ("skip reasons (chunks)", COUNT),
    "context_skip_reasons": ("context-length reasons", PLAIN),
    # judge usage
    "calls": ("calls", COUNT),
    "http_attempts": ("HTTP attempts", COUNT),
    "cache_hits": ("answered from the cache", COUNT),
    "prompt_tokens": ("prompt tokens", TOKENS),
    "completion_tokens": ("completion tokens", TOKENS),
    "calls_without_usage": ("calls without token counts", COUNT),
    "cost_usd": ("cost", USD),
    "max_cost_usd": ("budget", USD),
    "unpriced_calls": ("calls without a price", COUNT),
}


def _unit_of(key: str) -> Unit:
    """A unit guessed from a key the report has no label for."""
    if key in _LABELS:
        return _LABELS[key][1]
    if re.search(r"(^|_)(cost|usd)($|_)", key):
        return USD
    if "token" in key:
        return TOKENS
    if key.endswith("seconds") or key.endswith("_s"):
        return SECONDS
    if key.endswith("rate") or key.startswith("share"):
        return PERCENT
    if key.startswith("n_") or key.startswith("num_") or key in {"n", "count"}:
        return COUNT
    return PLAIN


def _label(key: str) -> str:
    return _LABELS[key][0] if key in _LABELS else key.replace("_", " ")


def _text(value: Any, unit: Unit) -> str:
    if unit == PLAIN and isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:,}" if isinstance(value, int) else f"{value:.6g}"  # a setting or a count, as written
    if isinstance(value, (bool, int, float)):
        return format_value(value, unit)
    if isinstance(value, list):
        shown = ", ".join(str(v) for v in value[:LIST_SHOWN]) or "none"
        return shown + (f" and {len(value) - LIST_SHOWN} more" if len(value) > LIST_SHOWN else "")
    return str(value)


def _sum_mean(value: Mapping[str, Any], unit: Unit) -> str:
    """``{sum, mean, n}`` as ``1,234 tokens in all · 36 tokens per query (n 34)``."""
    parts = []
    if value.get("sum") is not None:
        parts.append(f"{format_value(value['sum'], unit)} in all")
    if value.get("mean") is not None:
        parts.append(f"{format_value(value['mean'], unit)} per query")
    return " · ".join(parts) + (f" (n {value.get('n')})" if value.get("n") is not None else "")


def _stats(value: Mapping[str, Any], unit: Unit) -> str:
    """``{min, mean, p95, max}`` as ``min 8 · mean 21 · p95 32 · max 185 tokens``."""
    order = ("min", "mean", "median", "p50", "p95", "max")
    parts = [
        f"{k} {format_value(value[k], unit).removesuffix(' ' + unit.suffix)}" for k in order if k in value
    ]
    return " · ".join(parts) + (f" {unit.suffix}" if unit.suffix else "")


def fact_rows(section: Mapping[str, Any], *, depth: int = 0, unit_hint: Unit | None = None) -> list[Fact]:
    """A section (``operational``, ``index_coverage``, any unknown one) as labelled values with units.

    Nested objects become indented rows; ``{sum, mean, n}`` and ``{min, …, max}`` become one line.
    """
    facts: list[Fact] = []
    for key, value in section.items():
        unit = unit_hint or _unit_of(str(key))
        label = _label(str(key))
        if value is None:
            facts.append(Fact(label, "not recorded", missing=True, depth=depth))
        elif isinstance(value, Mapping) and value and set(value) <= {"sum", "mean", "n"}:
            facts.append(Fact(label, _sum_mean(value, unit), depth=depth))
        elif isinstance(value, Mapping) and value and {"min", "max"} <= set(value):
            facts.append(Fact(label, _stats(value, unit), depth=depth))
        elif isinstance(value, Mapping):
            if not value:
                facts.append(Fact(label, "none", depth=depth))
                continue
            facts.append(Fact(label, "", depth=depth))
            hint = unit if key in _LABELS or unit != PLAIN else None
            facts.extend(fact_rows(value, depth=depth + 1, unit_hint=hint))
        else:
            facts.append(Fact(label, _text(value, unit), depth=depth))
    return facts


def operational_facts(operational: Mapping[str, Any]) -> list[Fact]:
    """The run totals: counts, tokens (integers), cost (USD) and time (s).

    >>> [(f.label, f.text) for f in operational_facts({"tokens": {"prompt": {"sum": 10.0, "mean": 2.5, "n": 4}}})]
    [('prompt tokens', '10 tokens in all · 3 tokens per query (n 4)')]
    """
    flat: dict[str, Any] = {}
    for key, value in operational.items():
        if key == "tokens" and isinstance(value, Mapping):
            flat |= {f"{kind} tokens": v for kind, v in value.items()}
        else:
            flat[key] = value
    facts = []
    for key, value in flat.items():
        if key.endswith(" tokens") and isinstance(value, Mapping):
            facts.append(Fact(key, _sum_mean(value, TOKENS)))
        elif key == "cost" and isinstance(value, Mapping):
            facts.append(Fact("cost", _sum_mean(value, USD)))
        else:
            facts.extend(fact_rows({key: value}))
    return facts


@dataclass(frozen=True)
class LatencyCell:
    """One latency aggregate: its metric name, raw value (seconds) and text (ms)."""

    name: str
    value: float | None
    text: str


@dataclass(frozen=True)
class LatencyTable:
    """Latency aggregates in ms: one row per stage, one column per percentile (``None``: not measured)."""

    columns: list[str]
    rows: list[tuple[str, list[LatencyCell | None]]]


def latency_table(aggregate: Mapping[str, Any]) -> LatencyTable | None:
    """``latency_p50``, ``latency_p95.retrieval``, … pivoted to stages × percentiles (ms).

    >>> t = latency_table({"latency_p50": 0.001, "latency_p95": 0.002, "latency_p50.retrieval": 0.0005})
    >>> t.columns, [(stage, [c.text if c else None for c in cells]) for stage, cells in t.rows]
    (['p50', 'p95'], [('end to end', ['1.00 ms', '2.00 ms']), ('retrieval', ['0.50 ms', None])])
    """
    cells: dict[str, dict[str, LatencyCell]] = {}
    columns: list[str] = []
    unit = metric_unit("latency")
    for name, value in aggregate.items():
        match = re.fullmatch(r"latency_(p\d+)(?:\.(.+))?", name)
        if match is None:
            continue
        percentile, stage = match.group(1), match.group(2) or "end to end"
        columns += [percentile] if percentile not in columns else []
        cells.setdefault(stage, {})[percentile] = LatencyCell(name, value, format_value(value, unit))
    if not cells:
        return None
    return LatencyTable(columns, [(stage, [by.get(p) for p in columns]) for stage, by in cells.items()])


def judge_facts(judge: Mapping[str, Any]) -> list[Fact]:
    """The judge setup and usage: model, endpoint, decoding, prompts, calls, tokens and cost."""
    setup = judge.get("judge") or {}
    facts = [
        Fact("judges", ", ".join(str(j) for j in judge.get("judges") or []) or "none"),
        *fact_rows(
            {k: setup[k] for k in ("model", "endpoint", "temperature", "seed", "max_tokens") if k in setup}
        ),
    ]
    prompts = judge.get("prompts") or {}
    if prompts:
        facts.append(Fact("prompts", ""))
        for name, prompt in prompts.items():
            if isinstance(prompt, Mapping):
                sha = str(prompt.get("sha256") or "")[:12]
                facts.append(Fact(str(name), f"{prompt.get('version', '')} · sha256 {sha}…", depth=1))
    usage = judge.get("usage")
    if isinstance(usage, Mapping):
        facts.append(Fact("usage", ""))
        shown = {k: v for k, v in usage.items() if v is not None or k == "cost_usd"}
        unknown = Fact("cost", "unknown (no price for the model)", depth=1)
        facts.extend(unknown if f.label == "cost" and f.missing else f for f in fact_rows(shown, depth=1))
    return facts


def nested(mapping: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    """``mapping[k1][k2]…`` when each step is an object, else ``{}``.

    >>> nested({"a": {"b": {"c": 1}}}, "a", "b"), nested({"a": None}, "a", "b")
    ({'c': 1}, {})
    """
    for key in keys:
        value = mapping.get(key)
        mapping = value if isinstance(value, Mapping) else {}
    return mapping


def tables(metrics: Mapping[str, Any], config: Mapping[str, Any], *, known: set[str]) -> dict[str, Any]:
    """Every table of the page, by the name its template uses (``known``: the sections laid out elsewhere)."""
    aggregate = nested(metrics, "aggregate")
    summary = summary_rows(metrics)
    return {
        "summary": summary,
        "per_query": [r for r in summary if r.operational and not r.name.startswith("latency")],
        "breakdowns": breakdown_tables(nested(metrics, "breakdowns"), list(aggregate)),
        "latency": latency_table(aggregate),
        "operational": operational_facts(nested(metrics, "operational")),
        "coverage": fact_rows(nested(metrics, "index_coverage")),
        "index_info": fact_rows(nested(metrics, "provenance", "inputs", "index")),
        "judge": judge_facts(nested(metrics, "provenance", "judge")),
        "reliability": nested(metrics, "judge_reliability"),
        "agentic_facts": fact_rows(
            {k: v for k, v in nested(metrics, "agentic").items() if k in ("counts", "redundancy")}
        ),
        "extra": {
            k: fact_rows(v if isinstance(v, Mapping) else {k: v})
            for k, v in metrics.items()
            if k not in known
        },
        "provenance": fact_rows(nested(metrics, "provenance")),
        "config": fact_rows(config),
    }
