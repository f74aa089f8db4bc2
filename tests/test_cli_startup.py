"""Start-up of the ``ragmeter`` command: a command imports and builds only its own module.

Each case runs in a fresh interpreter, as a user's shell would, since the test process itself has
imported every command module long before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ALL_COMMANDS = [
    "run",
    "eval",
    "metrics",
    "compare",
    "gate",
    "history",
    "report",
    "agentic",
    "synth",
    "trec_eval",
    "power",
    "cache",
    "calibrate",
    "mine",
]

_SCRIPT = """
import sys
from ragmeter.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted(m.rsplit(".", 1)[1] for m in sys.modules if m.startswith("ragmeter.cli.") and m.endswith(("_cmd", "_cmds")))
print("LOADED " + ",".join(loaded), file=sys.stderr)
heavy = sorted(m for m in ("pydantic", "typer", "rich", "yaml", "pandas") if m in sys.modules)
print("HEAVY " + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def _ragmeter(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def _loaded(err: str, what: str = "LOADED") -> set[str]:
    line = next(line for line in err.splitlines() if line.startswith(what + " "))
    return set(filter(None, line.removeprefix(what + " ").split(",")))


def test_a_command_loads_only_its_own_module(tmp_path: Path) -> None:
    (tmp_path / "q").write_text("q 0 a 1\n")
    (tmp_path / "r").write_text("q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\n")
    done = _ragmeter(  # the table: the full command
        "eval",
        "--qrels",
        str(tmp_path / "q"),
        "--run",
        str(tmp_path / "r"),
        "-m",
        "mrr",
        "--breakdowns",
        "all",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["aggregate"] == {"mrr": 0.5}
    assert _loaded(done.stderr) == {"eval_cmd", "run_cmd"}  # eval shares the executor options of run


def _stable(text: str) -> dict[str, object]:
    data = json.loads(text)
    for key in ("created_at", "elapsed_seconds"):
        data["provenance"].pop(key)
    return data


def test_a_plain_trec_evaluation_starts_without_the_app_and_prints_the_same_json(tmp_path: Path) -> None:
    """``eval --qrels --run --json`` needs neither typer (whose option checks import pydantic) nor rich."""
    (tmp_path / "q").write_text("q 0 a 1\nq 0 c 2\nz 0 a 1\n")
    (tmp_path / "r").write_text("q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\nq Q0 c 3 1.0 t\n")
    common = [
        "eval",
        "--qrels",
        str(tmp_path / "q"),
        "--run",
        str(tmp_path / "r"),
        "-m",
        "mrr",
        "--metric=ndcg@2",
    ]
    options = ["-k", "3", "-l", "1.5", "-c", "--trec-compat", "--json"]
    fast = _ragmeter(*common, *options)
    assert fast.returncode == 0, fast.stderr
    assert _loaded(fast.stderr) == set() and _loaded(fast.stderr, "HEAVY") == set()
    full = _ragmeter(*common, *options, "--out", str(tmp_path / "out"))  # --out: the full command
    assert full.returncode == 0, full.stderr
    assert _loaded(full.stderr) == {"eval_cmd", "run_cmd"}
    assert _stable(fast.stdout) == _stable(full.stdout)
    assert list(json.loads(fast.stdout)) == list(json.loads(full.stdout))
    table = _ragmeter(*common, *options[:-1])  # the table: rich, still no pydantic
    assert table.returncode == 0, table.stderr
    assert _loaded(table.stderr) == set() and _loaded(table.stderr, "HEAVY") == {"rich"}
    assert "ndcg@2" in table.stdout


def test_the_command_line_quick_start_exits_at_once_with_its_whole_output(tmp_path: Path) -> None:
    """Run as the command itself (``main()`` reads ``sys.argv``), the quick start skips the
    interpreter's teardown (``os._exit``): no ``atexit`` hook runs, yet every byte is written."""
    (tmp_path / "q").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(300)))
    (tmp_path / "r").write_text("".join(f"q{i} Q0 d{i} 1 1.0 t\n" for i in range(300)))
    args = ["eval", "--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r"), "--json"]
    hooked = "import atexit, sys; atexit.register(lambda: print('TEARDOWN', file=sys.stderr)); "
    as_command = subprocess.run(
        [sys.executable, "-c", hooked + "from ragmeter.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert as_command.returncode == 0, as_command.stderr
    assert "TEARDOWN" not in as_command.stderr
    in_process = _ragmeter(*args)  # main(sys.argv[1:]): a caller's process, which exits as usual
    assert in_process.returncode == 0, in_process.stderr
    assert as_command.stdout == in_process.stdout.replace(
        _elapsed(in_process.stdout), _elapsed(as_command.stdout)
    ).replace(_created(in_process.stdout), _created(as_command.stdout))
    assert len(json.loads(as_command.stdout)["per_query"]) == 300


def _elapsed(text: str) -> str:
    return str(json.loads(text)["provenance"]["elapsed_seconds"])


def _created(text: str) -> str:
    return str(json.loads(text)["provenance"]["created_at"])


def test_the_full_command_takes_what_the_quick_start_does_not_read(tmp_path: Path) -> None:
    (tmp_path / "q").write_text("q 0 a 1\n")
    (tmp_path / "r").write_text("q Q0 a 1 1.0 t\n")
    plain = ["eval", "--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r"), "--json"]
    bad_k = _ragmeter(*plain, "-k", "0")
    assert bad_k.returncode == 2 and "Invalid value for '-k'" in bad_k.stderr
    assert _loaded(bad_k.stderr) == {"eval_cmd", "run_cmd"}
    typo = _ragmeter(*plain, "--trec-compta")
    assert typo.returncode == 2 and "No such option: --trec-compta" in typo.stderr
    (tmp_path / "ragmeter.yaml").write_text("metrics:\n  retrieval:\n    metrics: [mrr]\n")
    configured = _ragmeter(*plain, cwd=tmp_path)
    assert configured.returncode == 0, configured.stderr
    assert set(json.loads(configured.stdout)["aggregate"]) == {"mrr"}
    assert _loaded(configured.stderr) == {"eval_cmd", "run_cmd"}
    missing = _ragmeter("eval", "--qrels", str(tmp_path / "nope"), "--run", str(tmp_path / "r"), "--json")
    assert missing.returncode == 2 and missing.stderr.startswith(f"Error: {tmp_path / 'nope'}")


def test_help_and_unknown_commands_see_every_command() -> None:
    done = _ragmeter("--help")
    assert done.returncode == 0
    commands = done.stdout.split("Commands:")[1].split("Examples:")[0]
    listed = [line.split()[0] for line in commands.splitlines() if line.strip()]
    assert listed == ALL_COMMANDS
    done = _ragmeter("evl")
    assert done.returncode == 2
    assert "Error: No such command 'evl'. Did you mean 'eval'?" in done.stderr
    done = _ragmeter("gate", "--help")
    assert done.returncode == 0 and "Usage: ragmeter gate" in done.stdout


def test_every_command_is_mapped_to_the_module_that_defines_it() -> None:
    from ragmeter.cli import _MODULE_OF, _register_commands, app

    _register_commands()
    commands = {info.name: info.callback for info in app.registered_commands}
    groups = {info.name for info in app.registered_groups}
    assert set(commands) | groups == set(_MODULE_OF)
    for name, callback in commands.items():
        assert callback is not None and callback.__module__ == f"ragmeter.cli.{_MODULE_OF[name]}", name
