"""Mining is the same in every process: corpora, pools and trial logs; resume and recompute keep them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragmeter.mining.corpus import build_package_corpus, render_value, without_addresses

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mining"
ONLY = ["--only", "stdlib_api:close_matches_cutoff", "--only", "stdlib_api:fill_width"]
CLI = [sys.executable, "-c", "from ragmeter.cli import main; main()"]

_POOLS = """
import hashlib, json, sys
from ragmeter.mining.questions import load_corpora, prepare_questions
from ragmeter.mining.registry import load_registry
registry = load_registry(sys.argv[1])
corpora = load_corpora(registry, sorted(registry.corpora))
questions = prepare_questions(registry, corpora=corpora)
print(json.dumps({
    "corpora": {name: c.sha256() for name, c in corpora.items()},
    "pools": {q.pair_id: hashlib.sha256(json.dumps([[c.id, c.text, c.source] for c in q.pool.candidates])
              .encode()).hexdigest() for q in questions},
}))
"""


def _pools_in_a_new_process(registry: Path, hash_seed: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", _POOLS, str(registry)], capture_output=True, text=True, env=env, check=True
    )
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def test_two_processes_build_the_same_corpora_and_pools() -> None:
    first = _pools_in_a_new_process(EXAMPLE / "registry.yaml", "1")
    second = _pools_in_a_new_process(EXAMPLE / "registry.yaml", "2")
    assert first == second
    assert set(first["pools"]) >= {"stdlib_api:close_matches_cutoff", "code_tasks:wrap_lines"}


def test_no_memory_address_enters_a_document() -> None:
    corpus = build_package_corpus(["difflib", "json", "re", "functools", "argparse", "logging"])
    leaked = [doc.id for doc in corpus.documents if " at 0x" in doc.text]
    assert not leaked
    text = corpus.get("difflib.IS_LINE_JUNK")
    assert text is not None and "pat=re.compile(" in text.text and ").match" in text.text


def test_rendered_defaults_have_no_address_and_a_fixed_set_order() -> None:
    sentinel = object()
    assert without_addresses(repr(sentinel)) == "<object object>"
    assert render_value(sentinel) == "<object object>"
    assert render_value(lambda: None).startswith("<function ") and "0x" not in render_value(lambda: None)
    assert render_value({"b", "a", "c"}) == "{'a', 'b', 'c'}"
    assert render_value((frozenset({2, 1}),)) == "(frozenset({1, 2}),)"
    assert render_value([set()]) == "[set()]"


def _mine(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, "mine", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def _logs(folder: Path) -> dict[str, bytes]:
    return {log.name: log.read_bytes() for log in sorted(folder.glob("*.jsonl"))}


@pytest.fixture(scope="module")
def mined_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The offline example, copied, with two of its questions mined by a clean run in a process of its own."""
    root = tmp_path_factory.mktemp("mined")
    shutil.copytree(EXAMPLE, root / "mining")
    done = _mine(
        [
            "mining/registry.yaml",
            "--out",
            "mined/retrieval_dataset.yaml",
            *ONLY,
            "-q",
        ],
        root,
    )
    assert done.returncode == 0, done.stderr
    return root


def test_resume_right_after_a_clean_run_asks_nothing_again(mined_example: Path) -> None:
    logs = mined_example / "mined" / "retrieval_dataset.trials"
    before = _logs(logs)
    assert len(before) == 2
    done = _mine(
        [
            "mining/registry.yaml",
            "--out",
            "mined/retrieval_dataset.yaml",
            *ONLY,
            "--resume",
            "-q",
        ],
        mined_example,
    )
    assert done.returncode == 0, done.stderr
    assert "different pool" not in done.stderr
    assert _logs(logs) == before  # no trial asked again, nothing appended
    dataset = yaml.safe_load((mined_example / "mined" / "retrieval_dataset.yaml").read_text())
    assert dataset["ragmeter_mining"]["complete"] is True


def test_recompute_keeps_the_header(mined_example: Path, tmp_path: Path, cli: Any) -> None:
    work = tmp_path / "work"
    shutil.copytree(mined_example, work)
    dataset = work / "mined" / "retrieval_dataset.yaml"
    document = yaml.safe_load(dataset.read_text())
    header = document["ragmeter_mining"]
    assert header["corpora"]["stdlib"]["documents"] > 0
    # as a run with a pytest benchmark writes it (this one had none): recompute must keep it too
    sandbox = {"kind": "bwrap", "isolation": ["no network"], "description": "bwrap: no network"}
    header["sandbox"] = sandbox
    dataset.write_text(yaml.safe_dump(document, sort_keys=False))
    code, _, err = cli(
        ["mine", str(work / "mining" / "registry.yaml"), "--out", str(dataset), "--recompute", "-q", *ONLY]
    )
    assert code == 0, err
    after = yaml.safe_load(dataset.read_text())["ragmeter_mining"]
    assert after["corpora"] == header["corpora"]
    assert after["sandbox"] == sandbox
    assert after["registry"]["sha256"] == header["registry"]["sha256"]
    assert [p["expected_output"] for p in yaml.safe_load(dataset.read_text())["pairs"]] == [
        p["expected_output"] for p in document["pairs"]
    ]


def test_recompute_without_an_earlier_dataset_describes_the_corpora(
    mined_example: Path, tmp_path: Path, cli: Any
) -> None:
    work = tmp_path / "work"
    shutil.copytree(mined_example, work)
    dataset = work / "mined" / "retrieval_dataset.yaml"
    before = yaml.safe_load(dataset.read_text())["ragmeter_mining"]["corpora"]
    dataset.unlink()
    code, _, err = cli(
        ["mine", str(work / "mining" / "registry.yaml"), "--out", str(dataset), "--recompute", "-q", *ONLY]
    )
    assert code == 0, err
    assert "no earlier header" in err
    assert yaml.safe_load(dataset.read_text())["ragmeter_mining"]["corpora"] == before
