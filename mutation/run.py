"""Mutation testing of ragmeter's core modules with mutmut: ``make mutation`` (not part of ``make test``).

    .venv/bin/python mutation/run.py                        # every core module, one after the other
    .venv/bin/python mutation/run.py report/gate report/stats   # some of them (paths under src/ragmeter)
    .venv/bin/python mutation/run.py --list                 # the core modules

The core modules are one table: ``only_mutate`` in ``[tool.mutmut]`` of ``pyproject.toml``
(add a line there to put a new module under mutation testing). Each module is run on its
own (``mutmut run "ragmeter.<module>.*"``, one worker, ``-x -n 0``, mutmut's per-mutant CPU
timeout), and each mutant runs only the tests that call the mutated function (mutmut
records which tests call which function once, in its stats run).

A surviving mutant that cannot change behaviour is *equivalent*: it is listed, with a
one-line reason, in ``mutation/equivalent.toml``, matched by module, function and the
changed lines (not by mutmut's numbering, which shifts when code changes), and left out of
the denominator. The kill rate of a module is ``detected / (mutants - equivalent)``, where
*detected* counts killed mutants, timeouts and crashes, and a mutant no test reaches counts
as surviving.

Each module's result (date, commit, counts, surviving mutants) is appended to
``mutation/history.jsonl``; ``docs/mutation.md`` is then written from it: the latest and
the first recorded run of every module, the equivalent mutants with their reasons, and the
mutants that survived the latest run.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import difflib
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
HISTORY = ROOT / "mutation" / "history.jsonl"
EQUIVALENT = ROOT / "mutation" / "equivalent.toml"
RESULTS = ROOT / "docs" / "mutation.md"
MUTMUT = [sys.executable, "-m", "mutmut"]
DETECTED = {"killed", "timeout", "segfault", "suspicious"}
"""Statuses that mean the tests noticed the mutant (a test failed, hung or the process died)."""
PROGRESS_SECONDS = 30.0


def core_modules() -> list[str]:
    """The table of core modules (``src/ragmeter/...py`` paths) from ``[tool.mutmut] only_mutate``."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    return list(config["tool"]["mutmut"]["only_mutate"])


def dotted(path: str) -> str:
    """``src/ragmeter/report/gate.py`` → ``ragmeter.report.gate``."""
    return path.removeprefix("src/").removesuffix(".py").replace("/", ".")


def function_of(mutant: str, module: str) -> str:
    """The function a mutant changes: ``…gate.x_check_rules__mutmut_4`` → ``check_rules``; methods as ``Class.name``."""
    name = mutant.removeprefix(module + ".").rsplit("__mutmut_", 1)[0]
    if name.startswith("xǁ"):
        return ".".join(part for part in name.split("ǁ")[1:] if part)
    return name.removeprefix("x_")


@dataclass(frozen=True)
class Equivalent:
    """A reviewed equivalent mutant: where, the lines it changes, and why it changes nothing."""

    module: str
    function: str
    removed: tuple[str, ...]
    added: tuple[str, ...]
    reason: str


def load_equivalents(path: Path = EQUIVALENT) -> list[Equivalent]:
    """The reviewed list of equivalent mutants; every entry needs a reason."""
    if not path.exists():
        return []
    entries = tomllib.loads(path.read_text("utf-8")).get("equivalent", [])
    out = []
    for i, entry in enumerate(entries, start=1):
        if not str(entry.get("reason", "")).strip():
            raise SystemExit(f"Error: {path}: equivalent #{i} ({entry.get('function')}): no reason given")
        out.append(
            Equivalent(
                entry["module"],
                entry["function"],
                tuple(_lines(entry.get("removed", ""))),
                tuple(_lines(entry.get("added", ""))),
                entry["reason"].strip(),
            )
        )
    return out


def _lines(text: str | list[str]) -> list[str]:
    items = text if isinstance(text, list) else text.splitlines()
    return [line.strip() for line in items if line.strip()]


class Diffs:
    """The lines each mutant of one module changes, read from mutmut's mutants file (no mutmut call each)."""

    def __init__(self, path: str) -> None:
        source = (ROOT / "mutants" / path).read_text("utf-8")
        lines = source.splitlines()
        self.functions = {
            node.name: "\n".join(lines[node.lineno - 1 : node.end_lineno])
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }

    def of(self, local: str) -> tuple[list[str], list[str]]:
        """Removed and added lines (stripped) of the mutant function ``local`` (``x_f__mutmut_3``)."""
        stem = local.rsplit("__mutmut_", 1)[0]
        plain = stem.rsplit("ǁ", 1)[-1].removeprefix("x_")  # x_f -> f, xǁCǁm -> m
        before = self.functions[stem + "__mutmut_orig"].replace(stem + "__mutmut_orig", plain, 1).splitlines()
        after = self.functions[local].replace(local, plain, 1).splitlines()
        removed, added = [], []
        for line in difflib.unified_diff(before, after, n=0, lineterm=""):
            if line.startswith(("---", "+++", "@@")):
                continue
            if line.startswith("-") and line[1:].strip():
                removed.append(line[1:].strip())
            elif line.startswith("+") and line[1:].strip():
                added.append(line[1:].strip())
        return removed, added


def statuses(module: str) -> dict[str, str]:
    """Every mutant of ``module`` and its status, from ``mutmut results --all true``."""
    shown = subprocess.run(
        [*MUTMUT, "results", "--all", "true"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    out = {}
    for line in shown.stdout.splitlines():
        name, _, status = line.strip().partition(": ")
        if name.startswith(module + ".") and "__mutmut_" in name:
            out[name] = status
    return out


def prune_mutants(root: Path = ROOT) -> None:
    """Delete copies in ``mutants/`` of source and test files that no longer exist (mutmut only adds).

    Compiled extensions (``ragmeter._intern``) are deleted too, so that the current build is
    copied again: mutmut copies a file only when its copy is missing, and an old build would
    fail the tests of the new source.
    """
    for folder in ("src", "tests"):
        for copy in (root / "mutants" / folder).rglob("*.py"):
            if not (root / copy.relative_to(root / "mutants")).exists():
                copy.unlink()
                copy.with_name(copy.name + ".meta").unlink(missing_ok=True)
    for suffix in ("*.so", "*.pyd"):
        for copy in (root / "mutants" / "src").rglob(suffix):
            copy.unlink()


_GENERATE = (
    "import os; os.makedirs('mutants', exist_ok=True)\n"
    "from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir\n"
    "from mutmut.__main__ import create_mutants\n"
    "copy_src_dir(); copy_also_copy_files(); create_mutants(1)\n"
)
"""Makes (or refreshes) the mutants without testing them, through mutmut's own functions."""


def samples_of(paths: list[str], size: int, seed: int) -> dict[str, list[str]]:
    """A seeded random sample of ``size`` mutant names of each module (all of them when it has fewer)."""
    subprocess.run([sys.executable, "-c", _GENERATE], cwd=ROOT, capture_output=True, check=True)
    out = {}
    for path in paths:
        meta = json.loads((ROOT / "mutants" / (path + ".meta")).read_text("utf-8"))
        names = sorted(meta["exit_code_by_key"], key=_natural)
        chosen = random.Random(f"{seed}:{dotted(path)}").sample(names, min(size, len(names)))
        out[path] = sorted(chosen, key=_natural)
    return out


def run_module(module: str, log_dir: Path, names: list[str] | None = None) -> None:
    """``mutmut run`` on one module's mutants (or on ``names``), printing a progress line every half minute."""
    prune_mutants()
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{module}.log"
    print(f"[mutation] {module}: running (log: {log.relative_to(ROOT)})", flush=True)
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as sink:
        proc = subprocess.Popen(
            [*MUTMUT, "run", "--max-children", "1", *(names or [f"{module}.*"])],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"},
        )
        latest = [""]
        reader = threading.Thread(target=_pump, args=(proc, sink, latest), daemon=True)
        reader.start()
        while proc.poll() is None:
            reader.join(PROGRESS_SECONDS)
            if proc.poll() is None and latest[0]:
                print(f"[mutation] {module}: {latest[0]} ({time.monotonic() - started:.0f} s)", flush=True)
        reader.join()
    if proc.returncode != 0:
        tail = log.read_text("utf-8", errors="replace").splitlines()[-15:]
        raise SystemExit(
            f"Error: mutmut failed on {module} (exit {proc.returncode}); see {log}:\n" + "\n".join(tail)
        )


def _pump(proc: subprocess.Popen[bytes], sink: TextIO, latest: list[str]) -> None:
    """Copy mutmut's output to the log, keeping its latest progress line (``n/N 🎉 …``)."""
    assert proc.stdout is not None
    buffer = b""
    while chunk := proc.stdout.read1(4096):  # type: ignore[attr-defined]  # a BufferedReader
        buffer += chunk
        *done, buffer = buffer.replace(b"\r", b"\n").split(b"\n")
        for raw in done:
            text = raw.decode("utf-8", errors="replace").strip()
            if text:
                sink.write(text + "\n")
                if "/" in text and "🎉" in text:
                    latest[0] = text.lstrip("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏ ")


def collect(path: str, names: list[str] | None = None) -> dict[str, object]:
    """One module's result after its run (of ``names`` only, if given): mutants, detected, the rest with diffs."""
    module = dotted(path)
    diffs = Diffs(path)
    found = statuses(module)
    if names is not None:
        found = {name: found[name] for name in names}
    untested = [name for name, status in found.items() if status == "not checked"]  # an interrupted run
    found = {name: status for name, status in found.items() if status != "not checked"}
    undetected = [
        dict(zip(("removed", "added"), diffs.of(name.removeprefix(module + ".")), strict=True))
        | {"function": function_of(name, module), "status": status}
        for name, status in sorted(found.items(), key=lambda item: _natural(item[0]))
        if status not in DETECTED
    ]
    return {
        "mutants": len(found),
        "detected": len(found) - len(undetected),
        "timeouts": sum(status == "timeout" for status in found.values()),
        "untested": len(untested),
        "undetected": undetected,
    }


def _natural(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition("__mutmut_")
    return head, int(number) if number.isdigit() else 0


_MUTANT_NAME = re.compile(r"\bx(?:_|ǁ\w+ǁ)(\w+?)__mutmut_\d+\b")


@dataclass
class Tally:
    """A recorded module run seen through the reviewed equivalents."""

    mutants: int
    detected: int
    equivalent: int
    survivors: list[dict[str, Any]]

    @classmethod
    def of(cls, entry: dict[str, Any], equivalents: list[Equivalent]) -> Tally:
        """Split the undetected mutants of ``entry`` into equivalent ones and survivors."""
        module = entry["module"]
        equivalent, survivors = 0, []
        for mutant in entry["undetected"]:
            removed = tuple(_MUTANT_NAME.sub(r"\1", line) for line in mutant["removed"])
            added = tuple(_MUTANT_NAME.sub(r"\1", line) for line in mutant["added"])
            if any(
                (eq.module, eq.function, eq.removed, eq.added) == (module, mutant["function"], removed, added)
                for eq in equivalents
            ):
                equivalent += 1
            else:
                survivors.append(mutant | {"removed": removed, "added": added})
        return cls(entry["mutants"], entry["detected"], equivalent, survivors)

    @property
    def rate(self) -> float | None:
        """Detected over behaviour-changing mutants (all but the equivalent ones)."""
        denominator = self.mutants - self.equivalent
        return self.detected / denominator if denominator else None

    def percent(self) -> str:
        """The kill rate as ``97.3%``."""
        return "n/a" if self.rate is None else f"{100 * self.rate:.1f}%"


def git_commit() -> str:
    """The commit the run tested, ``+dirty`` when the code or tests differ from it (``MUTATION_COMMIT`` overrides).

    The files this script writes (the history and the results) do not count.
    """
    if os.environ.get("MUTATION_COMMIT"):
        return os.environ["MUTATION_COMMIT"]

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    ours = [f":!{path.relative_to(ROOT)}" for path in (HISTORY, RESULTS)]
    dirty = git("status", "--porcelain", "--", ".", *ours)
    return (git("rev-parse", "--short=10", "HEAD") or "unknown") + ("+dirty" if dirty else "")


def read_history(path: Path = HISTORY) -> list[dict[str, Any]]:
    """Every recorded module run, oldest first (entries of the first format, with ``counts``, too)."""
    if not path.exists():
        return []
    entries = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    for entry in entries:
        if "undetected" not in entry:
            counts = entry.pop("counts")
            entry |= {"mutants": counts["mutants"], "detected": counts["detected"]}
            entry["undetected"] = entry.pop("survivors")
    return entries


def write_results(modules: list[str], equivalents: list[Equivalent]) -> None:
    """Write ``docs/mutation.md`` from the history: latest and first run per module, equivalents, survivors."""
    history = read_history()
    latest: dict[str, dict[str, Any]] = {}
    first: dict[str, dict[str, Any]] = {}
    for entry in history:
        name = str(entry["module"])
        first.setdefault(name, entry)
        latest[name] = entry
    lines = [
        "# Mutation testing",
        "",
        "Written by `make mutation` (`mutation/run.py`, with mutmut); do not edit by hand.",
        "The core modules are listed once, in `[tool.mutmut] only_mutate` of `pyproject.toml`.",
        "A module's kill rate is detected mutants (a test failed, timed out or crashed) over all",
        "mutants but the reviewed equivalent ones (`mutation/equivalent.toml`, listed below).",
        "A mutant that no test reaches counts as surviving. Goal: at least 90% in every module.",
        "A run marked *sample* tested a seeded random sample of the module's mutants (`--sample N`).",
        "",
        'Run `make mutation` (every module, one at a time), `make mutation MODULES="report/gate io/trec"`, or',
        "`.venv/bin/python mutation/run.py --sample 30 --seed 1` for a quick look. Each mutant runs only the",
        "tests that call the mutated function (`-x -n 0`), under mutmut's CPU-time limit (15 times those",
        "tests' own time); a timeout counts as detected.",
        "",
        "| module | mutants | equivalent | detected | survived | kill rate | run on | commit | first recorded |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |",
    ]
    total = Tally(0, 0, 0, [])
    for path in modules:
        module = dotted(path)
        if module not in latest:
            lines.append(f"| `{module}` | | | | | not run yet | | | |")
            continue
        now, then = latest[module], first[module]
        tally = Tally.of(now, equivalents)
        total = Tally(
            total.mutants + tally.mutants,
            total.detected + tally.detected,
            total.equivalent + tally.equivalent,
            [],
        )
        earlier = "this run"
        if then is not now:
            earlier = f"{Tally.of(then, equivalents).percent()}{_sampled(then)} ({then['date']}, `{then['commit']}`)"
        lines.append(
            f"| `{module}` | {tally.mutants}{_sampled(now)} | {tally.equivalent} | {tally.detected} | "
            f"{len(tally.survivors)} | "
            f"**{tally.percent()}** | {now['date']} | `{now['commit']}` | {earlier} |"
        )
    survived = total.mutants - total.equivalent - total.detected
    lines += [
        f"| **all** | {total.mutants} | {total.equivalent} | {total.detected} | {survived} | "
        f"**{total.percent()}** | | | |",
        "",
        "## Equivalent mutants (reviewed)",
        "",
        "Each changes code without changing what any caller can observe.",
        "",
    ]
    for eq in sorted(equivalents, key=lambda e: (e.module, e.function)):
        change = "; ".join(f"`{a}` → `{b}`" for a, b in _pairs(eq.removed, eq.added))
        lines.append(f"- `{eq.module}.{eq.function}`: {change} — {eq.reason}")
    lines += ["", "## Surviving mutants (latest run)", ""]
    any_survivor = False
    for path in modules:
        module = dotted(path)
        if module not in latest:
            continue
        for s in Tally.of(latest[module], equivalents).survivors:
            any_survivor = True
            change = "; ".join(f"`{a}` → `{b}`" for a, b in _pairs(s["removed"], s["added"]))
            lines.append(f"- `{module}.{s['function']}` ({s['status']}): {change}")
    if not any_survivor:
        lines.append("None.")
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _sampled(entry: dict[str, Any]) -> str:
    sample, untested = entry.get("sample"), entry.get("untested", 0)
    notes = ([f"sample, seed {sample['seed']}"] if sample else []) + (
        [f"{untested} not run"] if untested else []
    )
    return f" ({', '.join(notes)})" if notes else ""


def _pairs(removed: Iterable[str], added: Iterable[str]) -> list[tuple[str, str]]:
    before, after = list(removed), list(added)
    if len(before) == len(after):
        return list(zip(before, after, strict=True))
    return [("\n".join(before), "\n".join(after))]


def main(argv: list[str] | None = None) -> int:
    """Run the chosen (default: all) core modules and rewrite the results file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "modules", nargs="*", help="modules under src/ragmeter (e.g. report/gate); default: all"
    )
    parser.add_argument("--list", action="store_true", help="print the core modules and exit")
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite docs/mutation.md from the history"
    )
    parser.add_argument(
        "--no-run", action="store_true", help="record the results of the last mutmut run, without running it"
    )
    parser.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="run a seeded random sample of N mutants per module (a quick look)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of --sample (default 0)")
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="forget which tests call which function (needed after code moved between modules)",
    )
    args = parser.parse_args(argv)
    table = core_modules()
    if args.list:
        print("\n".join(table))
        return 0
    chosen = table
    if args.modules:
        given = [m.removeprefix("src/ragmeter/").removesuffix(".py") for m in args.modules]
        chosen = list(dict.fromkeys(f"src/ragmeter/{m}.py" for m in given))  # in the order given
        unknown = [m for m in chosen if m not in table]
        if unknown:
            raise SystemExit(f"Error: not a core module (see --list): {', '.join(unknown)}")
    equivalents = load_equivalents()
    if args.fresh:  # mutmut re-collects only new tests' calls: functions moved since are otherwise untested
        (ROOT / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    if not args.report_only:
        samples = samples_of(chosen, args.sample, args.seed) if args.sample else {}
        tested = git_commit()
        if samples and not args.no_run:  # one mutmut run for every sample: one clean-test run, not one each
            run_module("samples", ROOT / "mutants" / "logs", [n for names in samples.values() for n in names])
        for path in chosen:
            commit = tested if samples else git_commit()  # each module's own: the code may move on meanwhile
            if not args.no_run and not samples:
                run_module(dotted(path), ROOT / "mutants" / "logs")
            entry: dict[str, Any] = {"module": dotted(path), "date": dt.date.today().isoformat()}
            if args.sample:
                entry["sample"] = {"size": args.sample, "seed": args.seed}
            entry |= {"commit": commit, **collect(path, samples.get(path))}
            with HISTORY.open("a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False) + "\n")
            tally = Tally.of(entry, equivalents)
            print(
                f"[mutation] {entry['module']}: {tally.detected} of {tally.mutants - tally.equivalent} "
                f"detected ({tally.percent()}), {tally.equivalent} equivalent",
                flush=True,
            )
    write_results(table, equivalents)
    print(f"[mutation] wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
