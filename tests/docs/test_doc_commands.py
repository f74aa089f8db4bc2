"""Every documented command runs: each shell and Python block of README.md and docs/*.md is one test.

Which blocks run, how output is checked and how a block is marked as not run: ``doc_blocks.py``
(the same rules are in README.md, "Docs that run"). bench/README.md is not run: its commands are
the benchmarks (minutes each, ``make bench``), not something to check on every test run.

How a block runs, as a user would type it:

* in a fresh temporary folder laid out like the repository — a copy of ``examples/`` — which is
  where the block starts (a block that works elsewhere ``cd``s there itself, as the docs say);
* through the ``ragmeter`` executable of this environment (its ``bin`` first on ``PATH``, so
  ``python`` is the project's too), one ``bash -e`` script per block;
* with local services standing in for the ones the docs use, in the block and in the files the
  page asks you to write: the scripted OpenAI-compatible judge of ``tests/judges/chat_server.py``
  for ``http://127.0.0.1:8000/v1`` (and ``OPENAI_API_KEY`` set), and the http RAG service of
  ``tests/pipeline/rag_server.py`` (the reference pipeline over ``examples/vault``) for the system
  under test at ``http://127.0.0.1:8000/ask``;
* a block that uses Ray (``--executor ray``, ``import ray``) runs on the session's local Ray
  instance (``RAY_ADDRESS``; ``xdist_group("ray")``, with the executor tests);
* ``COLUMNS=120``, unbuffered output (stdout and stderr interleave as on a terminal), offline
  Hugging Face, and no ``RAGMETER_*`` variable: the history is where a user's would be,
  ``.ragmeter/history.sqlite`` of the folder the command runs in (inside the temporary folder).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from doc_blocks import Block, documented_blocks, missing_output

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
DOC_JUDGE_URL = "http://127.0.0.1:8000/v1"
DOC_SYSTEM_URL = "http://127.0.0.1:8000/ask"
MARKER = "@@ragmeter-doc-command {}@@"
SPLIT = re.compile(r"\n?@@ragmeter-doc-command (\d+)@@\n")
USES_RAY = re.compile(r"--executor ray|^(>>> )?\s*import ray\b|\bray\.init\(", re.M)
TIMEOUT = 600

BLOCKS = documented_blocks(ROOT)


def _param(block: Block) -> Any:
    marks = [pytest.mark.ray, pytest.mark.xdist_group("ray")] if USES_RAY.search(block.text) else []
    return pytest.param(block, id=block.id, marks=marks)


def _environment(ray_address: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "RAY_ADDRESS", "RAGMETER_"))}
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        COLUMNS="120",
        PYTHONUNBUFFERED="1",  # stdout and stderr interleave as on a terminal
        OPENAI_API_KEY="sk-doc-tests-not-a-real-key",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    if ray_address is not None:
        env["RAY_ADDRESS"] = ray_address
    return env


def _local(text: str, services: dict[str, str]) -> str:
    """``text`` with the docs' service addresses replaced by the tests' local ones."""
    for documented, local in services.items():
        text = text.replace(documented, local)
    return text


def _services(block: Block, request: pytest.FixtureRequest) -> dict[str, str]:
    """The local services a block (or a file its page wrote) names, started on first use."""
    texts = [block.text, *(content for _, content in block.files)]
    fixtures = {DOC_JUDGE_URL: "doc_judge", DOC_SYSTEM_URL: "doc_system"}
    return {
        url: request.getfixturevalue(name) for url, name in fixtures.items() if any(url in t for t in texts)
    }


def _script(block: Block, services: dict[str, str]) -> str:
    lines = ["set -eo pipefail"]
    for number, command in enumerate(block.commands):
        lines += [f"printf '\\n{MARKER.format(number)}\\n'", _local(command.text, services)]
    return "\n".join(lines) + "\n"


def _outputs(printed: str) -> dict[int, str]:
    parts = SPLIT.split(printed)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _tail(text: str, lines: int = 60) -> str:
    return "\n".join(text.splitlines()[-lines:])


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS])
def test_documented_block_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if block.not_run is not None:
        pytest.skip(f"not run by the doc tests: {block.not_run}")
    ray_address = None
    if USES_RAY.search(block.text):
        ray = request.getfixturevalue("ray_cluster")
        ray_address = ray._private.worker.global_worker.node.address_info["gcs_address"]
    services = _services(block, request)
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "examples", root / "examples")
    for name, content in block.files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(_local(content, services), encoding="utf-8")
    env = _environment(ray_address)
    if block.kind in ("python", "doctest"):
        script = tmp_path / ("block.py" if block.kind == "python" else "block.txt")
        script.write_text(_local(block.text, services), encoding="utf-8")
        doctest = (
            ["-m", "doctest", "-o", "ELLIPSIS", "-o", "NORMALIZE_WHITESPACE"]
            if block.kind == "doctest"
            else []
        )
        done = subprocess.run(
            [str(BIN / "python"), *doctest, str(script)],
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, (
            f"{block.id}: the Python block failed:\n{_tail(done.stdout + done.stderr)}"
        )
        return
    script = tmp_path / "block.sh"
    script.write_text(_script(block, services), encoding="utf-8")
    done = subprocess.run(
        ["bash", str(script)],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=TIMEOUT,
    )
    outputs = _outputs(done.stdout)
    if done.returncode != 0:
        last = max(outputs, default=0)
        pytest.fail(
            f"{block.id}: `{block.commands[last].text}` exited with {done.returncode}:\n"
            f"{_tail(outputs.get(last, done.stdout))}",
            pytrace=False,
        )
    for number, command in enumerate(block.commands):
        missing = missing_output(command.output, outputs.get(number, ""))
        assert not missing, (
            f"{block.id}: `{command.text}` no longer prints {missing}; it printed:\n"
            f"{_tail(outputs.get(number, ''))}"
        )


def test_every_marked_block_is_a_block_the_runner_would_run() -> None:
    """A "not run by the doc tests" marker line sits right above a shell or Python block, never elsewhere."""
    from doc_blocks import NOT_RUN

    marked = {(b.doc, b.not_run) for b in BLOCKS if b.not_run is not None}
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        doc = page.relative_to(ROOT).as_posix()
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            if line.lstrip().startswith("*(") and "not run by the doc tests" in line:
                match = NOT_RUN.match(line.strip())
                assert match, f"{doc}:{number}: write the marker as *(not run by the doc tests: REASON)*"
                assert (doc, match["reason"]) in marked, f"{doc}:{number}: the marker is not above a block"


def test_the_runner_finds_the_blocks_of_every_page() -> None:
    """Every page but the generated mutation report has blocks that run."""
    pages = {block.doc for block in BLOCKS if block.not_run is None}
    generated = {"docs/mutation.md"}
    expected = {"README.md", *(f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md"))} - generated
    assert expected <= pages, sorted(expected - pages)
    assert {"shell", "python", "doctest"} <= {block.kind for block in BLOCKS}


def test_no_page_holds_a_merge_conflict() -> None:
    """Conflict markers left by a merge are caught here even outside the blocks that run."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
            assert not line.startswith(("<<<<<<< ", ">>>>>>> ")), (
                f"{page.name}:{number}: a merge conflict marker"
            )
