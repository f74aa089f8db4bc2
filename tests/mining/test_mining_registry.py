"""Registry validation (errors say where), the corpus builder and the extractor."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.errors import ConfigError, InputError
from ragmeter.mining.corpus import Corpus, Document, build_package_corpus, load_corpus_file
from ragmeter.mining.extractor import build_pool, dotted_names, imported_names
from ragmeter.mining.questions import prepare_questions
from ragmeter.mining.registry import load_registry

BASE: dict[str, Any] = {
    "seed": 3,
    "corpora": {"std": {"packages": ["json", "textwrap"]}},
    "solver": {"kind": "python", "function": "mining_test_solvers:planted"},
    "benchmarks": [
        {
            "name": "api",
            "corpus": "std",
            "validator": {"kind": "answer"},
            "candidates": {"distractors": 3},
            "questions": [
                {"id": "w", "question": "Default width of textwrap.fill?", "answer": "70"},
                {
                    "id": "s",
                    "question": "Which function serialises?",
                    "answer": "dumps",
                    "seeds": ["json.dumps"],
                },
            ],
        }
    ],
}


def _registry(tmp_path: Path, **changes: Any) -> Path:
    data = copy.deepcopy(BASE)
    for dotted, value in changes.items():
        target: Any = data
        parts = dotted.split("__")
        for part in parts[:-1]:
            target = target[int(part)] if part.isdigit() else target[part]
        last = parts[-1]
        if value is None:
            del target[int(last) if last.isdigit() else last]
        elif last.isdigit():
            target[int(last)] = value
        else:
            target[last] = value
    path = tmp_path / "registry.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_valid_registry_prepares_seeded_pools(tmp_path: Path) -> None:
    registry = load_registry(_registry(tmp_path))
    questions = prepare_questions(registry)
    assert [q.pair_id for q in questions] == ["api:w", "api:s"]
    by_id = {q.pair_id: q for q in questions}
    seeded = {c.id: c.seeded_by for c in by_id["api:w"].pool.candidates if c.source == "seed"}
    assert seeded == {"textwrap.fill": ("text",)}
    assert len(by_id["api:w"].pool.candidates) == 4
    assert [c.id for c in by_id["api:s"].pool.candidates if c.source == "seed"] == ["json.dumps"]
    again = prepare_questions(load_registry(_registry(tmp_path)))
    assert [q.pool.ids for q in again] == [q.pool.ids for q in questions]  # seeded: same pools
    assert by_id["api:w"].seed != by_id["api:s"].seed


@pytest.mark.parametrize(
    ("changes", "where", "message"),
    [
        (
            {"benchmarks__0__questions__0__answer": None},
            "benchmarks[0].questions[0].answer",
            "needs an expected answer",
        ),
        ({"benchmarks__0__corpus": "nope"}, "benchmarks[0].corpus", "no corpus named 'nope'"),
        ({"benchmarks__0__questions__1__id": "w"}, "benchmarks[0].questions[1].id", "used twice"),
        (
            {
                "benchmarks__0__validator": {"kind": "answer", "match": "regex"},
                "benchmarks__0__questions__0__answer": "(",
            },
            "benchmarks[0].questions[0].answer",
            "not a valid regular expression",
        ),
        (
            {"benchmarks__0__validator": {"kind": "pytest"}},
            "benchmarks[0].questions[0].test_files",
            "needs test_files",
        ),
        ({"benchmarks__0__colour": "red"}, "benchmarks[0].colour", r"unknown key \(known: name, description"),
        ({"benchmarks__0__corpuss": "std"}, "benchmarks[0].corpuss", "unknown key; did you mean 'corpus'"),
        (
            {"solver": {"kind": "llm", "base_url": "http://127.0.0.1:1/v1", "model": "m", "temperature": 0}},
            "solver.temperature",
            "greater than 0",
        ),
        ({"corpora__std": {"packages": ["json"], "file": "x.jsonl"}}, "corpora.std", "exactly one of"),
        (
            {"benchmarks__0__questions__0__test_files": ["t.py"]},
            "benchmarks[0].questions[0].test_files",
            "need the pytest validator",
        ),
    ],
)
def test_registry_errors_say_where(tmp_path: Path, changes: dict[str, Any], where: str, message: str) -> None:
    path = _registry(tmp_path, **changes)
    with pytest.raises(ConfigError, match=message) as info:
        load_registry(path)
    assert info.value.where == f"{path}:{where}"


def test_explicit_seed_outside_the_corpus_is_an_error(tmp_path: Path) -> None:
    path = _registry(tmp_path, benchmarks__0__questions__1__seeds=["json.nothing_here"])
    with pytest.raises(ConfigError, match="names no document") as info:
        prepare_questions(load_registry(path))
    assert info.value.where == f"{path}:benchmarks[0].questions[1].seeds[0]"


def test_pytest_test_file_imports_seed_the_pool(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_it.py").write_text(
        "import textwrap\nfrom json import dumps as d\nfrom solution import f\n\n"
        "def test_f():\n    assert f() == textwrap.dedent(d({}))\n"
    )
    path = _registry(
        tmp_path,
        benchmarks__0__validator={"kind": "pytest"},
        benchmarks__0__questions=[{"id": "c", "question": "Write f().", "test_files": ["tests/test_it.py"]}],
    )
    [question] = prepare_questions(load_registry(path))
    seeded = {c.id: c.seeded_by for c in question.pool.candidates if c.source == "seed"}
    assert seeded == {"json.dumps": ("imports",), "textwrap.dedent": ("imports",)}
    assert question.task == "code" and question.truth.test_files[0][0] == "test_it.py"
    assert "solution.f" in question.pool.unmatched


def test_missing_test_file(tmp_path: Path) -> None:
    path = _registry(
        tmp_path,
        benchmarks__0__validator={"kind": "pytest"},
        benchmarks__0__questions=[{"id": "c", "question": "q", "test_files": ["tests/none.py"]}],
    )
    with pytest.raises(ConfigError, match="file not found") as info:
        load_registry(path)
    assert info.value.where == f"{path}:benchmarks[0].questions[0].test_files[0]"


def test_corpus_builder_one_document_per_public_class_and_function() -> None:
    corpus = build_package_corpus(["json"])
    ids = {d.id for d in corpus.documents}
    assert {"json.dumps", "json.loads", "json.JSONDecoder", "json.JSONEncoder", "json.JSONDecodeError"} <= ids
    assert not any(part.startswith("_") for doc_id in ids for part in doc_id.split("."))
    decoder = corpus.get("json.decoder.JSONDecoder")
    assert decoder is not None and decoder.id == "json.JSONDecoder"  # the shortest public path wins
    dumps = corpus.get("json.dumps")
    assert dumps is not None and dumps.text.startswith("json.dumps(obj, *, skipkeys=False")
    assert "Serialize ``obj`` to a JSON formatted ``str``" in dumps.text
    assert corpus.provenance["packages"]["json"].startswith("stdlib")
    with_methods = build_package_corpus(["textwrap"], include_methods=True, exclude=["textwrap.dedent"])
    assert with_methods.get("textwrap.TextWrapper.wrap") is not None
    assert with_methods.get("textwrap.dedent") is None


def test_corpus_builder_unknown_package() -> None:
    with pytest.raises(ConfigError, match="cannot import package 'no_such_pkg_xyz'"):
        build_package_corpus(["no_such_pkg_xyz"])


def test_corpus_file(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text('{"id": "a.b", "text": "hello", "aliases": ["a.c"]}\n{"fqn": "a.d", "text": "x"}\n')
    corpus = load_corpus_file(path)
    assert [d.id for d in corpus.documents] == ["a.b", "a.d"]
    assert corpus.get("a.c") is corpus.get("a.b")
    path.write_text('{"id": "a.b"}\n')
    with pytest.raises(InputError, match="has no string 'text'") as info:
        load_corpus_file(path)
    assert info.value.where == f"{path}:1"


def test_extractor_helpers() -> None:
    assert dotted_names("Use json.dumps, not json.loads. Also os.path.join!") == [
        "json.dumps",
        "json.loads",
        "os.path.join",
    ]
    assert imported_names("import os.path\nos.path.join('a')\n") == ["os.path", "os.path.join"]
    assert imported_names("def broken(:\n") == []
    corpus = Corpus([Document(f"m.d{i}", "t") for i in range(40)])
    with pytest.raises(ConfigError, match=r"exceed candidates\.max_pool 2"):
        build_pool(
            corpus, explicit=["m.d1", "m.d2", "m.d3"], discovered=[], distractors=0, seed=1, max_pool=2
        )
    pool = build_pool(corpus, explicit=["m.d1"], discovered=[], distractors=50, seed=1, max_pool=10)
    assert len(pool.candidates) == 10  # distractors capped by the pool size
