"""Regression gates: rules on metric deltas or absolute values, checked against a comparison.

A rule says when the gate **fails**: ``METRIC OP NUMBER``.

* a signed number (``-0.02``, ``+0.01``) compares the **delta** (candidate − baseline);
* an unsigned number (``0.01``) compares the candidate's **absolute** value;
* ``delta(METRIC)`` or ``abs(METRIC)`` say it explicitly; a ``%`` after a signed
  number compares the delta relative to the baseline mean.

``ndcg@10<-0.02`` fails when nDCG@10 dropped by more than 0.02;
``error_rate>0.01`` fails when the candidate's error rate is above 1 %.

>>> r = parse_rule("ndcg@10<-0.02")
>>> (r.metric, r.mode, r.op, r.threshold)
('ndcg@10', 'delta', '<', -0.02)
>>> parse_rule("error_rate>0.01").mode
'absolute'
>>> parse_rule("delta(mrr)<=-5%").mode
'relative'
"""

from __future__ import annotations

import operator
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ragmeter.errors import ConfigError
from ragmeter.report.compare import Comparison
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


def parse_rule(text: str) -> Rule:
    """Parse one ``--fail-on`` rule; a malformed rule is a :class:`ConfigError`."""
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
    metric = canonical_metric_name(match.group("inner") or match.group("name"))
    return Rule(text.strip(), metric, mode, match.group("op"), threshold)


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
    outcomes: list[RuleOutcome] = []
    for rule in rules:
        base = comparison.baseline_aggregate.get(rule.metric)
        cand = comparison.candidate_aggregate.get(rule.metric)
        paired = comparison.get(rule.metric)
        known = rule.metric in comparison.baseline_aggregate or rule.metric in comparison.candidate_aggregate
        if not known and paired is None:
            available = sorted(set(comparison.candidate_aggregate) | set(comparison.baseline_aggregate))
            raise ConfigError(
                f"gate rule {rule.text!r}: no metric {rule.metric!r} in the runs (have: {', '.join(available)})"
            )
        if rule.mode == "absolute":
            value = cand
        elif paired is not None and paired.delta is not None:
            value = paired.delta
            if rule.mode == "relative":
                value = value / paired.baseline_mean if paired.baseline_mean else None
        elif base is not None and cand is not None:
            value = cand - base
            if rule.mode == "relative":
                value = value / base if base else None
        else:
            value = None
        if value is None:
            outcomes.append(
                RuleOutcome(
                    rule,
                    None,
                    True,
                    f"FAIL: no value to compare for {rule.metric} (it must be in both runs) [{rule.text}]",
                )
            )
            continue
        hit = OPS[rule.op](value, rule.threshold)
        significant = True
        note = ""
        if hit and alpha is not None and rule.mode != "absolute" and paired is not None:
            p = paired.p_adjusted if paired.p_adjusted is not None else paired.p_value
            if p is None:  # no query has the metric in both runs: nothing shows the change is noise
                note = " (no p-value: no query has the metric in both runs)"
            else:
                significant = p < alpha
                note = f" (p = {p:.4g}{'' if significant else f', not significant at {alpha}'})"
        failed = hit and significant
        verdict = "FAIL" if failed else "ok"
        reason = f"{verdict}: {_describe(rule, value)} [{rule.text}]{note}"
        outcomes.append(RuleOutcome(rule, value, failed, reason))
    return outcomes


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
