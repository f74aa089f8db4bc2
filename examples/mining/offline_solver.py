"""A scripted stand-in for an LLM, so the mining example runs offline and fast.

It behaves like the noisy blind solver of research/montecarlo.md: when the one document a
question needs is among the documents shown it answers correctly 90% of the time, otherwise
10% of the time (json_acronym: 90% always — the solver "knows" it, so no document matters).
Randomness comes from the trial's own seed, so a resumed run behaves exactly like a fresh one.
Replace it with `solver: {kind: llm, ...}` in registry.yaml to mine with a real model.
"""

from __future__ import annotations

import random
from typing import Any

# question id -> (the document that holds the answer, correct reply, wrong reply)
SCRIPT = {
    "fill_width": ("textwrap.fill", "70", "80"),
    "shorten_placeholder": ("textwrap.shorten", "[...]", "..."),
    "dumps_sort": ("json.dumps", "sort_keys", "sorted"),
    "close_matches_cutoff": ("difflib.get_close_matches", "0.6", "0.8"),
    "shell_escape": ("shlex.quote", "shlex.quote", "shlex.escape"),
    "json_acronym": (None, "JavaScript Object Notation", "Java Serial Object Notation"),
    "wrap_lines": (
        "textwrap.wrap",
        "```python\nimport textwrap\n\n\ndef wrap_lines(text, width):\n    return textwrap.wrap(text, width)\n```",
        "```python\ndef wrap_lines(text, width):\n    return [text[i : i + width] for i in range(0, len(text), width)]\n```",
    ),
}


def solve(request: dict[str, Any]) -> str:
    """Answer one trial from the documents shown (ids only: this stand-in does not read them)."""
    question_id = request["pair_id"].split(":", 1)[1]
    needed, right, wrong = SCRIPT[question_id]
    shown = {doc["id"] for doc in request["documents"]}
    rng = random.Random(request["trial"]["seed"])
    p_right = 0.9 if needed is None or needed in shown else 0.1
    return right if rng.random() < p_right else wrong
