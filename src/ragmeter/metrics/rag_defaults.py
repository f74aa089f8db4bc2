"""The default metric set of a run with whole-RAG or operational data.

Ranking metrics over anchors when samples have gold supports; each whole-RAG
and operational metric when its inputs are present in the data. Abstention
accuracy is listed whenever the dataset has unanswerable questions, so that
missing ``abstained`` fields show up as unscored (with the reason) instead of
vanishing.

>>> from ragmeter.schema import Sample, SystemOutput
>>> s = Sample.model_validate({"id": "q", "gold_supports": [{"rel_path": "a.md"}]})
>>> default_metrics(RagBatch([s], [SystemOutput.from_raw({"answer": "x", "latency": 0.3})], [None]))
['recall_any', 'mrr', 'precision', 'error_rate', 'empty_response_rate', 'latency_p50', 'latency_p95']
"""

from __future__ import annotations

from ragmeter.metrics.operational import stages_in
from ragmeter.metrics.records import RagBatch

ANCHOR_RANKING = ("recall_any", "mrr", "precision")


def default_metrics(batch: RagBatch) -> list[str]:
    """Metric names to compute when the caller names none (ranking defaults for ids come from the API)."""
    samples = batch.samples
    anchored = any(s.has_anchors() for s in samples)
    supported = any(s.answerable and s.supports() for s in samples)
    names: list[str] = []
    if anchored:
        names += ANCHOR_RANKING[:1]
        if any(s.required_support_groups for s in samples):
            names.append("recall_all")
        names += ANCHOR_RANKING[1:]
    if supported and batch.any_output(lambda o: o.folder_mode in ("on", "on_with_fallback")):
        names.append("scope_miss_rate")
    cites = batch.any_output(lambda o: o.references is not None)
    if supported and cites:
        names.append("attribution_hit_rate")
    if cites and any(s.recency_conflict_rule for s in samples):
        names.append("recency_rule_pass")
    if any(not s.answerable for s in samples):
        names += ["abstention_accuracy", "hallucination_rate_unanswerable"]
    if any(s.answerable for s in samples) and batch.any_output(lambda o: o.abstained is not None):
        names.append("false_abstention_rate")
    if anchored or batch.any_output(lambda o: o.error is not None or o.timed_out is not None):
        names.append("error_rate")
    if batch.any_output(lambda o: o.timed_out is not None):
        names.append("timeout_rate")
    if batch.any_output(lambda o: o.has_field("answer")):
        names.append("empty_response_rate")
    if batch.any_output(lambda o: o.latency is not None):
        names += ["latency_p50", "latency_p95"]
    for stage in stages_in(batch):
        names += [f"latency_p50.{stage}", f"latency_p95.{stage}"]
    if batch.any_output(lambda o: o.tokens is not None and o.tokens.prompt is not None):
        names.append("tokens_prompt")
    if batch.any_output(lambda o: o.tokens is not None and o.tokens.completion is not None):
        names.append("tokens_completion")
    if batch.pricing and batch.any_output(
        lambda o: o.tokens is not None and o.tokens.prompt is not None and o.tokens.completion is not None
    ):
        names.append("cost")
    return names
