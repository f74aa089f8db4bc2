"""``pip install ragmeter`` (no extras): what needs no extra works; what needs one says which, in one line.

Each command runs in a child interpreter whose imports of every extra's packages fail, as in a
fresh venv with only the core (a ``sitecustomize`` puts a finder first on ``sys.meta_path``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from ragmeter.extras import EXTRAS

ROOT = Path(__file__).resolve().parents[1]
ORACLE = ROOT.parent / "shared" / "oracle" / "trec_eval"
if not ORACLE.is_dir():
    ORACLE = Path("/work/shared/oracle/trec_eval")

_BLOCKER = """
import importlib.abc, os, sys

_BLOCKED = set(os.environ["RAGMETER_TEST_BLOCK"].split(","))


class _Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".", 1)[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Blocker())
"""


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., subprocess.CompletedProcess[str]]:
    folder = tmp_path_factory.mktemp("core")
    (folder / "sitecustomize.py").write_text(_BLOCKER)
    env = {
        **os.environ,
        "PYTHONPATH": str(folder),
        "RAGMETER_TEST_BLOCK": ",".join(EXTRAS),
        "RAGMETER_HISTORY": str(folder / "history.sqlite"),
    }

    def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "from ragmeter.cli import main; main()", *args],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            env=env,
            cwd=cwd,
        )

    return run


def test_the_blocker_blocks(core: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    done = core("eval", "--qrels", "irds:x", "--run", "irds:x")
    assert done.returncode == 2
    assert done.stderr == (
        "Error: reading ir_datasets datasets (irds:...): needs the 'ir_datasets' package: "
        "pip install 'ragmeter[ir_datasets]'\n"
    )


def test_commands_that_need_no_extra_work(
    core: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    done = core(
        "eval",
        "--qrels",
        str(ORACLE / "qrels.test"),
        "--run",
        str(ORACLE / "results.test"),
        "-m",
        "map",
        "--json",
        "-o",
        str(tmp_path / "a"),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["aggregate"]["map"] == pytest.approx(0.1785, abs=1e-4)
    rag = ROOT / "examples" / "rag"
    done = core("eval", "-d", str(rag / "tests.yaml"), "--outputs", str(rag / "run.jsonl"), "--json")
    assert done.returncode == 0, done.stderr
    done = core("eval", "-d", str(ROOT / "tests" / "formats" / "library_files" / "ragas.csv"), "--json")
    assert done.returncode == 0, done.stderr
    for args in (
        ["metrics"],
        [
            "agentic",
            "-t",
            str(ROOT / "examples" / "agentic" / "traces.jsonl"),
            "-l",
            str(ROOT / "examples" / "agentic" / "labels.jsonl"),
        ],
        ["compare", str(tmp_path / "a"), str(tmp_path / "a")],
        ["power", str(tmp_path / "a"), "--delta", "0.02"],
        ["trec_eval", "-m", "map", str(ORACLE / "qrels.test"), str(ORACLE / "results.test")],
        ["report", str(tmp_path / "a")],
        ["--version"],
    ):
        done = core(*args)
        assert done.returncode == 0, (args, done.stderr)
        assert "internal error" not in done.stderr


def _one_hint(stderr: str, extra: str) -> None:
    assert stderr.count("\n") == 1, stderr
    assert re.fullmatch(rf"Error: .*: pip install 'ragmeter\[{extra}\]'\n", stderr), stderr


def test_commands_that_need_an_extra_say_which_in_one_line(
    core: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    done = core("run", str(ROOT / "examples" / "suite.yaml"), "-o", str(tmp_path / "demo"), "--no-record")
    assert done.returncode == 2
    _one_hint(done.stderr, "pipeline")
    (tmp_path / "suite.yaml").write_text(
        f"name: http\ndataset: {ROOT / 'examples' / 'tests.yaml'}\n"
        "system: {type: http, url: 'http://127.0.0.1:9/ask', body: {question: '{{ question }}'}}\n"
    )
    done = core("run", str(tmp_path / "suite.yaml"), "-o", str(tmp_path / "http"), "--no-record")
    assert done.returncode == 2
    _one_hint(done.stderr, "http")


def test_the_extras_table_matches_pyproject() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for module, (distribution, extra) in EXTRAS.items():
        names = [re.split(r"[<>=!~\[;]", req, maxsplit=1)[0].strip().lower() for req in extras[extra]]
        assert distribution.lower() in names, (module, extra)
