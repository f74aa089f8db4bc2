"""Which LLM judges an evaluation runs: from the metrics asked for, the ``judges`` argument and the config.

:func:`ragmeter.evaluate` plans its judging here (:func:`plan_judging`), then judges the
answers (:func:`ragmeter.judges.answers.judge_answers`):

- answer judges (groundedness, correctness, factual match) on answerable questions;
- the abstention judge where an abstention metric needs a verdict and the output
  has no ``abstained`` field (the system's own flag always wins);
- the fuzzy match (no LLM) wherever ``fuzzy_match`` is requested;
- the conflict judge on ``acknowledge_both`` questions when ``recency_rule_pass`` is requested:
  whether the answer acknowledges the conflict.

>>> plan = plan_judging(["hit@5", "groundedness", "abstention_accuracy"], judges=None, configured=True)
>>> plan.answer_judges, plan.fuzzy, plan.abstention_for
(('groundedness',), False, frozenset({False}))
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.judges.config import (
    JudgeConfig,
    bertscore_only,
    judge_block_in,
    load_judge_config,
    validate_judge_block,
)

EVAL_JUDGES = ("groundedness", "correctness", "factual_match")
"""The answer judges an evaluation can run (the abstention judge runs as the fallback)."""

JUDGE_OF_METRIC = {
    "groundedness": "groundedness",
    "correctness": "correctness",
    "factual_match": "factual_match",
    "fuzzy_match": None,
}
"""Judge metric family → the LLM judge that makes it (``None``: no LLM, the fuzzy match)."""

ABSTENTION_SCOPE = {
    "abstention_accuracy": False,
    "hallucination_rate_unanswerable": False,
    "false_abstention_rate": True,
}
"""Abstention metric family → the ``answerable`` value of the samples it scores."""

ABSTENTION_JUDGE = "abstention"
CONFLICT_JUDGE = "conflict"
"""Judges whether an answer acknowledges the conflict of an ``acknowledge_both`` question."""
CONFLICT_METRIC = "recency_rule_pass"
"""The metric whose ``acknowledge_both`` questions need the conflict judge."""


@dataclass(frozen=True)
class JudgingPlan:
    """Which judges an evaluation runs, from its metric families and the ``judges`` argument."""

    answer_judges: tuple[str, ...]
    fuzzy: bool
    abstention_for: frozenset[bool]
    """``answerable`` values whose outputs without ``abstained`` get the abstention judge."""
    conflict: bool = False
    """``acknowledge_both`` questions get the conflict judge (``recency_rule_pass`` asked, judge configured)."""

    @property
    def needs_llm(self) -> bool:
        """True when some LLM judge may be called."""
        return bool(self.answer_judges or self.abstention_for or self.conflict)


def check_judge_names(judges: Iterable[str]) -> tuple[str, ...]:
    """Validate ``judges`` (any of :data:`EVAL_JUDGES`), in that order, duplicates dropped.

    >>> check_judge_names(["correctness", "groundedness"])
    ('groundedness', 'correctness')
    >>> check_judge_names(["groundednes"])
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: judges: unknown judge 'groundednes' (known: groundedness, correctness, factual_match); did you mean 'groundedness'?
    """
    names = [name.strip() for name in judges]
    for name in names:
        if name not in EVAL_JUDGES:
            close = difflib.get_close_matches(name, EVAL_JUDGES, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(
                f"unknown judge {name!r} (known: {', '.join(EVAL_JUDGES)}){hint}", where="judges"
            )
    return tuple(j for j in EVAL_JUDGES if j in names)


def default_judge_metrics(judges: Sequence[str] | None) -> list[str]:
    """The metric names a judged run adds when the caller names no metrics.

    >>> default_judge_metrics(None)
    ['groundedness', 'correctness', 'factual_match', 'fuzzy_match']
    >>> default_judge_metrics(["correctness"])
    ['correctness']
    """
    chosen = EVAL_JUDGES if judges is None else check_judge_names(judges)
    names = list(chosen)
    if "factual_match" in chosen:
        names.append("fuzzy_match")
    return names


def plan_judging(families: Iterable[str], *, judges: Sequence[str] | None, configured: bool) -> JudgingPlan:
    """The judges needed by the requested metric ``families``; errors name what is missing.

    A judge metric without a configured judge is an error (except ``fuzzy_match``,
    which needs no LLM). ``judges``, when given, must cover the judge metrics named.
    """
    wanted = list(dict.fromkeys(families))
    allowed = None if judges is None else check_judge_names(judges)
    answer: list[str] = []
    for family in wanted:
        if family not in JUDGE_OF_METRIC:
            continue
        judge = JUDGE_OF_METRIC[family]
        if judge is None:
            continue
        if not configured:
            raise ConfigError(
                f"metric {family} needs an LLM judge: add a 'judge:' block to the config, or give "
                "--judge-config / judge= (see docs/judges.md)",
                where="judge",
            )
        if allowed is not None and judge not in allowed:
            raise ConfigError(
                f"metric {family} needs the {judge} judge, which the judges given ({', '.join(allowed)}) "
                "leave out",
                where="judges",
            )
        answer.append(judge)
    if judges is not None and not configured:
        raise ConfigError("judges were named but no judge is configured", where="judges")
    abstention = (
        frozenset(ABSTENTION_SCOPE[f] for f in wanted if f in ABSTENTION_SCOPE) if configured else frozenset()
    )
    return JudgingPlan(
        answer_judges=tuple(j for j in EVAL_JUDGES if j in answer),
        fuzzy="fuzzy_match" in wanted,
        abstention_for=abstention,
        conflict=configured and CONFLICT_METRIC in wanted,
    )


def load_eval_judge_config(
    judge: JudgeConfig | Mapping[str, Any] | str | Path | bool | None,
    *,
    config_block: Any,
    config_path: Path | None,
    max_cost: float | None,
) -> JudgeConfig | None:
    """The judge config of an evaluation: ``judge`` (a config, mapping or file), else the config's block.

    ``judge=False`` turns judging off; ``max_cost`` overrides ``judge.max_cost_usd``.

    >>> load_eval_judge_config(None, config_block=None, config_path=None, max_cost=None) is None
    True
    >>> cfg = load_eval_judge_config({"base_url": "http://127.0.0.1:8000/v1", "model": "m"},
    ...                              config_block=None, config_path=None, max_cost=0.5)
    >>> cfg.model, cfg.max_cost_usd
    ('m', 0.5)
    """
    if max_cost is not None and (isinstance(max_cost, bool) or not 0 < max_cost < math.inf):
        raise ConfigError(
            f"the judge budget (--max-cost / max_cost) must be a finite number > 0 USD, got {max_cost!r}"
        )
    if judge is False:
        return None
    if judge is True:
        raise ConfigError("judge=True: give a judge config (a mapping, JudgeConfig or file), or None")
    block = judge if judge is not None else config_block
    if isinstance(block, str | Path):
        block = judge_block_in(Path(block))
    if block is None or bertscore_only(block):  # no LLM judge (BERTScore settings alone need none)
        if max_cost is not None:
            raise ConfigError("--max-cost / max_cost limits the LLM judges, but no judge is configured")
        return None
    if judge is not None:
        cfg = load_judge_config(judge)
    else:
        where = f"{config_path}: judge" if config_path is not None else "judge"
        cfg = validate_judge_block(config_block, where=where)
    if max_cost is not None:
        cfg = cfg.model_copy(update={"max_cost_usd": float(max_cost)})
    return cfg
