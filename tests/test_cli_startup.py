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
sys.exit(code)
"""


def _ragmeter(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT, *args], capture_output=True, text=True, timeout=120, check=False
    )


def _loaded(err: str) -> set[str]:
    line = next(line for line in err.splitlines() if line.startswith("LOADED "))
    return set(filter(None, line.removeprefix("LOADED ").split(",")))


def test_a_command_loads_only_its_own_module(tmp_path: Path) -> None:
    (tmp_path / "q").write_text("q 0 a 1\n")
    (tmp_path / "r").write_text("q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\n")
    done = _ragmeter(
        "eval", "--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r"), "-m", "mrr", "--json"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["aggregate"] == {"mrr": 0.5}
    assert _loaded(done.stderr) == {"eval_cmd", "run_cmd"}  # eval shares the executor options of run


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
