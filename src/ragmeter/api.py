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

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ragmeter.config import RagmeterConfig
from ragmeter.errors import RagmeterError
from ragmeter.evaluation.arguments import (
    DEFAULT_DATASET_METRICS,
    check_k,
    check_level,
    check_limit,
    k_source_of,
    limit_warning,
    load_settings,
    resolve_metrics,
)
from ragmeter.evaluation.assemble import assemble_result, base_provenance
from ragmeter.evaluation.dataset_inputs import (
    DatasetLike,
    OutputsLike,
    index_stats_coverage,
    load_outputs,
    load_samples,
    located,
)
from ragmeter.evaluation.query_details import query_views, rag_sections
from ragmeter.evaluation.trec import trec_result_fields
from ragmeter.matching.anchors import match_anchors, merged_tables
from ragmeter.matching.ids import match_ids
from ragmeter.metrics.inputs import ScoringInput
from ragmeter.metrics.rag_defaults import default_metrics
from ragmeter.metrics.records import RagBatch
from ragmeter.metrics.registry import ResolvedMetric
from ragmeter.metrics.scoring import score_metrics
from ragmeter.results import EvalResult
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.rag import IndexStats
from ragmeter.schema.samples import Sample

if TYPE_CHECKING:
    from ragmeter.judges import JudgeConfig
    from ragmeter.judges.answers import AnswerJudgements, JudgeObserver
    from ragmeter.judges.bertscore_answers import CoverageJudgements


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
    columns: Mapping[str, str] | None = None,
    split: str | None = None,
    limit: int | None = None,
) -> EvalResult:
    """Score recorded outputs against a dataset.

    ``dataset`` is a file (YAML/JSON/JSONL/CSV/parquet: ragmeter samples, RAGAS
    rows or DeepEval test cases), a BEIR folder, a saved Hugging Face dataset,
    ``irds:<id>``, a list of samples or rows, a DataFrame, a ``datasets.Dataset``,
    or a RAGAS/DeepEval ``EvaluationDataset`` (docs/formats.md); ``columns``
    maps fields to other column names and ``split`` picks a split. ``outputs`` is
    a file, a mapping of sample id → output (or a ranx/pytrec_eval run
    ``{qid: {docid: score}}``, a ranx ``Run``), or ``None`` for outputs embedded
    as ``actual_output`` (RAGAS and DeepEval rows embed theirs). Samples with no
    output are scored as empty rankings, counted in ``n_missing_output`` and
    named in the warnings. ``limit`` scores only the first ``limit`` samples.

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
    check_k(k)
    check_level(relevance_level)
    check_limit(limit)
    cfg, cfg_path = load_settings(config)
    started = time.perf_counter()
    samples, sources = load_samples(dataset, columns=columns, split=split)
    dataset_where = sources["dataset"]["path"] or "dataset"
    outs, out_sources, where_of = load_outputs(outputs, samples, dataset_where=dataset_where)
    limited = None
    if limit is not None and limit < len(samples):
        limited, samples = (limit, len(samples)), samples[:limit]
        outs = {sid: out for sid, out in outs.items() if sid in {s.id for s in samples}}
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
            extra_settings={"limit": limit} if limit is not None else {},
            limited=limited,
        )
    except RagmeterError as exc:
        raise located(exc, where_of) from None


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
    extra_settings: Mapping[str, Any] | None = None,
    limited: tuple[int, int] | None = None,
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
    if metrics is None and _answers_and_texts(matched.answers, matched.texts):
        names = [*names, "containment"]
    resolved = resolve_metrics(names)
    default_k = k if k is not None else cfg.metrics.retrieval.default_k
    sample_k = np.array([s.metadata.k or 0 for s in samples], dtype=np.int64)
    judged = _judge(judging, judge_cfg, resolved, records, np.where(sample_k > 0, sample_k, default_k))
    covered = _bertscore(judging, judge_cfg, cfg, cfg_path, resolved, records)
    verdicts = {**(judged.values if judged is not None else {}), **(covered.values if covered else {})}
    inp = ScoringInput.from_table(
        table,
        relevance_level=level,
        texts=matched.texts,
        answers=matched.answers,
        item_table=item_table,
        records=records,
        judged=verdicts or None,
    )
    scored = score_metrics(
        resolved,
        inp,
        default_k=default_k,
        sample_k=sample_k,
        trec_compat=trec_compat,
        k_source=k_source_of(k, cfg),
    )
    coverage, index_sources, index_warnings = index_stats_coverage(index_stats, cfg, cfg_path)
    split, operational, details = rag_sections(scored, records, sample_k, default_k)
    own = {  # ragmeter's own time, apart from the system's latency and timings
        "judging": (judged.provenance.get("usage") or {}).get("seconds") if judged is not None else None,
        "bertscore": covered.provenance["seconds"] if covered is not None else None,
    }
    if any(v is not None for v in own.values()):
        operational = {**operational, "ragmeter_seconds": {k: v for k, v in own.items() if v is not None}}
    for qid, view in query_views(samples, outs, item_table or table).items():
        details[qid] = view | details.get(qid, {})
    warnings = [*matched.warnings, *anchors.warnings, *index_warnings]
    if judged is not None:
        warnings.extend(judged.warnings)
        for qid, line in judged.details.items():
            details[qid] = details.get(qid, {}) | line
    for qid, line in (covered.details if covered is not None else {}).items():
        details[qid] = details.get(qid, {}) | line
    acknowledge = sum(s.recency_conflict_rule == "acknowledge_both" for s in samples)
    if (
        acknowledge
        and judge_cfg is None
        and any(m.definition.family == "recency_rule_pass" for m in resolved)
    ):
        warnings.append(
            f"recency_rule_pass: {acknowledge} acknowledge_both question(s) unscored: whether the answer "
            "acknowledges the conflict needs an LLM judge (add a judge: block, docs/judges.md)"
        )
    if matched.missing_output:
        shown = ", ".join(repr(s) for s in matched.missing_output[:10])
        more = f" and {len(matched.missing_output) - 10} more" if len(matched.missing_output) > 10 else ""
        warnings.insert(
            0,
            f"{len(matched.missing_output)} sample(s) have no recorded output and were scored as empty "
            f"rankings: {shown}{more}",
        )
    if limited is not None:
        warnings.insert(0, limit_warning(*limited))
    provenance = base_provenance(
        cfg_path,
        k=k,
        default_k=default_k,
        relevance_level=level,
        trec_compat=trec_compat,
        snippet_matching=snippets,
        **({"pricing": {m: p.model_dump() for m, p in cfg.pricing.items()}} if cfg.pricing else {}),
        **(extra_settings or {}),
    ) | {
        "inputs": inputs | index_sources,
        "elapsed_seconds": round(time.perf_counter() - started, 6),
        **({"limited": {"first": limited[0], "of": limited[1]}} if limited else {}),
    }
    if judged is not None:
        provenance["judge"] = judged.provenance
    if covered is not None:
        provenance["bertscore"] = covered.provenance
    result = assemble_result(
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


def _answers_and_texts(answers: Sequence[Sequence[str]], texts: Sequence[Sequence[str | None]]) -> bool:
    """Whether the default metrics include containment.

    They do when some sample has an expected answer and the outputs carry texts: some item ranked
    for such a sample has one. Ids-only outputs are scored without it; outputs with some texts
    missing get the error (as does a user who asks for containment without the texts).

    >>> _answers_and_texts([["30 days"], []], [["refunds within 30 days"], [None]])
    True
    >>> _answers_and_texts([["30 days"]], [[None, "refunds within 30 days"]])
    True
    >>> _answers_and_texts([["30 days"]], [[None, None]]), _answers_and_texts([[]], [["a"]])
    (False, False)
    """
    wanted = [items for answer, items in zip(answers, texts, strict=True) if answer]
    return any(text is not None for items in wanted for text in items)


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


def _bertscore(
    judging: _JudgeArgs,
    judge_cfg: JudgeConfig | None,
    cfg: RagmeterConfig,
    cfg_path: Path | None,
    resolved: Sequence[ResolvedMetric],
    records: RagBatch,
) -> CoverageJudgements | None:
    """BERTScore coverage of the answers when a ``bertscore_*`` metric is asked for (``judge.bertscore``)."""
    if not any(m.definition.family in ("bertscore_coverage", "bertscore_pass") for m in resolved):
        return None
    from ragmeter.judges.bertscore_answers import score_coverage
    from ragmeter.judges.config import load_bertscore_config

    if judge_cfg is not None:
        settings = judge_cfg.bertscore
    elif judging.judge is not None and not isinstance(judging.judge, bool):
        settings = load_bertscore_config(judging.judge)
    else:  # the config's block, also with --no-judge: BERTScore is not an LLM judge
        settings = load_bertscore_config(cfg.judge, where=f"{cfg_path}: judge" if cfg_path else "judge")
    observer = judging.observer
    return score_coverage(
        records.samples,
        records.outputs,
        config=settings,
        progress=observer.progress if observer is not None else None,
    )


def evaluate_trec(
    qrels: Any,
    run: Any,
    *,
    metrics: Sequence[str] | None = None,
    k: int | None = None,
    relevance_level: float | None = None,
    complete: bool = False,
    trec_compat: bool = False,
    config: RagmeterConfig | str | Path | None = None,
    columns: Mapping[str, str] | None = None,
    split: str | None = None,
    limit: int | None = None,
) -> EvalResult:
    """Score a run against qrels (trec_eval 10.0 ordering).

    ``qrels`` and ``run`` are TREC files or any other source of
    :data:`ragmeter.io.table_readers.TABLE_READERS`: ranx/pytrec_eval dicts and
    JSON files, ranx ``Run``/``Qrels``, ir_measures tuples, pandas/polars
    DataFrames, Arrow tables, Hugging Face datasets, CSV/TSV/parquet files, BEIR
    folders (``split``, default ``test``), ``irds:<id>`` and ``-`` (stdin).
    ``columns`` maps the fields ``q_id``, ``doc_id``, ``score``, ``rel`` to
    other column names. A run is ranked as trec_eval ranks it, whatever its form.

    ``complete`` is trec_eval's ``-c`` (qrels topics missing from the run count
    as 0); ``trec_compat`` averages topics without relevant documents in as 0,
    as trec_eval does, instead of skipping them, and truncates a fractional
    relevance as trec_eval reads it (otherwise an error). ``limit`` evaluates only the
    first ``limit`` topics of the qrels (a quick look, said so in the warnings).

    >>> r = evaluate_trec({"q1": {"d1": 1}}, {"q1": {"d2": 0.9, "d1": 0.9}}, metrics=["mrr"])
    >>> r.aggregate  # the tie is broken by docno, descending: d2 first
    {'mrr': 0.5}
    """
    fields = trec_result_fields(
        qrels,
        run,
        metrics=metrics,
        k=k,
        relevance_level=relevance_level,
        complete=complete,
        trec_compat=trec_compat,
        config=config,
        columns=columns,
        split=split,
        limit=limit,
    )
    return EvalResult(**fields)
