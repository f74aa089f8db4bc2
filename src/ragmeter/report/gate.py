"""Regression gates: rules on metric deltas or absolute values, checked against a comparison.

A rule says when the gate **fails**: ``METRIC OP NUMBER``.

* a signed number (``-0.02``, ``+0.01``) compares the **delta** (candidate − baseline);
* an unsigned number (``0.01``) compares the candidate's **absolute** value;
* ``delta(METRIC)`` or ``abs(METRIC)`` say it explicitly; a ``%`` after a signed
  number compares the delta relative to the baseline mean.

A delta is taken over the queries both runs scored. A metric that exists only as
totals (an error rate or a cost total with no per-query values in either run)
changes by candidate total − baseline total (relative: over the baseline total).

``ndcg@10<-0.02`` fails when nDCG@10 dropped by more than 0.02;
``error_rate>0.01`` fails when the candidate's error rate is above 1 %.

A delta rule whose threshold is smaller than the change the test set can detect (the
minimum detectable effect at α = 0.05 and 80% power, :mod:`ragmeter.report.power`) gets a
warning (:attr:`RuleOutcome.warning`): with 34 questions a drop of 0.02 in hit@5 cannot be
told from noise, and the warning says about how many questions would be needed.

>>> r = parse_rule("ndcg@10<-0.02")
>>> (r.metric, r.mode, r.op, r.threshold)
('ndcg@10', 'delta', '<', -0.02)
>>> parse_rule("error_rate>0.01").mode
'absolute'
>>> parse_rule("delta(mrr)<=-5%").mode
'relative'
"""

from __future__ import annotations

import math
import operator
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ragmeter.errors import ConfigError
from ragmeter.report.compare import Comparison, MetricComparison
from ragmeter.report.compare import canonical_metric_name as canonical_metric_name  # re-exported

Mode = Literal["delta", "absolute", "relative"]
OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}
_RULE = re.compile(
    r"^\s*(?:(?P<fn>delta|abs)\(\s*(?P<inner>[^()\s]+)\s*\)|(?P<name>[^<>=\s]+))\s*"
    r"(?P<op><=|>=|<|>)\s*(?P<num>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<pct>%)?\s*$"
)


@dataclass(frozen=True)
class Rule:
    """A parsed gate rule."""

    text: str
    metric: str
    mode: Mode
    op: str
    threshold: float


@dataclass(frozen=True)
class RuleOutcome:
    """What one rule found: the value it compared, and whether the gate fails on it."""

    rule: Rule
    value: float | None
    failed: bool
    reason: str
    warning: str | None = None
    """Set when the rule's threshold is below what the test set can detect (its MDE)."""


def parse_rule(text: str) -> Rule:
    """Parse one ``--fail-on`` rule; a malformed rule is a :class:`ConfigError`.

    A threshold that no value of the metric could cross (``ndcg@10>1.5``, ``mrr<-2``, ``-150%``)
    would let the gate pass on nothing, so it is an error too.

    >>> parse_rule("ndcg@10>1.5")
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: gate rule 'ndcg@10>1.5': the threshold 1.5 is out of range: ndcg@10 lies in [0, 1]
    """
    match = _RULE.match(text)
    if not match:
        raise ConfigError(
            f"gate rule {text!r} does not parse: expected METRIC OP NUMBER, e.g. 'ndcg@10<-0.02' or 'error_rate>0.01'"
        )
    number = match.group("num")
    signed = number[0] in "+-"
    fn = match.group("fn")
    if match.group("pct"):
        if fn == "abs" or not (signed or fn == "delta"):
            raise ConfigError(
                f"gate rule {text!r}: a % threshold is a relative delta; write it signed, e.g. '-2%'"
            )
        mode: Mode = "relative"
    elif fn == "delta" or (fn is None and signed):
        mode = "delta"
    else:
        mode = "absolute"
    threshold = float(number) / (100.0 if mode == "relative" else 1.0)
    if not math.isfinite(threshold):
        raise ConfigError(f"gate rule {text!r}: the threshold must be a finite number, got {number}")
    metric = canonical_metric_name(match.group("inner") or match.group("name"))
    rule = Rule(text.strip(), metric, mode, match.group("op"), threshold)
    _check_range(rule)
    return rule


def _check_range(rule: Rule) -> None:
    """Refuse a threshold outside what the metric (every one is >= 0) can take or change by."""
    upper = metric_upper_bound(rule.metric)
    if rule.mode == "relative":
        if rule.threshold < -1:  # a value >= 0 cannot drop by more than 100 %
            raise ConfigError(
                f"gate rule {rule.text!r}: the threshold is out of range: a metric cannot drop by more than 100%"
            )
        return
    if upper is False:
        return  # not a registry metric: its range is unknown
    top = "inf)" if upper is None else f"{upper:g}]"
    if rule.mode == "absolute" and upper is not None and rule.threshold > upper:
        raise ConfigError(
            f"gate rule {rule.text!r}: the threshold {rule.threshold:g} is out of range: "
            f"{rule.metric} lies in [0, {top}"
        )
    if rule.mode == "delta" and upper is not None and abs(rule.threshold) > upper:
        raise ConfigError(
            f"gate rule {rule.text!r}: the threshold {rule.threshold:+g} is out of range: "
            f"{rule.metric} lies in [0, {top}, so it cannot change by more than {upper:g}"
        )


def metric_upper_bound(metric: str) -> float | Literal[False] | None:
    """The registry's largest value of ``metric`` (``None``: unbounded; ``False``: not a registry metric).

    >>> metric_upper_bound("ndcg@10"), metric_upper_bound("latency_p95"), metric_upper_bound("CG")
    (1.0, None, False)
    """
    from ragmeter.errors import MetricNameError
    from ragmeter.metrics.registry import resolve_metric

    try:
        return resolve_metric(metric).definition.upper
    except (MetricNameError, KeyError):
        return False


def _describe(rule: Rule, value: float) -> str:
    if rule.mode == "absolute":
        return f"{rule.metric} = {value:.4f}"
    if rule.mode == "relative":
        return f"{rule.metric} changed by {value * 100:+.2f}%"
    return f"{rule.metric} changed by {value:+.4f}"


def check_rules(
    comparison: Comparison,
    rules: Sequence[Rule],
    *,
    alpha: float | None = None,
) -> list[RuleOutcome]:
    """Evaluate every rule. With ``alpha``, a delta rule fails only when the change is significant.

    A rule naming a metric that neither run has is a :class:`ConfigError`
    (a gate must never pass because of a typo).
    """
    if alpha is not None and not 0 < alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1 (exclusive), got {alpha:g}")
    if comparison.n_shared_queries == 0:
        raise ConfigError(
            f"{comparison.baseline} and {comparison.candidate} share no query: a gate never passes on nothing"
        )
    outcomes: list[RuleOutcome] = []
    for rule in rules:
        paired = comparison.get(rule.metric)
        known = rule.metric in comparison.baseline_aggregate or rule.metric in comparison.candidate_aggregate
        if not known and paired is None:
            available = sorted(set(comparison.candidate_aggregate) | set(comparison.baseline_aggregate))
            raise ConfigError(
                f"gate rule {rule.text!r}: no metric {rule.metric!r} in the runs (have: {', '.join(available)})"
            )
        value = _rule_value(rule, comparison, paired)
        hit = OPS[rule.op](value, rule.threshold)
        significant = True
        note = ""
        if alpha is not None and rule.mode != "absolute" and rule.metric in comparison.totals_only:
            note = " (totals only: no per-query values to test significance on)"
        elif hit and alpha is not None and rule.mode != "absolute" and paired is not None:
            p = paired.p_adjusted if paired.p_adjusted is not None else paired.p_value
            if p is None and paired.untestable:  # too few changed queries: no test could call it
                significant = False
                note = f" (not significant: {paired.untestable})"
            elif p is None:  # no query has the metric in both runs: nothing shows the change is noise
                note = " (no p-value: no query has the metric in both runs)"
            else:
                significant = p < alpha
                note = f" (p = {p:.4g}{'' if significant else f', not significant at {alpha}'})"
        failed = hit and significant
        verdict = "FAIL" if failed else "ok"
        reason = f"{verdict}: {_describe(rule, value)} [{rule.text}]{note}"
        warning = None
        if rule.mode != "absolute" and paired is not None and rule.metric not in comparison.totals_only:
            warning = detectability_warning(rule, paired)
        outcomes.append(RuleOutcome(rule, value, failed, reason, warning))
    return outcomes


def detectability_warning(rule: Rule, paired: MetricComparison) -> str | None:
    """A warning when a delta rule's threshold is below the comparison's minimum detectable effect.

    ``None`` when the threshold can be detected (or the metric has no power estimate: percentiles).
    """
    power = paired.power
    if power is None or paired.baseline_mean is None:
        return None
    size = abs(rule.threshold * paired.baseline_mean) if rule.mode == "relative" else abs(rule.threshold)
    if size > 0 and power.detects(size):
        return None
    direction = "drop" if rule.threshold < 0 or (rule.threshold == 0 and rule.op in ("<", "<=")) else "rise"
    n = power.n
    if size == 0:
        if power.mde is None:
            return None
        what = f"a {direction} in {rule.metric} smaller than {_short(power.mde)}"
        return f"with {questions(n)} {what} cannot be told from noise [{rule.text}]"
    shown = f"{abs(rule.threshold) * 100:g}% ({_short(size)})" if rule.mode == "relative" else _short(size)
    text = f"with {questions(n)} a {direction} of {shown} in {rule.metric} cannot be told from noise"
    needed = power.queries_for(size)
    if needed is not None:
        text += f"; about {questions(needed)} would be needed"
    if power.mde is not None:
        text += (
            f" (the smallest change {questions(n)} detect with {power.power:.0%} power "
            f"at α = {power.alpha:g} is {_short(power.mde)})"
        )
    elif power.reason:
        text += f" ({power.reason})"
    return f"{text} [{rule.text}]"


def questions(n: int) -> str:
    """``1 question``, ``1,200 questions``."""
    return f"{n:,} question" + ("" if n == 1 else "s")


def _short(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _nothing(rule: Rule, what: str) -> ConfigError:
    return ConfigError(f"gate rule {rule.text!r}: {what}; a gate never passes on nothing")


def _rule_value(rule: Rule, comparison: Comparison, paired: MetricComparison | None) -> float:
    """The number a rule compares: the candidate's value, or the (relative) change.

    The change of a metric with per-query values is taken over the paired queries only, never
    from aggregates over different queries. A metric that exists only as totals (an error rate,
    a cost total: :attr:`~ragmeter.report.compare.Comparison.totals_only`) changes by candidate
    total − baseline total (relative: divided by the baseline total). A value that is missing or
    not finite is a :class:`ConfigError`, never a pass.
    """
    if rule.mode == "absolute":
        cand = comparison.candidate_aggregate.get(rule.metric)
        if cand is None:
            raise _nothing(
                rule, f"{comparison.candidate} has no value for {rule.metric} (no query was scored)"
            )
        value = cand
    else:
        start: float | None
        if rule.metric in comparison.totals_only:
            start = _total(rule, comparison.baseline, comparison.baseline_aggregate)
            delta = _total(rule, comparison.candidate, comparison.candidate_aggregate) - start
        elif paired is None or paired.n_pairs == 0 or paired.delta is None:
            raise _nothing(
                rule,
                f"no query has a value for {rule.metric} in both {comparison.baseline} and {comparison.candidate}",
            )
        else:
            delta, start = paired.delta, paired.baseline_mean
        if rule.mode == "relative" and not start:
            raise _nothing(rule, f"a relative change from a baseline {rule.metric} of 0 is undefined")
        value = delta / start if rule.mode == "relative" and start else delta
    if not math.isfinite(value):
        raise _nothing(rule, f"the value of {rule.metric} is {value}")
    return value


def _total(rule: Rule, label: str, aggregate: dict[str, float | None]) -> float:
    """The run total of a totals-only metric in one run; missing or not finite is an error."""
    total = aggregate.get(rule.metric)
    if total is None or not math.isfinite(total):
        what = "no total" if total is None else f"a total of {total}"
        raise _nothing(rule, f"{label} has {what} for {rule.metric} (it has no per-query values)")
    return total


def junit_xml(outcomes: Sequence[RuleOutcome], *, suite: str = "ragmeter.gate") -> str:
    """A JUnit XML report: one test case per rule, a ``<failure>`` for each failed rule."""
    failures = sum(o.failed for o in outcomes)
    root = ET.Element("testsuites", name=suite, tests=str(len(outcomes)), failures=str(failures))
    ts = ET.SubElement(
        root, "testsuite", name=suite, tests=str(len(outcomes)), failures=str(failures), errors="0"
    )
    for outcome in outcomes:
        case = ET.SubElement(ts, "testcase", classname=suite, name=outcome.rule.text)
        if outcome.failed:
            failure = ET.SubElement(case, "failure", message=outcome.reason, type="RegressionGate")
            failure.text = outcome.reason
        else:
            out = ET.SubElement(case, "system-out")
            out.text = outcome.reason
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
