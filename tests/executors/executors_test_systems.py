"""Systems and solvers for the executor tests (imported through ``python_path``, on workers too).

``die_marker``: the first call that finds no file there creates it and kills its own process
(``os._exit(1)``), as a worker crash would; every later call answers normally.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any


def _die_once(marker: str) -> None:
    if marker and not Path(marker).exists():
        Path(marker).write_text(str(os.getpid()), encoding="utf-8")
        os._exit(1)


def answer(
    sample: dict[str, Any], k: int, *, die_on: str = "", die_marker: str = "", delay: float = 0.0
) -> Any:
    """The relevant doc first, then filler; a blank answer for q-3; an exception for q-4."""
    if delay:
        time.sleep(delay)
    if sample["id"] == die_on:
        _die_once(die_marker)
    n = sample["id"].split("-")[1]
    if sample["id"] == "q-4":
        raise ValueError(f"cannot answer {sample['id']}")
    retrieved = [{"id": f"doc-{n}", "text": f"text {n}", "rank": 1}] + [
        {"id": f"filler-{i}", "rank": i + 2} for i in range(4)
    ]
    return {
        "retrieved": retrieved[:k],
        "answer": "" if sample["id"] == "q-3" else f"answer {n}",
        "tokens": {"prompt": 3, "completion": 1},
    }


def planted(
    request: dict[str, Any],
    *,
    hit: float = 0.9,
    base: float = 0.1,
    die_marker: str = "",
    work: int = 0,
    delay: float = 0.0,
) -> str:
    """Answer ``4417`` with probability ``hit`` when ``zz.planted`` is shown, else ``base``.

    ``work`` burns that many rounds of CPU (a stand-in for an expensive solver), ``delay``
    waits (a slow endpoint); the answer depends only on the trial's seed, never on where or
    when it runs.
    """
    _die_once(die_marker)
    if delay:
        time.sleep(delay)
    acc = 0
    for i in range(work):
        acc = (acc * 1_000_003 + i) % 2_147_483_647
    shown = {doc["id"] for doc in request["documents"]}
    rng = random.Random(request["trial"]["seed"])
    p = hit if "zz.planted" in shown else base
    return "4417" if rng.random() < p else "I do not know"
