"""The extractor: each question's candidate pool = seeded targets + randomly sampled distractors.

Seeds come from (each source can be switched off with ``candidates.seed_from``):

- ``seeds`` — the question's explicit ``seeds:`` list (each must name a corpus document);
- ``text`` — dotted names in the question text that name a corpus document (``json.dumps``);
- ``metadata`` — the same, in every string of the question's ``metadata``;
- ``imports`` — names the benchmark's test files import or use: ``from json import dumps``
  gives ``json.dumps``; ``import textwrap`` then ``textwrap.fill(...)`` gives ``textwrap.fill``.

Discovered names that are not in the corpus are ignored (and listed); distractors are drawn
without replacement from the rest of the corpus with an RNG seeded by (dataset seed,
question id), so the pool is the same in every process. All candidates are treated alike by
the designs; the pool is sorted by id and each candidate remembers its ``source``.

>>> from ragmeter.mining.corpus import Corpus, Document
>>> corpus = Corpus([Document(f"m.f{i}", f"doc {i}") for i in range(10)])
>>> seeds = dotted_names("Use m.f3 (not m.nothing) here")
>>> seeds
['m.f3', 'm.nothing']
>>> imported_names("from m import f1\\nimport m\\nm.f2(1)\\n")
['m', 'm.f1', 'm.f2']
>>> pool = build_pool(corpus, explicit=[], discovered=seeds, distractors=3, seed=42, max_pool=30)
>>> [c.id for c in pool.candidates if c.source == "seed"], len(pool.candidates), pool.unmatched
(['m.f3'], 4, ['m.nothing'])
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.mining.corpus import Corpus

_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


@dataclass(frozen=True)
class Candidate:
    """One pooled document: ``id``, ``text``, ``source`` (``seed`` / ``random``) and why it was seeded."""

    id: str
    text: str
    source: str
    seeded_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pool:
    """A question's candidates (sorted by id) and the discovered names not in the corpus."""

    candidates: tuple[Candidate, ...]
    unmatched: list[str]

    @property
    def ids(self) -> list[str]:
        """Candidate ids in pool order (the column order of the trial matrix)."""
        return [c.id for c in self.candidates]


def dotted_names(text: str) -> list[str]:
    """Dotted Python names in free text, in order of first appearance, trailing dots trimmed."""
    out: list[str] = []
    for match in _DOTTED.finditer(text):
        name = match.group(0)
        if name not in out:
            out.append(name)
    return out


def strings_in(value: Any) -> list[str]:
    """Every string inside nested lists/dicts (keys included), depth first.

    >>> strings_in({"imports": ["json.dumps"], "n": 3, "k": {"x": "y"}})
    ['imports', 'json.dumps', 'n', 'k', 'x', 'y']
    """
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        out: list[str] = []
        for key, item in value.items():
            out.extend(strings_in(key))
            out.extend(strings_in(item))
        return out
    if isinstance(value, (list, tuple)):
        return [s for item in value for s in strings_in(item)]
    return []


def _attribute_chain(node: ast.AST) -> list[str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return list(reversed(parts))
    return None


def imported_names(source: str) -> list[str]:
    """Fully qualified names a piece of Python imports or reaches through imported names.

    Returns ``[]`` for code that does not parse (the solver's code is not what is scanned;
    this reads the benchmark's own test files and snippets).
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    bound: dict[str, str] = {}
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.name)
                bound[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name == "*":
                    continue
                full = f"{node.module}.{alias.name}"
                names.add(full)
                bound[alias.asname or alias.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = _attribute_chain(node)
            if chain and chain[0] in bound:
                base = bound[chain[0]]
                for end in range(1, len(chain)):
                    names.add(".".join([base, *chain[1 : end + 1]]))
    return sorted(names)


def build_pool(
    corpus: Corpus,
    *,
    explicit: Sequence[str],
    discovered: Iterable[str],
    distractors: int,
    seed: int,
    max_pool: int,
    where: str = "seeds",
    reasons: dict[str, list[str]] | None = None,
) -> Pool:
    """Seeded targets plus ``distractors`` random others, sorted by id.

    ``explicit`` names must all be in the corpus (else :class:`ConfigError` at ``where``);
    ``discovered`` names that are not are listed in :attr:`Pool.unmatched`. ``reasons`` maps a
    name to the sources that seeded it (recorded as ``seeded_by``).
    """
    chosen: dict[str, list[str]] = {}
    for index, name in enumerate(explicit):
        doc = corpus.get(name)
        if doc is None:
            raise ConfigError(f"seed {name!r} names no document of the corpus", where=f"{where}[{index}]")
        chosen.setdefault(doc.id, []).append("seeds")
    unmatched: list[str] = []
    for name in discovered:
        doc = corpus.get(name)
        if doc is None:
            if name not in unmatched:
                unmatched.append(name)
            continue
        for source in (reasons or {}).get(name, ["discovered"]):
            if source not in chosen.setdefault(doc.id, []):
                chosen[doc.id].append(source)
    if len(chosen) > max_pool:
        raise ConfigError(
            f"{len(chosen)} seeded candidates exceed candidates.max_pool {max_pool}; raise it or seed less",
            where=where,
        )
    rest = [doc.id for doc in corpus.documents if doc.id not in chosen]
    room = max(0, min(distractors, max_pool - len(chosen), len(rest)))
    sampled = random.Random(seed).sample(rest, room) if room else []
    candidates = [
        Candidate(doc_id, _text(corpus, doc_id), "seed", tuple(sources)) for doc_id, sources in chosen.items()
    ]
    candidates += [Candidate(doc_id, _text(corpus, doc_id), "random") for doc_id in sampled]
    if not candidates:
        raise ConfigError("the candidate pool is empty: no seeds and no distractors", where=where)
    return Pool(tuple(sorted(candidates, key=lambda c: c.id)), unmatched)


def _text(corpus: Corpus, doc_id: str) -> str:
    doc = corpus.get(doc_id)
    return doc.text if doc is not None else ""
