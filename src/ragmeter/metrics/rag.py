"""Whole-RAG metrics: one small pure function per metric over matched anchor facts.

Anchor matching (:mod:`ragmeter.matching.anchors`) turns every sample into
:class:`~ragmeter.metrics.records.AnchorFacts`: the first rank at which each gold support and each
required group was found, which supports each reference cites, whether the
selected folders hold a gold support. The kernels here only count.

Each kernel returns :class:`~ragmeter.metrics.inputs.SampleScores`: a value per
query, which queries were scored, and why the others were not. A metric whose
input is missing from an output raises :class:`~ragmeter.errors.MissingFieldError`
naming the sample and the field, never a silent 0.

>>> doc_type("notes/plan.md")
'markdown'
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ragmeter.errors import MissingFieldError
from ragmeter.metrics.inputs import SampleScores, ScoringInput
from ragmeter.metrics.names import MetricName
from ragmeter.metrics.records import AnchorFacts, RagBatch
from ragmeter.metrics.relevance import Int64Array

ABSTAINED_MISSING = "no 'abstained' field (judge fallback not configured)"
ACKNOWLEDGES_CONFLICT = "acknowledges_conflict"
"""The conflict judge's verdicts (1 = the answer acknowledges the conflict), made before scoring."""
ACKNOWLEDGE_NEEDS_JUDGE = (
    "acknowledge_both: whether the answer acknowledges the conflict needs an LLM judge (judge: block)"
)
NO_OUTPUT = "no recorded output"
CALL_FAILED = "no answer: the call failed"
"""A failed call (``error`` / ``timed_out``) neither answered nor abstained (the judges say the same)."""
UNANSWERABLE = "unanswerable question"
ANSWERABLE = "answerable question"

DOC_TYPES: dict[str, str] = {
    **dict.fromkeys((".md", ".markdown", ".mdx", ".mdown", ".mkd"), "markdown"),
    ".pdf": "pdf",
    **dict.fromkeys(
        (
            ".py", ".ipynb", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt",
            ".kts", ".scala", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".cs", ".rb", ".php",
            ".swift", ".m", ".mm", ".sh", ".bash", ".zsh", ".ps1", ".sql", ".r", ".lua", ".pl", ".hs",
            ".ex", ".exs", ".erl", ".clj", ".dart", ".jl", ".vue", ".svelte",
        ),
        "code",
    ),
}  # fmt: skip


def doc_type(rel_path: str) -> str:
    """``markdown``, ``pdf``, ``code`` or ``other``, from the file extension (case-insensitive).

    >>> doc_type("notes/Plan.MD"), doc_type("a/b.pdf"), doc_type("src/x.py"), doc_type("Makefile")
    ('markdown', 'pdf', 'code', 'other')
    """
    name = rel_path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return DOC_TYPES.get(name[dot:].lower(), "other") if dot > 0 else "other"


class ScoreBuilder:
    """Collect per-query values and skip reasons, then freeze them into :class:`SampleScores`."""

    def __init__(self, n: int) -> None:
        self.values = np.zeros(n, dtype=np.float64)
        self.scored = np.zeros(n, dtype=bool)
        self.reasons = [""] * n

    def set(self, q: int, value: float | bool) -> None:
        """Score query ``q``."""
        self.values[q] = float(value)
        self.scored[q] = True

    def skip(self, q: int, reason: str) -> None:
        """Leave query ``q`` unscored, saying why."""
        self.reasons[q] = reason

    def done(self) -> SampleScores:
        """The collected scores."""
        return SampleScores(self.values, self.scored, self.reasons)


def batch_of(inp: ScoringInput, metric: MetricName) -> RagBatch:
    """The records of ``inp``; a metric that needs them on a run without them is an error."""
    if inp.records is None:
        raise MissingFieldError(f"metric {metric} needs recorded outputs of a dataset (not a TREC run)")
    return inp.records


def needs_field(metric: MetricName, name: str, sample_id: str) -> MissingFieldError:
    """The error for a sample whose output lacks a field the metric needs."""
    return MissingFieldError(f"metric {metric} needs {name!r} in the output", where=f"sample {sample_id!r}")


def _k_at(k: Int64Array | None, q: int) -> int | None:
    return None if k is None else int(k[q])


def recall_all(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1 when every required support group has a matching chunk in the top k, else 0.

    Scored only for answerable samples with ``required_support_groups``.
    """
    batch = batch_of(inp, metric)
    out = ScoreBuilder(len(batch.samples))
    for q, (sample, facts) in enumerate(zip(batch.samples, batch.facts, strict=True)):
        if not sample.required_support_groups or facts is None:
            out.skip(q, "no required_support_groups")
        elif not sample.answerable:
            out.skip(q, UNANSWERABLE)
        else:
            out.set(q, facts.all_groups(_k_at(k, q)))
    return out.done()


def scope_miss(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1 when folder selection (``folder_mode`` on / on_with_fallback) excluded every gold support."""
    batch = batch_of(inp, metric)
    if not batch.any_output(lambda o: o.folder_mode is not None):
        raise MissingFieldError(f"metric {metric} needs 'folder_mode' in the outputs; none of them has it")
    out = ScoreBuilder(len(batch.samples))
    for q, (sample, output, facts) in enumerate(zip(batch.samples, batch.outputs, batch.facts, strict=True)):
        if not sample.answerable:
            out.skip(q, UNANSWERABLE)
        elif facts is None or not facts.support_paths:
            out.skip(q, "no gold supports")
        elif output is None:
            out.skip(q, NO_OUTPUT)
        elif output.folder_mode is None:
            out.skip(q, "no 'folder_mode' in the output")
        elif output.folder_mode == "off":
            out.skip(q, "folder selection off")
        elif facts.in_scope is None:
            if not output.failed():
                raise needs_field(metric, "selected_folders", sample.id)
            out.skip(q, "the call failed and recorded no 'selected_folders'")
        else:
            out.set(q, not facts.in_scope)
    return out.done()


def attribution_hit(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1 when a cited reference matches a gold support (answerable samples only), else 0."""
    batch = batch_of(inp, metric)
    out = ScoreBuilder(len(batch.samples))
    for q, (sample, facts) in enumerate(zip(batch.samples, batch.facts, strict=True)):
        if not sample.answerable:
            out.skip(q, UNANSWERABLE)
        elif facts is None or not facts.support_paths:
            out.skip(q, "no gold supports")
        elif facts.reference_hits is None:
            raise needs_field(metric, "references", sample.id)
        else:
            out.set(q, facts.cited())
    return out.done()


def recency_pass(facts: AnchorFacts, rule: str) -> bool:
    """Whether the references satisfy a recency/conflict rule.

    ``cite_newer``: some reference matches a newer support and none matches an
    older support without also matching a newer one. ``cite_both`` and
    ``acknowledge_both``: some reference matches a newer support and some
    reference matches an older one (the "acknowledge" part is the judge's, see
    :func:`recency_rule`).

    >>> f = AnchorFacts(("old.md", "new.md"), (False, True), (0, 0), (), (frozenset({1}), frozenset({0})), None)
    >>> recency_pass(f, "cite_newer"), recency_pass(f, "cite_both")
    (False, True)
    """
    newer = {i for i, is_new in enumerate(facts.support_newer) if is_new}
    refs = facts.reference_hits or ()
    cites_newer = any(hits & newer for hits in refs)
    cites_older = any(hits - newer for hits in refs)
    if rule == "cite_newer":
        only_older = any(hits and not hits & newer for hits in refs)
        return cites_newer and not only_older
    return cites_newer and cites_older


def recency_rule(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """1 when the answer follows the sample's ``recency_conflict_rule``, else 0.

    ``cite_newer`` and ``cite_both`` are checked on the references. ``acknowledge_both`` also
    needs the conflict judge's verdict (:data:`ACKNOWLEDGES_CONFLICT`): without a judge the
    question is unscored with that reason; with one, it passes when the references cite both
    sides and the judge found the conflict acknowledged.
    """
    batch = batch_of(inp, metric)
    verdicts = (inp.judged or {}).get(ACKNOWLEDGES_CONFLICT)
    out = ScoreBuilder(len(batch.samples))
    for q, (sample, facts) in enumerate(zip(batch.samples, batch.facts, strict=True)):
        rule = sample.recency_conflict_rule
        if rule is None or facts is None:
            out.skip(q, "no recency_conflict_rule")
        elif facts.reference_hits is None:
            raise needs_field(metric, "references", sample.id)
        elif rule != "acknowledge_both":
            out.set(q, recency_pass(facts, rule))
        elif verdicts is None:
            out.skip(q, ACKNOWLEDGE_NEEDS_JUDGE)
        elif not recency_pass(facts, rule):
            out.set(q, False)  # the references miss a side: fails whatever the answer says
        elif verdicts[q].value is None:
            out.skip(q, verdicts[q].reason or "not judged")
        else:
            out.set(q, verdicts[q].value == 1.0)
    return out.done()


def _abstention(
    inp: ScoringInput, metric: MetricName, *, answerable: bool, value: Callable[[bool], bool]
) -> SampleScores:
    batch = batch_of(inp, metric)
    out = ScoreBuilder(len(batch.samples))
    for q, (sample, output) in enumerate(zip(batch.samples, batch.outputs, strict=True)):
        if sample.answerable != answerable:
            out.skip(q, ANSWERABLE if sample.answerable else UNANSWERABLE)
        elif output is None:
            out.skip(q, NO_OUTPUT)
        elif output.failed():  # a failed call neither answered nor abstained, whatever it recorded
            out.skip(q, CALL_FAILED)
        elif output.abstained is None:
            out.skip(q, ABSTAINED_MISSING)
        else:
            out.set(q, value(output.abstained))
    return out.done()


def abstention_accuracy(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """Unanswerable samples: 1 when the system abstained, else 0."""
    return _abstention(inp, metric, answerable=False, value=lambda abstained: abstained)


def hallucination_unanswerable(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """Unanswerable samples: 1 when the system answered instead of abstaining, else 0."""
    return _abstention(inp, metric, answerable=False, value=lambda abstained: not abstained)


def false_abstention(inp: ScoringInput, k: Int64Array | None, metric: MetricName) -> SampleScores:
    """Answerable samples: 1 when the system abstained, else 0."""
    return _abstention(inp, metric, answerable=True, value=lambda abstained: abstained)


def doc_type_coverage(batch: RagBatch, k: Int64Array | None) -> dict[str, tuple[float, int]]:
    """recall_any@k per document type of the gold supports: type → (sum of hits, samples).

    A sample counts once for each type among its gold supports, as a hit when a
    gold support *of that type* was matched in its top k. Unanswerable samples
    and samples without anchors are left out.
    """
    totals: dict[str, tuple[float, int]] = {}
    for q, (sample, facts) in enumerate(zip(batch.samples, batch.facts, strict=True)):
        if facts is None or not sample.answerable or not facts.support_paths:
            continue
        by_type: dict[str, list[int]] = {}
        for i, path in enumerate(facts.support_paths):
            by_type.setdefault(doc_type(path), []).append(i)
        for kind, indexes in by_type.items():
            hits, n = totals.get(kind, (0.0, 0))
            totals[kind] = (hits + float(facts.hit(_k_at(k, q), indexes)), n + 1)
    return dict(sorted(totals.items()))
