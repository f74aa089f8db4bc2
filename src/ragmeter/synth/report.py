"""The synthesis report: generated, kept and rejected questions by category and reason, cost, samples.

Written next to the dataset as ``<out stem>.report.json`` (everything, for tools and the HTML
report) and ``<out stem>.report.md`` (for people), and summarised on the terminal. Every
rejected question is listed with its stage (``generation``, ``filter``, ``verification``),
its reason code and one sentence of detail; a few kept questions per category are shown.

>>> REASONS["closed_book"]
'the solver answered it with no document'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragmeter.io.atomic import write_text_atomic
from ragmeter.synth.config import CATEGORIES
from ragmeter.synth.drafts import Draft
from ragmeter.synth.filters import Rejection
from ragmeter.synth.verify import Verified

REASONS = {
    "answer_in_question": "the question contains its answer",
    "near_duplicate": "a near-duplicate of an earlier question (rapidfuzz, then BERTScore)",
    "closed_book": "the solver answered it with no document",
    "trivial": "no document matters: the solver passes whatever it is shown",
    "hopeless": "the solver fails even with the gold chunks (a wrong answer key or a bad question)",
    "unresolved": "the trials reached the cap without deciding",
    "no_verified_support": "no chunk was verified necessary",
    "gold_not_sufficient": "shown only its verified gold, the solver fails: a needed chunk is missing",
    "newer_not_verified": "recency: the newer chunk is not verified necessary",
    "conflict_not_verified": "recency: the older chunk does not give the older value",
    "newer_not_preferred": "recency: with both chunks shown the solver does not give the newer value",
    "answered_from_corpus": "unanswerable: the solver answered from the retrieved chunks",
    "incomplete": "not decided yet (a failed call or the budget): continue with --resume",
}
"""Every rejection reason with its meaning (also in docs/synth.md)."""
SAMPLES_PER_CATEGORY = 3


def _count(rows: Sequence[tuple[str, str]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for category, reason in rows:
        out.setdefault(category, {})
        out[category][reason] = out[category].get(reason, 0) + 1
    return out


def build_report(
    *,
    drafts: Sequence[Draft],
    filtered: Sequence[Rejection],
    verified: Sequence[Verified],
    generation: Mapping[str, Any],
    generation_outcomes: Mapping[str, str],
    requested: Mapping[str, int],
    shortfall: Mapping[str, int],
    verify: bool,
    dataset: Path,
) -> dict[str, Any]:
    """The report as data (see the module docstring)."""
    kept = [v for v in verified if v.status == "kept"]
    rejected = [v for v in verified if v.status == "rejected"]
    pending = [v for v in verified if v.status == "pending"]
    by_category: dict[str, dict[str, int]] = {}
    for category in CATEGORIES:
        row = {
            "requested": requested.get(category, 0),
            "generated": sum(1 for d in drafts if d.category == category),
            "filtered_out": sum(1 for r in filtered if r.draft.category == category),
            "rejected": sum(1 for v in rejected if v.draft.category == category),
            "pending": sum(1 for v in pending if v.draft.category == category),
            "kept": sum(1 for v in kept if v.category == category),
        }
        if any(row.values()):
            by_category[category] = row
    listed = [
        {
            "id": r.draft.id,
            "category": r.draft.category,
            "stage": r.stage,
            "reason": r.reason,
            "detail": r.detail,
            "question": r.draft.question,
        }
        for r in filtered
    ]
    listed += [
        {
            "id": v.draft.id,
            "category": v.draft.category,
            "stage": "verification",
            "reason": str(v.reason),
            "detail": v.detail,
            "question": v.draft.question,
        }
        for v in [*rejected, *pending]
    ]
    supports = {
        "verified": sum(len(v.supports) for v in kept),
        "generated_dropped": sum(len(v.dropped) for v in kept),
        "discovered_added": sum(1 for v in kept for s in v.supports if s.role == "discovered"),
        "relabelled": sum(1 for v in kept if v.category != v.draft.category),
    }
    calls = sum(v.calls for v in verified)
    known = sum(v.cost[0] for v in verified)
    unpriced = sum(v.cost[1] for v in verified)
    samples: dict[str, list[dict[str, Any]]] = {}
    for v in kept:
        if len(samples.setdefault(v.category, [])) < SAMPLES_PER_CATEGORY:
            samples[v.category].append(
                {
                    "id": v.draft.id,
                    "question": v.draft.question,
                    "answer": " | ".join(v.draft.answers),
                    "gold": [s.chunk_id for s in v.supports],
                }
            )
    return {
        "dataset": str(dataset),
        "verified": verify,
        "totals": {
            "generated": len(drafts),
            "filtered_out": len(filtered),
            "verified": len(kept) + len(rejected),
            "rejected": len(rejected),
            "pending": len(pending),
            "kept": len(kept),
        },
        "by_category": by_category,
        "rejections": {
            "filter": _count([(r.draft.category, r.reason) for r in filtered]),
            "verification": _count([(v.draft.category, str(v.reason)) for v in rejected]),
        },
        "generation_outcomes": dict(generation_outcomes),
        "shortfall": dict(shortfall),
        "supports": supports,
        "cost": {
            "generator": dict(generation),
            "solver": {
                "calls": calls,
                "calls_this_run": sum(v.new_calls for v in verified),
                "calls_per_question": round(calls / len(verified), 2) if verified else None,
                "cost_usd": round(known, 6) if calls > unpriced else None,
                "unpriced_calls": unpriced,
            },
        },
        "reasons": {k: REASONS[k] for k in sorted({str(x["reason"]) for x in listed} & set(REASONS))},
        "samples": samples,
        "rejected": listed,
    }


def _money(value: float | None, unpriced: int) -> str:
    if value is None:
        return "unknown (unpriced)"
    return f"${value:.4f}" + (f" + {unpriced} unpriced calls" if unpriced else "")


def summary_lines(report: Mapping[str, Any]) -> list[str]:
    """A short plain-text summary (terminal and CI logs)."""
    t = report["totals"]
    lines = [
        f"generated {t['generated']}, filtered out {t['filtered_out']}, rejected by verification "
        f"{t['rejected']}, pending {t['pending']}, kept {t['kept']}"
    ]
    for category, row in report["by_category"].items():
        lines.append(
            f"  {category:<13} requested {row['requested']:>3}  generated {row['generated']:>3}  "
            f"filtered {row['filtered_out']:>3}  rejected {row['rejected']:>3}  kept {row['kept']:>3}"
        )
    reasons: dict[str, int] = {}
    for stage in ("filter", "verification"):
        for counts in report["rejections"][stage].values():
            for reason, n in counts.items():
                reasons[reason] = reasons.get(reason, 0) + n
    if reasons:
        lines.append("  rejected: " + ", ".join(f"{r} {n}" for r, n in sorted(reasons.items())))
    s = report["supports"]
    lines.append(
        f"  gold supports: {s['verified']} verified, {s['generated_dropped']} generated ones dropped, "
        f"{s['discovered_added']} added, {s['relabelled']} questions relabelled"
    )
    gen = report["cost"]["generator"]
    solver = report["cost"]["solver"]
    lines.append(
        f"  calls this run: generator {gen['http_calls']} ({gen['cache_hits']} answered from the cache, "
        f"{gen['from_log']} tasks from the log), solver {solver['calls_this_run']} "
        f"(of {solver['calls']} recorded); cost: generator "
        f"{_money(gen['cost_usd'], gen['unpriced_calls'])}, "
        f"solver {_money(solver['cost_usd'], solver['unpriced_calls'])}"
    )
    return lines


def markdown(report: Mapping[str, Any]) -> str:
    """The report for people."""
    out = ["# Synthesis report", "", f"Dataset: `{report['dataset']}`", ""]
    out += ["```", *summary_lines(report), "```", ""]
    if report["shortfall"]:
        short = ", ".join(f"{c} {n}" for c, n in report["shortfall"].items())
        out += [f"The corpus gave fewer questions than asked for: {short}.", ""]
    out += [
        "## Rejected questions",
        "",
        "| id | category | stage | reason | question | detail |",
        "|---|---|---|---|---|---|",
    ]
    for row in report["rejected"]:
        cells = [row["id"], row["category"], row["stage"], row["reason"], row["question"], row["detail"]]
        out.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    out += ["", "## Kept questions (a sample per category)", ""]
    for category, items in report["samples"].items():
        out.append(f"### {category}")
        out.append("")
        for item in items:
            answer = f" — *{item['answer']}*" if item["answer"] else " (unanswerable)"
            out.append(
                f"- `{item['id']}` {item['question']}{answer} (gold: {', '.join(item['gold']) or 'none'})"
            )
        out.append("")
    out += ["## Reasons", ""]
    out += [f"- `{code}`: {text}" for code, text in report["reasons"].items()]
    return "\n".join(out) + "\n"


def report_paths(out: Path) -> tuple[Path, Path]:
    """``<out stem>.report.json`` and ``<out stem>.report.md`` next to the dataset.

    >>> [p.name for p in report_paths(Path("results/synth/tests.yaml"))]
    ['tests.report.json', 'tests.report.md']
    """
    stem = out.with_suffix("")
    return stem.with_name(stem.name + ".report.json"), stem.with_name(stem.name + ".report.md")


def write_report(out: Path, report: Mapping[str, Any]) -> tuple[Path, Path]:
    """Write both report files atomically; return their paths."""
    json_path, md_path = report_paths(out)
    write_text_atomic(json_path, json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    write_text_atomic(md_path, markdown(report))
    return json_path, md_path
