"""The public facade: :func:`evaluate` for datasets with outputs, :func:`evaluate_trec` for TREC files.

The data flows one way: load → validate → match → gains per rank → score →
aggregate → result.

>>> result = evaluate(
...     [{"id": "q-1", "expected_output": ["doc-3", "doc-9"]}],
...     {"q-1": ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]},
...     metrics=["hit@5", "recall@5", "mrr", "ndcg@5"],
... )
>>> {name: round(value, 4) for name, value in result.aggregate.items()}
{'hit@5': 1.0, 'recall@5': 1.0, 'mrr': 0.5, 'ndcg@5': 0.6509}
"""

from __future__ import annotations

import platform
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter import __version__
from ragmeter.config import RagmeterConfig, load_config
from ragmeter.errors import ConfigError, InputError, RagmeterError
from ragmeter.io.datasets import load_dataset
from ragmeter.io.digests import file_sha256, hash_in_background
from ragmeter.io.index_stats import load_index_stats
from ragmeter.io.outputs import load_outputs_with_sources, parse_output
from ragmeter.io.records import validate
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.matching.anchors import match_anchors, merged_tables
from ragmeter.matching.ids import match_ids, repeated_positions
from ragmeter.matching.trec import match_trec
from ragmeter.metrics.breakdowns import breakdowns, sample_dimensions
from ragmeter.metrics.indexing import index_coverage, index_provenance
from ragmeter.metrics.inputs import ScoringInput
from ragmeter.metrics.operational import OPERATIONAL_FAMILIES, operational_summary
from ragmeter.metrics.rag import doc_type_coverage
from ragmeter.metrics.rag_defaults import default_metrics
from ragmeter.metrics.records import RagBatch
from ragmeter.metrics.registry import ResolvedMetric, resolve_metric
from ragmeter.metrics.relevance import RelevanceTable
from ragmeter.metrics.scoring import ScoredMetric, score_metrics
from ragmeter.results import EvalResult
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.rag import IndexStats
from ragmeter.schema.samples import Sample

if TYPE_CHECKING:
    from ragmeter.judges import JudgeConfig
    from ragmeter.judges.answers import AnswerJudgements, JudgeObserver

DEFAULT_DATASET_METRICS = ("hit", "recall@k", "mrr", "ndcg")
DEFAULT_TREC_METRICS = ("map", "mrr", "ndcg", "precision", "recall@k", "r-precision")

DatasetLike = str | Path | Sequence[Sample | Mapping[str, Any]]
OutputsLike = str | Path | Mapping[str, Any] | None


def _resolve_all(names: Sequence[str]) -> list[ResolvedMetric]:
    resolved: list[ResolvedMetric] = []
    seen: set[str] = set()
    for name in names:
        metric = resolve_metric(name)
        if metric.name not in seen:
            seen.add(metric.name)
            resolved.append(metric)
    return resolved


def _check_k(k: int | None) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ConfigError(f"the cutoff k (-k / k=) must be a whole number >= 1, got {k!r}")


def _check_level(level: float | None) -> None:
    if level is not None and not level > 0:
        raise ConfigError(
            f"the relevance level (--relevance-level / relevance_level) must be > 0, got {level!r}"
        )


def _settings(
    config: RagmeterConfig | str | Path | None,
) -> tuple[RagmeterConfig, Path | None]:
    if isinstance(config, RagmeterConfig):
        return config, None
    return load_config(config)


def _assemble(
    query_ids: list[str],
    scored: list[ScoredMetric],
    *,
    warnings: list[str],
    provenance: dict[str, Any],
    n_missing_output: int = 0,
) -> EvalResult:
    per_query: dict[str, dict[str, float | None]] = {qid: {} for qid in query_ids}
    for metric in scored:
        values = metric.values.tolist()
        mask = metric.scored.tolist()
        for qid, value, ok in zip(query_ids, values, mask, strict=True):
            per_query[qid][metric.name] = value if ok else None
    provenance = {
        **provenance,
        "metrics": {
            m.name: {
                "requested": m.requested,
                "k": m.k,
                **({"aggregate": f"p{m.percentile:g}"} if m.percentile is not None else {}),
                **({"skip_reason": m.skip_reason} if m.n_skipped else {}),
                **({"skip_reasons": m.skip_reasons} if len(m.skip_reasons) > 1 else {}),
            }
            for m in scored
        },
    }
    return EvalResult(
        aggregate={m.name: m.value for m in scored},
        per_query=per_query,
        n_queries=len(query_ids),
        n_scored={m.name: m.n_scored for m in scored},
        n_skipped={m.name: m.n_skipped for m in scored},
        n_missing_output=n_missing_output,
        warnings=warnings,
        provenance=provenance,
    )


def _base_provenance(cfg_path: Path | None, **settings: Any) -> dict[str, Any]:
    return {
        "ragmeter_version": __version__,
        "python": platform.python_version(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "config_file": str(cfg_path) if cfg_path else None,
        "settings": settings,
    }


def _load_samples(dataset: DatasetLike) -> tuple[list[Sample], dict[str, Any]]:
    if isinstance(dataset, (str, Path)):
        path = Path(dataset)
        return load_dataset(path), {"dataset": {"path": str(path), "sha256": file_sha256(path)}}
    samples: list[Sample] = []
    seen: set[str] = set()
    for index, item in enumerate(dataset):
        sample = item if isinstance(item, Sample) else validate(Sample, item, where=f"dataset[{index}]")
        if sample.id in seen:
            raise InputError(f"duplicate sample id {sample.id!r}", where=f"dataset[{index}]")
        seen.add(sample.id)
        samples.append(sample)
    if not samples:
        raise InputError("the dataset has no samples", where="dataset")
    return samples, {"dataset": {"path": None, "n_samples": len(samples)}}


def _load_outputs(
    outputs: OutputsLike, samples: list[Sample]
) -> tuple[dict[str, SystemOutput], dict[str, Any], dict[str, str]]:
    """Outputs keyed by sample id, their provenance, and where each one was read."""
    if outputs is None:
        embedded = {
            s.id: parse_output(s.actual_output, where=f"sample {s.id!r}: actual_output")
            for s in samples
            if s.actual_output is not None
        }
        return embedded, {"outputs": {"embedded": True}}, {}
    if isinstance(outputs, (str, Path)):
        path = Path(outputs)
        loaded, sources = load_outputs_with_sources(path)
        known = {s.id for s in samples}
        for sid, where in sources.items():
            if sid not in known:
                raise InputError(f"output for unknown sample id {sid!r} (not in the dataset)", where=where)
        return loaded, {"outputs": {"path": str(path), "sha256": file_sha256(path)}}, sources
    known = {s.id for s in samples}
    parsed: dict[str, SystemOutput] = {}
    for sid, raw in outputs.items():
        if str(sid) not in known:
            raise InputError(f"output for unknown sample id {sid!r} (not in the dataset)", where="outputs")
        parsed[str(sid)] = parse_output(raw, where=f"outputs[{sid!r}]")
    return parsed, {"outputs": {"path": None}}, {}


_SAMPLE_WHERE = re.compile(r"^sample '(?P<id>.*)'$")


def _located(exc: RagmeterError, where_of: Mapping[str, str]) -> RagmeterError:
    """Point an error raised for ``sample 'X'`` at the file and line that sample's output came from."""
    match = _SAMPLE_WHERE.match(exc.where or "")
    if match and match.group("id") in where_of:
        exc.where = f"{where_of[match.group('id')]} ({exc.where})"
        exc.args = (f"{exc.where}: {exc.message}",)
    return exc


def _index_stats(
    index_stats: str | Path | IndexStats | None, cfg: RagmeterConfig, cfg_path: Path | None
) -> tuple[dict[str, Any] | None, dict[str, Any], list[str]]:
    """Index coverage, its provenance and warnings, from the argument or the config's ``index_stats``."""
    if index_stats is None and cfg.index_stats is not None:
        base = cfg_path.parent if cfg_path is not None else Path.cwd()
        index_stats = base / cfg.index_stats
    if index_stats is None:
        return None, {}, []
    warnings: list[str] = []
    source: dict[str, Any] = {"path": None}
    if isinstance(index_stats, IndexStats):
        stats = index_stats
    else:
        path = Path(index_stats)
        stats, warnings = load_index_stats(path)
        source = {"path": str(path), "sha256": file_sha256(path)}
    return index_coverage(stats), {"index": source | index_provenance(stats)}, warnings


def _rag_sections(
    scored: list[ScoredMetric],
    records: RagBatch,
    sample_k: np.ndarray[Any, np.dtype[np.int64]],
    default_k: int,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, dict[str, Any]]]:
    """Breakdowns (with doc types), the operational summary, and per-query details."""
    samples = records.samples
    split = breakdowns(scored, samples)
    hit = next((m for m in scored if m.requested.startswith("hit@")), None)
    if hit is not None and any(f is not None for f in records.facts):
        k = sample_k if isinstance(hit.k, str) else np.full(len(samples), hit.k, dtype=np.int64)
        k = np.where(k > 0, k, default_k)
        coverage = doc_type_coverage(records, k)
        if coverage:
            split["doc_type"] = {t: {hit.name: {"mean": s / n, "n": n}} for t, (s, n) in coverage.items()}
    operational: dict[str, Any] = {}
    if any(m.requested.split(".")[0] in OPERATIONAL_FAMILIES for m in scored):
        cost = next((m for m in scored if m.requested == "cost"), None)
        operational = operational_summary(records, cost.values[cost.scored].tolist() if cost else None)
    details: dict[str, dict[str, Any]] = {}
    per_sample = [m for m in scored if m.reasons is not None]
    if not split and not per_sample:
        return split, operational, details
    for q, sample in enumerate(samples):
        line = sample_dimensions(sample, answerable="answerable" in split)
        unscored = {m.name: m.reason_of(q) for m in per_sample if not m.scored[q]}
        if unscored:
            line["unscored"] = unscored
        if line:
            details[sample.id] = line
    return split, operational, details


RETRIEVED_SHOWN = 20
"""How many ranked items of each query ``per_query.jsonl`` shows (with their match marks)."""
TEXT_SHOWN = 300
OUTPUT_SUMMARY_FIELDS = ("answer", "abstained", "references", "error", "timed_out", "latency")


def _query_views(
    samples: Sequence[Sample], outputs: Mapping[str, SystemOutput], table: RelevanceTable
) -> dict[str, dict[str, Any]]:
    """Per query: its input, the output's answer fields, and the top ranked items with their gains."""
    views: dict[str, dict[str, Any]] = {}
    for q, sample in enumerate(samples):
        view: dict[str, Any] = {}
        if sample.input is not None:
            view["input"] = sample.input
        output = outputs.get(sample.id)
        if output is not None:
            dumped = output.model_dump(mode="json", exclude_none=True)
            summary = {key: dumped[key] for key in OUTPUT_SUMMARY_FIELDS if key in dumped}
            if summary:
                view["output"] = summary
            items = output.retrieved
            repeats = repeated_positions(sample.id, items, [])
            gains = table.gains[table.offsets[q] : table.offsets[q + 1]].tolist()
            shown = []
            for rank, item in enumerate(items[:RETRIEVED_SHOWN], start=1):
                entry = item.model_dump(
                    mode="json", exclude_none=True, include={"id", "rel_path", "heading_path"}
                )
                entry["rank"] = rank
                if item.text is not None:
                    entry["text"] = item.text[:TEXT_SHOWN]
                if len(gains) == len(items):
                    entry["gain"] = gains[rank - 1]
                if rank - 1 in repeats:
                    entry["repeat"] = True
                shown.append(entry)
            view["retrieved"] = shown
        if view:
            views[sample.id] = view
    return views


def evaluate(
    dataset: DatasetLike,
    outputs: OutputsLike = None,
    *,
    metrics: Sequence[str] | None = None,
    k: int | None = None,
    relevance_level: float | None = None,
    config: RagmeterConfig | str | Path | None = None,
    trec_compat: bool = False,
    snippet_matching: bool | None = None,
    index_stats: str | Path | IndexStats | None = None,
    judge: JudgeConfig | Mapping[str, Any] | str | Path | bool | None = None,
    judges: Sequence[str] | None = None,
    judge_log: str | Path | None = None,
    max_cost: float | None = None,
    reliability: bool | None = None,
    judge_observer: JudgeObserver | None = None,
) -> EvalResult:
    """Score recorded outputs against a dataset.

    ``dataset`` is a file (YAML/JSON/JSONL) or a list of samples; ``outputs`` a
    file, a mapping of sample id → output, or ``None`` for outputs embedded as
    ``actual_output``. Samples with no output are scored as empty rankings,
    counted in ``n_missing_output`` and named in the warnings.

    Samples with ``gold_supports`` (and no ``expected_output``) are matched by
    anchors; ``snippet_matching`` (default: the config's
    ``metrics.rag.snippet_matching``, on) makes listed snippets required.
    ``index_stats`` (or the config's ``index_stats``) adds the index coverage.
    See docs/rag.md.

    LLM judges (docs/judges.md): ``judge`` is a judge config (``JudgeConfig``,
    mapping, or a file with a ``judge:`` block; default: the config file's
    ``judge:`` block; ``False``: no judging). With one, the answer-quality
    metrics ``groundedness``, ``correctness``, ``factual_match`` and
    ``fuzzy_match`` join the default metrics (``judges`` picks which judges;
    with named ``metrics`` the judge metrics named decide), and the abstention
    metrics use the abstention judge for outputs without ``abstained``.
    ``judge_log`` is the resumable judge log (JSON Lines); ``max_cost`` (USD)
    overrides ``judge.max_cost_usd``; ``reliability`` runs the spot-check
    (default: when ``judge.reliability`` is configured); ``judge_observer``
    hears the cost estimate and the progress.
    """
    _check_k(k)
    _check_level(relevance_level)
    cfg, cfg_path = _settings(config)
    started = time.perf_counter()
    samples, sources = _load_samples(dataset)
    outs, out_sources, where_of = _load_outputs(outputs, samples)
    try:
        return _evaluate_loaded(
            samples,
            outs,
            inputs=sources | out_sources,
            cfg=cfg,
            cfg_path=cfg_path,
            metrics=metrics,
            k=k,
            relevance_level=relevance_level,
            trec_compat=trec_compat,
            snippet_matching=snippet_matching,
            index_stats=index_stats,
            started=started,
            judging=_JudgeArgs(judge, judges, judge_log, max_cost, reliability, judge_observer),
        )
    except RagmeterError as exc:
        raise _located(exc, where_of) from None


def _evaluate_loaded(
    samples: list[Sample],
    outs: dict[str, SystemOutput],
    *,
    inputs: dict[str, Any],
    cfg: RagmeterConfig,
    cfg_path: Path | None,
    metrics: Sequence[str] | None,
    k: int | None,
    relevance_level: float | None,
    trec_compat: bool,
    snippet_matching: bool | None,
    index_stats: str | Path | IndexStats | None,
    started: float,
    judging: _JudgeArgs | None = None,
) -> EvalResult:
    judging = judging or _JudgeArgs()
    matched = match_ids(samples, outs)
    snippets = cfg.metrics.rag.snippet_matching if snippet_matching is None else snippet_matching
    anchors = match_anchors(samples, outs, snippet_matching=snippets)
    table, item_table = merged_tables(samples, matched.table, anchors)
    records = RagBatch(samples, [outs.get(s.id) for s in samples], anchors.facts, cfg.pricing)
    level = relevance_level if relevance_level is not None else cfg.metrics.retrieval.relevance_level
    names = list(metrics or cfg.metrics.retrieval.metrics or [])
    named = bool(names)
    judge_cfg = _judge_config(judging, cfg, cfg_path)
    if not names:
        by_ids = any(not s.has_anchors() and s.expected_output is not None for s in samples)
        rag_names = default_metrics(records)
        names = [*(DEFAULT_DATASET_METRICS if by_ids or not rag_names else ()), *rag_names]
    if not named and judge_cfg is not None:
        from ragmeter.judges.eval_plan import default_judge_metrics

        names = [*names, *default_judge_metrics(judging.judges)]
    if metrics is None and any(matched.answers):
        names = [*names, "containment"]
    resolved = _resolve_all(names)
    default_k = k if k is not None else cfg.metrics.retrieval.default_k
    sample_k = np.array([s.metadata.k or 0 for s in samples], dtype=np.int64)
    judged = _judge(judging, judge_cfg, resolved, records, np.where(sample_k > 0, sample_k, default_k))
    inp = ScoringInput.from_table(
        table,
        relevance_level=level,
        texts=matched.texts,
        answers=matched.answers,
        item_table=item_table,
        records=records,
        judged=judged.values if judged is not None else None,
    )
    scored = score_metrics(resolved, inp, default_k=default_k, sample_k=sample_k, trec_compat=trec_compat)
    coverage, index_sources, index_warnings = _index_stats(index_stats, cfg, cfg_path)
    split, operational, details = _rag_sections(scored, records, sample_k, default_k)
    for qid, view in _query_views(samples, outs, item_table or table).items():
        details[qid] = view | details.get(qid, {})
    warnings = [*matched.warnings, *anchors.warnings, *index_warnings]
    if judged is not None:
        warnings.extend(judged.warnings)
        for qid, line in judged.details.items():
            details[qid] = details.get(qid, {}) | line
    if any(m.definition.family == "recency_rule_pass" for m in resolved) and any(
        s.recency_conflict_rule == "acknowledge_both" for s in samples
    ):
        warnings.append(
            "recency_rule_pass checks only the references of acknowledge_both samples; whether the "
            "answer acknowledges the conflict needs a judge"
        )
    if matched.missing_output:
        shown = ", ".join(repr(s) for s in matched.missing_output[:10])
        more = f" and {len(matched.missing_output) - 10} more" if len(matched.missing_output) > 10 else ""
        warnings.insert(
            0,
            f"{len(matched.missing_output)} sample(s) have no recorded output and were scored as empty "
            f"rankings: {shown}{more}",
        )
    provenance = _base_provenance(
        cfg_path,
        k=k,
        default_k=default_k,
        relevance_level=level,
        trec_compat=trec_compat,
        snippet_matching=snippets,
        **({"pricing": {m: p.model_dump() for m, p in cfg.pricing.items()}} if cfg.pricing else {}),
    ) | {
        "inputs": inputs | index_sources,
        "elapsed_seconds": round(time.perf_counter() - started, 6),
    }
    if judged is not None:
        provenance["judge"] = judged.provenance
    result = _assemble(
        [s.id for s in samples],
        scored,
        warnings=warnings,
        provenance=provenance,
        n_missing_output=len(matched.missing_output),
    )
    return result.model_copy(
        update={
            "breakdowns": split,
            "operational": operational,
            "index_coverage": coverage,
            "query_details": details,
            "judge_reliability": judged.reliability if judged is not None else {},
        }
    )


@dataclass(frozen=True)
class _JudgeArgs:
    """The judge arguments of :func:`evaluate`, carried as one value."""

    judge: JudgeConfig | Mapping[str, Any] | str | Path | bool | None = None
    judges: Sequence[str] | None = None
    log: str | Path | None = None
    max_cost: float | None = None
    reliability: bool | None = None
    observer: JudgeObserver | None = None


def _judge_config(judging: _JudgeArgs, cfg: RagmeterConfig, cfg_path: Path | None) -> JudgeConfig | None:
    """The judge config from the argument, else the config file's ``judge:`` block (``None``: no judge)."""
    block = cfg.judge
    if judging.judge is None and block is None and judging.max_cost is None:
        return None  # the common case: no judge anywhere, nothing to import
    from ragmeter.judges.eval_plan import load_eval_judge_config

    return load_eval_judge_config(
        judging.judge, config_block=block, config_path=cfg_path, max_cost=judging.max_cost
    )


def _judge(
    judging: _JudgeArgs,
    judge_cfg: JudgeConfig | None,
    resolved: Sequence[ResolvedMetric],
    records: RagBatch,
    sample_k: np.ndarray[Any, np.dtype[np.int64]],
) -> AnswerJudgements | None:
    """Run the judges the resolved metrics need (none: ``None``)."""
    families = [m.definition.family for m in resolved]
    needs_judge = any(m.definition.needs == "judge" for m in resolved)
    if judge_cfg is None and judging.judges is None and not needs_judge:
        return None
    from ragmeter.judges.answers import judge_answers
    from ragmeter.judges.eval_plan import plan_judging

    plan = plan_judging(families, judges=judging.judges, configured=judge_cfg is not None)
    if not plan.needs_llm and not plan.fuzzy:
        return None
    return judge_answers(
        records.samples,
        records.outputs,
        plan=plan,
        config=judge_cfg,
        sample_k=[int(k) for k in sample_k],
        log_path=Path(judging.log) if judging.log is not None else None,
        reliability=judging.reliability,
        observer=judging.observer,
    )


def evaluate_trec(
    qrels: str | Path,
    run: str | Path,
    *,
    metrics: Sequence[str] | None = None,
    k: int | None = None,
    relevance_level: float | None = None,
    complete: bool = False,
    trec_compat: bool = False,
    config: RagmeterConfig | str | Path | None = None,
) -> EvalResult:
    """Score a TREC run against TREC qrels (trec_eval 10.0 ordering).

    ``complete`` is trec_eval's ``-c`` (qrels topics missing from the run count
    as 0); ``trec_compat`` averages topics without relevant documents in as 0,
    as trec_eval does, instead of skipping them.
    """
    _check_k(k)
    _check_level(relevance_level)
    cfg, cfg_path = _settings(config)
    started = time.perf_counter()
    resolved = _resolve_all(metrics or cfg.metrics.retrieval.metrics or list(DEFAULT_TREC_METRICS))
    hash_in_background((qrels, run))  # for the provenance, on another core (the CLI started it earlier)
    q = read_qrels(qrels)
    r = read_run(run, qrels=q)
    matched = match_trec(q, r, complete=complete)
    level = relevance_level if relevance_level is not None else cfg.metrics.retrieval.relevance_level
    inp = ScoringInput.from_table(matched.table, relevance_level=level)
    default_k = k if k is not None else cfg.metrics.retrieval.default_k
    scored = score_metrics(resolved, inp, default_k=default_k, trec_compat=trec_compat)
    provenance = _base_provenance(
        cfg_path, k=k, default_k=default_k, relevance_level=level, complete=complete, trec_compat=trec_compat
    ) | {
        "inputs": {
            "qrels": {"path": str(qrels), "sha256": file_sha256(qrels)},
            "run": {"path": str(run), "sha256": file_sha256(run)},
        },
        "elapsed_seconds": round(time.perf_counter() - started, 6),
    }
    return _assemble(
        matched.table.query_ids,
        scored,
        warnings=matched.warnings,
        provenance=provenance,
        n_missing_output=len(matched.missing_topics) if complete else 0,
    )
