"""Helpers of the report tests: run the CLI, read a page's data, and synthetic results of any size.

``synthetic_results`` writes a results folder shaped like a judged ``ragmeter run``. Each query has a question, category and tags, gold supports in a dataset file, ten retrieved
chunks (drawn from a pool of ``n / 2`` chunks, as a corpus repeats) with text and gains, an answer with references, unscored reasons and (optionally) two
judges with rationale and raw replies. Written through :class:`~ragmeter.results.EvalResult`,
as ``ragmeter eval`` writes them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from ragmeter.cli import main
from ragmeter.results import EvalResult


def run_cli(argv: list[str]) -> None:
    """Run ``ragmeter ARGV`` in this process; fail the test on a non-zero exit."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code in (0, None), f"ragmeter {' '.join(argv)} exited {exc.value.code}"


def page_data(page: str) -> dict[str, Any]:
    """The JSON the report embeds for its script."""
    start = page.index('id="report-data">') + len('id="report-data">')
    data: dict[str, Any] = json.loads(page[start : page.index("</script>", start)])
    return data


CATEGORIES = ("factual", "reasoning", "multi_hop", "adversarial")
TAGS = ("work", "home", "travel", "finance", "health", "setup")
WORDS = [
    "atlas",
    "install",
    "client",
    "release",
    "window",
    "refund",
    "policy",
    "meeting",
    "budget",
    "server",
    "replica",
    "database",
]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choices(WORDS, k=words)).capitalize() + "."


def _judge(name: str, value: float, rationale: str) -> dict[str, Any]:
    reply = json.dumps({"reasoning": rationale, "score": int(value)})
    return {
        "judge": name,
        "metric": name,
        "role": "primary",
        "value": value,
        "unscored_code": None,
        "unscored_reason": None,
        "source": "judge",
        "details": {"reasoning": rationale},
        "calls": [{"raw_replies": [reply], "model_reported": "test-judge"}],
        "status": "scored",
    }


def synthetic_results(folder: Path, n: int, *, seed: int = 0, judged: bool = True) -> Path:
    """Write ``n`` queries into ``folder`` (results and ``dataset.jsonl``); return the results folder."""
    rng = random.Random(seed)
    pool = [(f"notes/doc-{i % 200}.md", f"Other {i}", _text(rng, 25)) for i in range(max(50, n // 2))]
    results = folder / "results"
    dataset = folder / "dataset.jsonl"
    per_query: dict[str, dict[str, float | None]] = {}
    details: dict[str, dict[str, Any]] = {}
    samples = []
    for i in range(n):
        qid = f"q-{i:05d}"
        category = CATEGORIES[i % len(CATEGORIES)]
        tags = sorted(rng.sample(TAGS, 2))
        gold_path = f"notes/doc-{i % 97}.md"
        gold_rank = rng.choice([1, 2, 3, 6, 0, 0])
        question = f"Question {i}: {_text(rng, 8)[:-1]}?"
        samples.append(
            {
                "id": qid,
                "input": {"question": question},
                "category": category,
                "tags": tags,
                "gold_supports": [{"rel_path": gold_path, "heading_path": "Doc > Part"}],
            }
        )
        retrieved = []
        for rank in range(1, 11):
            path, heading, text = (
                (gold_path, "Doc > Part", f"The answer to {i}.") if rank == gold_rank else rng.choice(pool)
            )
            item = {
                "id": f"{path}#{heading}",
                "rel_path": path,
                "heading_path": heading.split(" > "),
                "rank": rank,
            }
            retrieved.append(item | {"text": text, "gain": 1.0 if rank == gold_rank else 0.0})
        hit5 = 1.0 if 0 < gold_rank <= 5 else 0.0
        values = {
            "hit@5": hit5,
            "mrr": 1 / gold_rank if gold_rank else 0.0,
            "recall_all@5": None,
            "latency_p50": rng.uniform(0.2, 1.5),
            "tokens_prompt": float(rng.randrange(200, 900)),
        }
        if judged:
            values["correctness"] = float(rng.randrange(0, 6))
        per_query[qid] = values
        line: dict[str, Any] = {
            "input": {"question": question},
            "output": {
                "answer": _text(rng, 30),
                "references": [{"rel_path": gold_path, "heading_path": ["Doc", "Part"]}],
                "latency": values["latency_p50"],
            },
            "retrieved": retrieved,
            "category": category,
            "tags": tags,
            "unscored": {"recall_all@5": "no required_support_groups"},
        }
        if judged:
            line["judges"] = {
                "correctness": _judge("correctness", values["correctness"] or 0.0, _text(rng, 25))
            }
        details[qid] = line
    names = list(next(iter(per_query.values())))

    def mean(name: str) -> float | None:
        scored = [v[name] for v in per_query.values() if v[name] is not None]
        return sum(scored) / len(scored) if scored else None  # type: ignore[arg-type]

    result = EvalResult(
        aggregate={name: mean(name) for name in names},
        per_query=per_query,
        n_queries=n,
        n_scored={name: sum(v[name] is not None for v in per_query.values()) for name in names},
        n_skipped={name: sum(v[name] is None for v in per_query.values()) for name in names},
        breakdowns={
            "category": {c: {"hit@5": {"mean": 0.5, "n": n // len(CATEGORIES)}} for c in CATEGORIES},
        },
        provenance={
            "created_at": "2026-11-26T08:00:00+00:00",
            "ragmeter_version": "0.1.0",
            "inputs": {"dataset": {"path": str(dataset)}},
            "settings": {"k": 5, "snippet_matching": True},
            "metrics": {
                "hit@5": {"k": 5},
                "recall_all@5": {"k": 5, "skip_reason": "no required_support_groups"},
            },
        },
        query_details=details,
    )
    dataset.parent.mkdir(parents=True, exist_ok=True)
    dataset.write_text("".join(json.dumps(s) + "\n" for s in samples), encoding="utf-8")
    return result.write(results)
