"""YAML inputs (datasets, configs, suites, registries): one line naming the file and line, never a traceback.

Repeated keys, alias bombs, deep nesting, forbidden characters, ``.inf``/``.nan``, booleans for
numbers and cutoffs too large to hold are refused wherever YAML is read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATASET = "samples:\n  - id: q1\n    expected_output: [d1]\n  - id: q2\n    expected_output: {d2: 2}\n"
OUTPUTS = '{"id": "q1", "output": ["d1"]}\n{"id": "q2", "output": ["d2"]}\n'
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)

# Bad YAML that every YAML reader refuses: (text, expected fragment after "FILE:").
BROKEN = {
    "escaped surrogate": (
        'a: 1\nb: "x\\ud83d\\ude00"\n',
        ":2: b: \\ud83d is half of a UTF-16 surrogate pair",
    ),
    "repeated key": ("a: 1\nb: 2\na: 3\n", ":3: duplicate key 'a' (first at line 1)"),
    "alias bomb": (BOMB, ":6: invalid YAML (aliases expand to more than 200,000 values)"),
    "recursive alias": ("a: &x [1, *x]\n", ":1: invalid YAML (an alias refers to a value that contains it)"),
    "brackets 30000 deep": (
        "a: " + "[" * 30_000 + "]" * 30_000 + "\n",
        ":1: invalid YAML (nested too deeply to read",
    ),
    "braces 30000 deep": (
        "a:\n  " + "{a: " * 30_000 + "}" * 30_000 + "\n",
        ":2: invalid YAML (nested too deeply to read",
    ),
    "block lists 30000 deep": ("- " * 30_000 + "x\n", ": invalid YAML (nested too deeply to read)"),
    "NUL byte": ("a: 1\nb: 2\nc: x\x00y\n", ":3: invalid YAML (the character U+0000 is not allowed in YAML)"),
    "BEL byte": ("a: 1\nb: \x07\n", ":2: invalid YAML (the character U+0007 is not allowed in YAML)"),
    "tab indentation": (
        "a:\n\tb: 1\n",
        ":2: invalid YAML (found character '\\t' that cannot start any token)",
    ),
    "unclosed quote": ("a: 1\nb: 'oops\n", ":3: invalid YAML (found unexpected end of stream)"),
    "python tag": ("a: !!python/object:os.system x\n", ":1: invalid YAML (could not determine a constructor"),
    "two documents": ("a: 1\n---\nb: 2\n", ":2: invalid YAML (but found another document)"),
    ".inf": ("a: 1\nb: .inf\n", ":2: invalid YAML (b: .inf is not a finite number)"),
    "-.inf": ("a: -.Inf\n", ":1: invalid YAML (a: -.Inf is not a finite number)"),
    ".nan": ("a: 1\nb: [1, .NaN]\n", ":2: invalid YAML (.NaN is not a finite number)"),
    "a list as a key": (
        "? [a, b]\n: 1\n",
        ":1: invalid YAML (a key must be a single value, not a list or a mapping)",
    ),
    "5000 digits": ("a: " + "7" * 5000 + "\n", ":1: invalid YAML (the number has too many digits)"),
    "explicit hex int": ("a: !!int 0x1F\n", ":1: invalid YAML ('0x1F' is not a plain whole number)"),
}


def _dataset(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "d.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "o.jsonl").write_text(OUTPUTS, encoding="utf-8")
    return ["eval", "--dataset", "d.yaml", "--outputs", "o.jsonl", "-m", "hit@1"]


def _outputs(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "d.yaml").write_text(DATASET, encoding="utf-8")
    (tmp_path / "o.yaml").write_text(text, encoding="utf-8")
    return ["eval", "--dataset", "d.yaml", "--outputs", "o.yaml", "-m", "hit@1"]


def _config(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    return [*_dataset(tmp_path, DATASET), "--config", "c.yaml"]


SUITE = (
    "name: s\ndataset: d.yaml\nsystem:\n  type: http\n  url: http://127.0.0.1:9/ask\n"
    "  body: {q: '{{ question }}'}\n  response: {retrieved: ids}\nresults_dir: out\n"
)


def _suite(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "d.yaml").write_text(DATASET, encoding="utf-8")
    (tmp_path / "s.yaml").write_text(text, encoding="utf-8")
    return ["run", "s.yaml", "--no-record", "--no-report"]


REGISTRY = (
    "version: 1\nseed: 7\ncorpora:\n  c: {packages: [json]}\nsolver: {kind: python, function: 'm:f'}\n"
    "benchmarks:\n  - name: b\n    corpus: c\n    validator: {kind: answer}\n"
    "    questions:\n      - {id: q1, question: 'what?', answer: x}\n"
)


def _registry(tmp_path: Path, text: str) -> list[str]:
    (tmp_path / "r.yaml").write_text(text, encoding="utf-8")
    return ["mine", "run", "r.yaml", "--out", "mined.yaml"]


READERS: dict[str, tuple[Callable[[Path, str], list[str]], str]] = {
    "dataset": (_dataset, "d.yaml"),
    "outputs": (_outputs, "o.yaml"),
    "config": (_config, "c.yaml"),
    "suite": (_suite, "s.yaml"),
    "registry": (_registry, "r.yaml"),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("case", list(BROKEN))
def test_broken_yaml_is_one_line_naming_file_and_line(
    refused: Any, tmp_path: Path, reader: str, case: str
) -> None:
    make, name = READERS[reader]
    text, fragment = BROKEN[case]
    refused(make(tmp_path, text), f"{name}{fragment}")


def test_an_alias_bomb_message_is_short(refused: Any, tmp_path: Path) -> None:
    assert len(refused(_dataset(tmp_path, BOMB), "d.yaml")) < 200


VALUES = {
    # reader, text, fragments
    "dataset: k true": (
        "dataset",
        "samples:\n  - id: q1\n    expected_output: [d1]\n    metadata: {k: true}\n",
        ["d.yaml:2", "metadata.k: k must be a whole number >= 1, got true"],
    ),
    "dataset: k 10^20": (
        "dataset",
        "samples:\n  - id: q1\n    expected_output: [d1]\n    metadata: {k: 100000000000000000000}\n",
        ["d.yaml:2", "metadata.k: Input should be less than or equal to 1000000000"],
    ),
    "dataset: gain inf as text": (
        "dataset",
        "samples:\n  - id: q1\n    expected_output: {d1: inf}\n",
        ["d.yaml:2", "expected_output: gain of 'd1' must be a number, got 'inf'"],
    ),
    "dataset: gain true": (
        "dataset",
        "samples:\n  - id: q1\n    expected_output: {d1: true}\n",
        ["d.yaml:2", "gain of 'd1' must be a number, got True"],
    ),
    "config: default_k true": (
        "config",
        "metrics:\n  retrieval:\n    default_k: true\n",
        ["c.yaml", "metrics.retrieval.default_k: Input should be a valid integer"],
    ),
    "config: default_k 10^20": (
        "config",
        "metrics:\n  retrieval:\n    default_k: 100000000000000000000\n",
        ["c.yaml", "metrics.retrieval.default_k: Input should be less than or equal to 1000000000"],
    ),
    "config: default_k 2.5": (
        "config",
        "metrics: {retrieval: {default_k: 2.5}}\n",
        ["c.yaml", "metrics.retrieval.default_k: Input should be a valid integer"],
    ),
    "config: level nan as text": (
        "config",
        "metrics: {retrieval: {relevance_level: nan}}\n",
        ["c.yaml", "metrics.retrieval.relevance_level: Input should be a finite number"],
    ),
    "config: level Infinity as text": (
        "config",
        "metrics: {retrieval: {relevance_level: Infinity}}\n",
        ["c.yaml", "metrics.retrieval.relevance_level: Input should be a finite number"],
    ),
    "config: level true": (
        "config",
        "metrics: {retrieval: {relevance_level: true}}\n",
        ["c.yaml", "metrics.retrieval.relevance_level: Input should be a valid number"],
    ),
    "config: price inf as text": (
        "config",
        "pricing: {m: {prompt_per_1k: inf, completion_per_1k: 1}}\n",
        ["c.yaml", "pricing.m.prompt_per_1k: Input should be a finite number"],
    ),
    "suite: k true": ("suite", SUITE + "k: true\n", ["s.yaml:9", "k: Input should be a valid integer"]),
    "suite: k 10^20": (
        "suite",
        SUITE + "k: 100000000000000000000\n",
        ["s.yaml:9", "k: Input should be less than or equal to 1000000000"],
    ),
    "suite: concurrency true": ("suite", SUITE + "concurrency: true\n", ["s.yaml:9", "concurrency"]),
    "suite: timeout inf as text": (
        "suite",
        SUITE + "timeout_seconds: inf\n",
        ["s.yaml:9", "timeout_seconds: Input should be a valid number"],
    ),
    "suite: retries true": ("suite", SUITE + "retries: true\n", ["s.yaml:9", "retries"]),
    "registry: seed true": ("registry", REGISTRY.replace("seed: 7", "seed: true"), ["r.yaml", "seed"]),
    "registry: temperature nan": (
        "registry",
        REGISTRY.replace(
            "{kind: python, function: 'm:f'}",
            "{kind: llm, base_url: 'http://127.0.0.1:9/v1', model: m, temperature: nan}",
        ),
        ["r.yaml", "temperature"],
    ),
    "registry: budget inf": (
        "registry",
        REGISTRY.replace(
            "{kind: python, function: 'm:f'}",
            "{kind: llm, base_url: 'http://127.0.0.1:9/v1', model: m, max_cost_usd: Infinity}",
        ),
        ["r.yaml", "max_cost_usd"],
    ),
    "registry: tau nan": ("registry", REGISTRY + "design: {name: bayes, tau: nan}\n", ["r.yaml", "tau"]),
    "registry: distractors true": (
        "registry",
        REGISTRY.replace(
            "validator: {kind: answer}", "validator: {kind: answer}\n    candidates: {distractors: true}"
        ),
        ["r.yaml", "distractors"],
    ),
}


@pytest.mark.parametrize("case", list(VALUES))
def test_a_boolean_or_non_finite_number_where_a_number_is_expected(
    refused: Any, tmp_path: Path, case: str
) -> None:
    reader, text, fragments = VALUES[case]
    make, _ = READERS[reader]
    refused(make(tmp_path, text), *fragments)
