"""Python systems for the harness tests (imported by the suite through ``python_path``)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

CALLS: list[str] = []
ATTEMPTS: dict[str, int] = {}


def answer(sample: dict[str, Any], k: int) -> dict[str, Any]:
    """A well-behaved system: the relevant doc first, then filler, cut at k (recorded in the answer)."""
    CALLS.append(sample["id"])
    n = sample["id"].split("-")[1]
    retrieved = [{"id": f"doc-{n}", "rel_path": f"notes/{n}.md", "heading_path": "A", "text": "t", "rank": 1}]
    retrieved += [{"id": f"filler-{i}", "rank": i + 2} for i in range(5)]
    return {
        "retrieved": retrieved[:k],
        "answer": f"answer to {sample['input']['question']}",
        "k_asked": k,
        "abstained": False,
        "timings": {"retrieval": 0.001},
        "tokens": {"prompt": 5, "completion": 2},
    }


def flaky(sample: dict[str, Any], *, fail_on: str = "q-2", mode: str = "raise") -> Any:
    """Fails for one sample (exception, wrong type, hang or blank answer); answers the rest."""
    if sample["id"] == fail_on:
        if mode == "raise":
            raise ValueError(f"cannot handle {sample['id']}\nsecond line")
        if mode == "wrong-type":
            return 42
        if mode == "bad-contract":
            return {"retrieved": [{"id": "a", "score": "high"}]}
        if mode == "hang":
            time.sleep(3)
        if mode == "conn-once":
            ATTEMPTS[sample["id"]] = ATTEMPTS.get(sample["id"], 0) + 1
            if ATTEMPTS[sample["id"]] == 1:
                raise ConnectionResetError("peer went away")
        if mode == "blank":
            return {"retrieved": [{"id": "doc-x"}], "answer": "  "}
    return answer(sample, 3)


async def async_answer(sample: dict[str, Any]) -> list[str]:
    """An async system returning a bare id list."""
    await asyncio.sleep(0)
    return [f"doc-{sample['id'].split('-')[1]}"]
