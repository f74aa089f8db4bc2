"""A scripted stand-in for the LLMs of `ragmeter synth`, so the example runs offline and fast.

Both sides read only what a real model would see: the generator its prompt, the solver the
question and the documents shown in one trial.

* The **generator** makes fill-in-the-blank questions. For a passage it takes the first
  sentence that holds a value (a number, an amount, a date or a time) and blanks the value out:
  `What completes this line from my notes: "Water the monstera every ___"?`. A multi-hop
  question asks for one line of each passage (only one when the second passage has no value:
  such a question is not really multi-hop, and verification finds that out). A recency
  question blanks a line that the newer passage states with another value than the older
  one; an unanswerable one asks for something about a name in the passage that no note holds.
* The **solver** fills each blank from the documents shown: it looks for the sentence that
  reads like the line around the blank (rapidfuzz ratio >= 80; the closest wins, then the
  newest document) and answers the value in it. Like a real model it sometimes slips (10% of
  trials, decided by the trial's seed), and it "knows" a few general facts without any
  document (`MEMORY`), so questions about them are answerable closed-book.

`generate(request)` and `solve(request)` are the `python:` hooks of synth.yaml; `reply(messages,
headers)` answers the same from chat messages, for a scripted OpenAI-compatible server (the tests
use it); `planted_truth(question, answer, notes)` is the truth the accuracy measurements compare
the verified gold supports with (bench/bench_synth_accuracy.py, tests/synth/).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from rapidfuzz import fuzz

BLANK = "___"
SLIP_RATE = 0.1
MATCH = 80.0
MEMORY = [
    # general knowledge a model has without any note (these notes restate it)
    (
        "learning/statistics/bootstrap.md",
        "The course recommends at least 2,000 resamples for a 95% confidence interval.",
    ),
    (
        "learning/rust/setup.md",
        "Install the toolchain with rustup; the course uses the stable channel, version 1.78 or newer.",
    ),
    (
        "personal/recipes/sourdough.md",
        "Bake at 250 °C for 20 minutes with the lid on, then for 25 minutes without the lid at 230 °C.",
    ),
    (
        "personal/recipes/sourdough.md",
        "Feed the starter with equal weights of flour and water, 50 g each, every 12 hours while it lives on the counter.",
    ),
]
UNITS = r"EUR|km|minutes?|hours?|days?|weeks?|months?|seconds?|nights?|resamples|Mbit|°C|g|m|lines|approvals"
VALUE = re.compile(
    rf"\d{{1,2}}:\d{{2}}|\d{{4}}-\d{{2}}-\d{{2}}|\d[\d,.]*\d%?(?:\s(?:{UNITS})\b)?|\d%?(?:\s(?:{UNITS})\b)?"
)
PASSAGE = re.compile(r"PASSAGE(?: [AB])? \[([^\]]+)\][^\n]*\n<<<\n(.*?)\n>>>", re.DOTALL)
CLOZE = re.compile(r'"([^"]*___[^"]*)"')
NAME = re.compile(r"(?<!^)\b([A-Z][A-Za-z]+(?:\s[A-Z][A-Za-z]+)?)\b")
ASKS = [
    "What is the phone number of {}?",
    "In which year was {} founded?",
    "What is the email address of {}?",
]


def sentences(text: str) -> list[str]:
    """The sentences (and list items) of a text, without list markers."""
    out = []
    for part in re.split(r"(?<=[.!?])\s+|\n", text):
        part = re.sub(r"^\s*(?:[-*]|\d+\.)\s+", "", part).strip()
        if part and not part.startswith("#"):
            out.append(part)
    return out


def first_value(sentence: str) -> str | None:
    """The first value of a sentence (``15 minutes``, ``1,000 EUR``, ``2024-10-20``, ``19:45``)."""
    match = VALUE.search(sentence)
    return match.group(0) if match else None


def cloze(sentence: str, value: str) -> str:
    """The sentence with the value blanked out."""
    return sentence.replace(value, BLANK, 1)


def value_line(passage: str) -> tuple[str, str] | None:
    """``(sentence, value)`` of the first sentence of at least five words that holds a value."""
    for sentence in sentences(passage):
        value = first_value(sentence)
        if value is not None and len(sentence.split()) >= 5:
            return sentence, value
    return None


# -- the generator ---------------------------------------------------------------------------------


def _factual(passages: list[tuple[str, str]]) -> dict[str, Any]:
    line = value_line(passages[0][1])
    if line is None:
        return {"question": "", "answer": "", "snippet": "", "difficulty": "easy"}
    sentence, value = line
    question = f'What completes this line from my notes: "{cloze(sentence, value)}"?'
    return {"question": question, "answer": value, "snippet": sentence, "difficulty": "easy"}


def _multi_hop(passages: list[tuple[str, str]]) -> dict[str, Any]:
    lines = [value_line(text) for _, text in passages]
    if lines[0] is None:
        lines = lines[::-1]
    if lines[0] is None:
        return {"question": "", "answer": ""}
    (s1, v1), second = lines[0], lines[1]
    if second is None:  # the second passage has nothing to ask: a question that only needs the first
        question = f'What completes this line from my notes: "{cloze(s1, v1)}"?'
        return {"question": question, "answer": v1, "snippet_a": s1, "snippet_b": "", "difficulty": "hard"}
    s2, v2 = second
    question = f'What completes these two lines from my notes: "{cloze(s1, v1)}" and "{cloze(s2, v2)}"?'
    return {
        "question": question,
        "answer": f"{v1}; {v2}",
        "snippet_a": s1,
        "snippet_b": s2,
        "difficulty": "hard",
    }


def _recency(passages: list[tuple[str, str]]) -> dict[str, Any]:
    (_, older), (_, newer) = passages
    for new in sentences(newer):
        new_value = first_value(new)
        if new_value is None:
            continue
        for old in sentences(older):
            old_value = first_value(old)
            if (
                old_value
                and old_value != new_value
                and fuzz.ratio(cloze(new, new_value), cloze(old, old_value)) >= MATCH
            ):
                question = f'What is the current value in this line from my notes: "{cloze(new, new_value)}"?'
                return {
                    "conflict": True,
                    "question": question,
                    "newer_answer": new_value,
                    "older_answer": old_value,
                    "snippet_newer": new,
                    "snippet_older": old,
                }
    return {"conflict": False}


def _pick(key: str, n: int) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % n


def _unanswerable(passages: list[tuple[str, str]]) -> dict[str, Any]:
    passage_id, text = passages[0]
    line = value_line(text)
    if line is not None and _pick(passage_id, 3) == 0:
        # a near miss too near: the same line "on weekends", which the notes answer anyway
        sentence, value = line
        twisted = cloze(sentence, value).rstrip(".") + " on weekends."
        question = f'What completes this line from my notes: "{twisted}"?'
        return {
            "question": question,
            "entity": sentence.split()[0],
            "missing": "the weekend value",
            "near_miss": sentence,
        }
    names = [m.group(1) for s in sentences(text) for m in NAME.finditer(s)]
    if not names:
        return {"question": ""}
    entity = names[0]
    ask = ASKS[_pick(passage_id, len(ASKS))]
    return {
        "question": ask.format(entity),
        "entity": entity,
        "missing": ask.split(" of ")[0],
        "near_miss": "",
    }


def _variants(user: str) -> dict[str, Any]:
    head, _, rest = user.partition("ANSWER:")
    clozes = CLOZE.findall(head)
    answer = rest.split("\n", 1)[0].strip()
    quoted = " and ".join(f'"{c}"' for c in clozes)
    adversarial = f"I jotted down {quoted} a while ago and forgot the missing bit. What was it?"
    if _pick(head, 2):  # a careless rewrite that gives the answer away
        adversarial = f"I jotted down {quoted} a while ago. Was the missing bit {answer}?"
    return {
        "paraphrase": f"Fill in the blank{'s' if len(clozes) > 1 else ''} from my notes: {quoted}",
        "adversarial": adversarial,
    }


def generator_reply(prompt: str, user: str) -> dict[str, Any]:
    """The generator's JSON reply to a rendered synth prompt (``prompt`` is e.g. ``synth_factual.v1``)."""
    passages = PASSAGE.findall(user)
    name = prompt.split(".")[0]
    if name == "synth_variants":
        return _variants(user)
    return {
        "synth_factual": _factual,
        "synth_multi_hop": _multi_hop,
        "synth_recency": _recency,
        "synth_unanswerable": _unanswerable,
    }[name](passages)


def generate(request: dict[str, Any]) -> str:
    """The ``python:`` generator hook of synth.yaml."""
    return json.dumps(generator_reply(str(request["prompt"]), request["messages"][-1]["content"]))


# -- the solver ------------------------------------------------------------------------------------


def _year(doc_id: str) -> int:
    years = re.findall(r"(?:19|20)\d{2}", doc_id)
    return int(years[0]) if years else 0


def fill(blank_line: str, documents: list[tuple[str, str]]) -> str | None:
    """The value that fills the blank: from the closest-reading sentence (then the newest document)."""
    best: tuple[float, int, str] | None = None
    for doc_id, text in documents:
        for sentence in sentences(text):
            for match in VALUE.finditer(sentence):
                value = match.group(0)
                score = fuzz.ratio(cloze(sentence, value), blank_line)
                if score >= MATCH and (best is None or (score, _year(doc_id)) > best[:2]):
                    best = (score, _year(doc_id), value)
    return best[2] if best else None


def answer(question: str, documents: list[tuple[str, str]], seed: int) -> str:
    """The solver's reply to one trial."""
    lines = CLOZE.findall(question)
    if not lines:
        return "UNANSWERABLE" if "UNANSWERABLE" in question else "I cannot tell from these documents."
    known = documents + [(doc_id, sentence) for doc_id, sentence in MEMORY]
    values = [fill(line, known) for line in lines]
    if any(v is None for v in values):
        return "UNANSWERABLE" if "UNANSWERABLE" in question else "; ".join(v or "unknown" for v in values)
    if random.Random(seed).random() < SLIP_RATE:
        return "I am not sure."
    return "; ".join(str(v) for v in values)


def solve(request: dict[str, Any]) -> str:
    """The ``python:`` solver hook of synth.yaml (one trial)."""
    documents = [(doc["id"], doc["text"]) for doc in request["documents"]]
    return answer(request["question"], documents, int(request["trial"]["seed"]))


def reply(messages: list[dict[str, str]], headers: dict[str, str]) -> str:
    """Answer chat messages as either side would (for a scripted OpenAI-compatible server).

    A generation request carries ``X-Ragmeter-Prompt``; a solver trial carries
    ``X-Ragmeter-Trial`` (its seed is derived from that header) and the documents numbered
    ``[1] id`` in the user message.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    user = messages[-1]["content"]
    if "x-ragmeter-prompt" in lowered:
        return json.dumps(generator_reply(lowered["x-ragmeter-prompt"], user))
    body, _, task = user.rpartition("\n\nTask:\n")
    question = task.rsplit("\n\n", 1)[0]
    documents = [
        (m.group(1), m.group(2))
        for m in re.finditer(
            r"^\[\d+\] ([^\n]+)\n(.*?)(?=\n\n\[\d+\] |\Z)", body.removeprefix("Documents:\n\n"), re.M | re.S
        )
    ]
    seed = int(hashlib.sha256(lowered.get("x-ragmeter-trial", user).encode()).hexdigest()[:12], 16)
    return answer(question, documents, seed)


def planted_truth(question: str, answer: str, notes: dict[str, str]) -> list[set[str]]:
    """For each blank of a question: the notes (``rel_path -> text``) whose line reads so with the answer's value.

    This is the truth verification is measured against: the solver can fill a blank only from
    a document holding its line.
    """
    groups = []
    for line, value in zip(CLOZE.findall(question), answer.split("; "), strict=True):
        groups.append(
            {
                rel_path
                for rel_path, text in notes.items()
                for sentence in sentences(text)
                if value in sentence and cloze(sentence, value) == line
            }
        )
    return groups
