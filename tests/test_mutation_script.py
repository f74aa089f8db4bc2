"""The bookkeeping of `make mutation` (mutation/run.py): names, equivalents and kill rates."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "mutation" / "run.py"


@pytest.fixture(scope="module")
def run() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_run", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_run"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_names(run: ModuleType) -> None:
    assert run.dotted("src/ragmeter/report/gate.py") == "ragmeter.report.gate"
    assert (
        run.function_of("ragmeter.report.gate.x_check_rules__mutmut_12", "ragmeter.report.gate")
        == "check_rules"
    )
    assert (
        run.function_of("ragmeter.io.docnos.xǁKeyIndexǁfind__mutmut_3", "ragmeter.io.docnos")
        == "KeyIndex.find"
    )
    assert run.function_of("ragmeter.io.trec.x__parse__mutmut_1", "ragmeter.io.trec") == "_parse"


def test_every_core_module_exists_and_the_equivalents_have_reasons(run: ModuleType) -> None:
    modules = run.core_modules()
    assert "src/ragmeter/report/gate.py" in modules and len(modules) == len(set(modules))
    for path in modules:
        assert (SCRIPT.parent.parent / path).is_file(), path
    for eq in run.load_equivalents():
        assert eq.reason and eq.module.startswith("ragmeter.") and (eq.removed or eq.added)


def test_pruning_drops_removed_files_and_every_compiled_copy(run: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "kept.py").write_text("")
    copies = tmp_path / "mutants" / "src" / "pkg"
    copies.mkdir(parents=True)
    for name in ("kept.py", "gone.py", "gone.py.meta", "_ext.cpython-311-x86_64-linux-gnu.so"):
        (copies / name).write_text("")
    run.prune_mutants(tmp_path)
    assert sorted(p.name for p in copies.iterdir()) == ["kept.py"]  # an old build is copied again


def test_a_reviewed_equivalent_leaves_the_denominator(run: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "eq.toml").write_text(
        '[[equivalent]]\nmodule = "ragmeter.m"\nfunction = "f"\nremoved = "a = 1"\nadded = "a = 2"\nreason = "why"\n',
        encoding="utf-8",
    )
    equivalents = run.load_equivalents(tmp_path / "eq.toml")
    entry = {
        "module": "ragmeter.m",
        "mutants": 10,
        "detected": 7,
        "undetected": [
            {"function": "f", "status": "survived", "removed": ["a = 1"], "added": ["a = 2"]},
            {"function": "g", "status": "survived", "removed": ["a = 1"], "added": ["a = 2"]},
            {"function": "f", "status": "no tests", "removed": ["b = 1"], "added": ["b = 2"]},
        ],
    }
    tally = run.Tally.of(entry, equivalents)
    assert (tally.mutants, tally.detected, tally.equivalent, len(tally.survivors)) == (10, 7, 1, 2)
    assert tally.rate == 7 / 9 and tally.percent() == "77.8%"
    assert run.Tally(0, 0, 0, []).percent() == "n/a"


def test_an_equivalent_without_a_reason_is_refused(run: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "eq.toml").write_text(
        '[[equivalent]]\nmodule = "ragmeter.m"\nfunction = "f"\nadded = "a = 2"\nreason = " "\n',
        encoding="utf-8",
    )
    with pytest.raises(SystemExit, match="no reason given"):
        run.load_equivalents(tmp_path / "eq.toml")


def test_mutant_names_in_recorded_diffs_read_as_the_function(run: ModuleType) -> None:
    equivalents = [run.Equivalent("ragmeter.m", "f", ("def f(a=1):",), ("def f(a=2):",), "why")]
    entry = {
        "module": "ragmeter.m",
        "mutants": 1,
        "detected": 0,
        "undetected": [
            {
                "function": "f",
                "status": "survived",
                "removed": ["def x_f__mutmut_3(a=1):"],
                "added": ["def x_f__mutmut_3(a=2):"],
            }
        ],
    }
    assert run.Tally.of(entry, equivalents).equivalent == 1
