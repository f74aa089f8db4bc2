"""CLI conventions: -h and --version, an example in every --help, -o is always an output, --limit."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ragmeter import __version__

ORACLE = Path(__file__).resolve().parents[2] / "shared" / "oracle" / "trec_eval"
if not ORACLE.is_dir():
    ORACLE = Path("/work/shared/oracle/trec_eval")


def _commands() -> list[list[str]]:
    """Every command and subcommand, as the words that name it."""
    from typer.main import get_command

    from ragmeter.cli import _register_commands, app

    _register_commands()
    found: list[list[str]] = []

    def walk(group: Any, path: list[str]) -> None:
        for name, command in group.commands.items():
            found.append([*path, name])
            if hasattr(command, "commands"):
                walk(command, [*path, name])

    walk(get_command(app), [])
    return found


def test_version_and_short_help(cli: Any) -> None:
    for flag in ("--version", "-V"):
        code, out, _ = cli([flag])
        assert (code, out) == (0, f"ragmeter {__version__}\n")
    code, out, _ = cli(["-h"])
    assert code == 0 and "Commands:" in out and "Examples:" in out


def test_python_dash_m_runs_the_command() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "ragmeter", "--version"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout) == (0, f"ragmeter {__version__}\n")


@pytest.mark.parametrize("words", _commands(), ids=" ".join)
def test_every_help_shows_an_example(cli: Any, words: list[str]) -> None:
    code, out, err = cli([*words, "-h"])
    assert code == 0, err
    parts = re.split(r"\bExamples?:", out, maxsplit=1)  # trec_eval's own help says "Example:"
    assert len(parts) == 2, out
    assert f"ragmeter {words[0]}" in parts[1]


def test_o_is_an_output_everywhere(cli: Any, tmp_path: Path) -> None:
    """Every command with -o writes there; eval's old -o (the outputs read) is a clear error."""
    from typer.main import get_command

    from ragmeter.cli import app

    for words in _commands():
        command = get_command(app)
        for word in words:
            command = command.commands[word]  # type: ignore[attr-defined]
        for param in getattr(command, "params", []):
            if "-o" in getattr(param, "opts", []) and not param.hidden:
                assert param.name in ("out", "results_dir"), (words, param.name)
    (tmp_path / "outputs.jsonl").write_text('{"id": "q", "output": ["d"]}\n')
    (tmp_path / "d.yaml").write_text("samples:\n  - {id: q, expected_output: [d]}\n")
    code, _, err = cli(["eval", "-d", str(tmp_path / "d.yaml"), "-o", str(tmp_path / "outputs.jsonl")])
    assert code == 2
    assert (
        "-o/--out names the folder to write (as in every command); give recorded outputs with --outputs"
        in err
    )
    code, _, err = cli(["mine", "analyze", "-d", "x.yaml", "-o", str(tmp_path / "outputs.jsonl")])
    assert code == 2 and "give the recorded outputs with --outputs" in err
    code, _, err = cli(
        [
            "eval",
            "-d",
            str(tmp_path / "d.yaml"),
            "--outputs",
            str(tmp_path / "outputs.jsonl"),
            "-o",
            str(tmp_path / "res"),
        ]
    )
    assert code == 0, err
    assert (tmp_path / "res" / "metrics.json").is_file()


def test_limit_on_eval_is_recorded_and_said(cli: Any, tmp_path: Path) -> None:
    args = ["eval", "--qrels", str(ORACLE / "qrels.test"), "--run", str(ORACLE / "results.test"), "-m", "map"]
    code, out, err = cli([*args, "--limit", "2"])
    assert code == 0, err
    assert "2 queries (quick look: the first 2 of 3, not a full run)" in out
    assert (
        "warning: quick look: only the first 2 of 3 topics were evaluated (--limit 2); this is not a full run"
        in err
    )
    code, out, err = cli([*args, "--limit", "2", "--json"])
    data = json.loads(out)
    assert data["n_queries"] == 2 and data["provenance"]["settings"]["limit"] == 2
    assert data["provenance"]["limited"] == {"first": 2, "of": 3}
    assert list(data["per_query"]) == ["301", "302"]
    code, out, _ = cli([*args, "--limit", "5", "--json"])  # more than there are: a full run, not marked
    assert "limited" not in json.loads(out)["provenance"]
    code, _, err = cli([*args, "--limit", "0"])
    assert code == 2 and "--limit" in err
    (tmp_path / "d.yaml").write_text(
        "samples:\n" + "".join(f"  - {{id: q{i}, expected_output: [d]}}\n" for i in range(4))
    )
    (tmp_path / "o.jsonl").write_text("".join(f'{{"id": "q{i}", "output": ["d"]}}\n' for i in range(4)))
    code, out, err = cli(
        [
            "eval",
            "-d",
            str(tmp_path / "d.yaml"),
            "--outputs",
            str(tmp_path / "o.jsonl"),
            "--limit",
            "3",
            "--json",
        ]
    )
    data = json.loads(out)
    assert code == 0 and list(data["per_query"]) == ["q0", "q1", "q2"]
    assert data["warnings"][0].startswith("quick look: only the first 3 of 4 queries")


def test_limit_on_run_asks_only_the_first_questions(cli: Any, tmp_path: Path) -> None:
    pytest.importorskip("bm25s")
    suite = Path(__file__).resolve().parents[1] / "examples" / "suite.yaml"
    code, out, err = cli(
        [
            "run",
            str(suite),
            "--limit",
            "2",
            "-o",
            str(tmp_path / "res"),
            "--no-report",
            "--no-record",
            "--json",
            "-q",
        ]
    )
    assert code == 0, err
    data = json.loads(out)
    assert data["n_queries"] == 2 and data["provenance"]["limited"]["first"] == 2
    lines = (tmp_path / "res" / "outputs.jsonl").read_text().splitlines()
    assert len(lines) == 2
    config = json.loads((tmp_path / "res" / "config.json").read_text())
    assert config["sessions"][-1]["limit"] == 2
    # resumed with a smaller limit: the answers beyond it are kept, not scored; with a larger one, asked
    for limit, scored, kept in (("1", 1, 2), ("3", 3, 3)):
        base = ["run", str(suite), "--resume", "-o", str(tmp_path / "res"), "--no-report", "--no-record"]
        code, out, err = cli([*base, "--limit", limit, "--json", "-q"])
        assert code == 0, err
        assert json.loads(out)["n_queries"] == scored
        assert len((tmp_path / "res" / "outputs.jsonl").read_text().splitlines()) == kept


def test_limit_on_a_suite_of_several_systems(cli: Any, tmp_path: Path) -> None:
    pytest.importorskip("bm25s")
    suite = Path(__file__).resolve().parents[1] / "examples" / "compare.yaml"
    argv = [
        "run",
        str(suite),
        "--limit",
        "2",
        "-o",
        str(tmp_path / "res"),
        "--no-report",
        "--no-record",
        "-q",
    ]
    code, _, err = cli(argv)
    assert code == 0, err
    assert err.count("warning: quick look: only the first 2 of 34 queries") == 1
    folders = [p for p in (tmp_path / "res").iterdir() if p.is_dir()]
    assert len(folders) == 2
    for folder in folders:
        assert json.loads((folder / "metrics.json").read_text())["n_queries"] == 2
        assert len((folder / "outputs.jsonl").read_text().splitlines()) == 2
