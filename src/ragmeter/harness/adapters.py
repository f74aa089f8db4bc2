"""Choosing the adapter for a suite's ``system`` (http, python, builtin, or a framework object).

Problems that can be found before any question is asked — a function that
does not import, a vault that does not exist — are reported here, pointing at
the suite line.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragmeter.harness.calls import Adapter
from ragmeter.harness.framework_suite import FrameworkSystem
from ragmeter.harness.suite import BuiltinSystem, HttpSystem, LoadedSuite, PythonSystem


def make_adapter(loaded: LoadedSuite, *, default_k: int, environ: Mapping[str, str] | None = None) -> Adapter:
    """The adapter for the suite's system (an http system registers its secrets: :mod:`ragmeter.redaction`)."""
    suite = loaded.suite
    system = loaded.system
    if isinstance(system, HttpSystem):
        from ragmeter.harness.http import HttpAdapter

        return HttpAdapter(
            system, concurrency=suite.concurrency, timeout_seconds=suite.timeout_seconds, environ=environ
        )
    if isinstance(system, PythonSystem):
        from ragmeter.harness.python import FunctionImportError, PythonAdapter

        try:
            python = PythonAdapter(system, python_path=[loaded.resolve(p) for p in system.python_path])
        except FunctionImportError as exc:
            raise loaded.error(["system", "function"], str(exc)) from None
        return python
    if isinstance(system, BuiltinSystem):
        from ragmeter.harness.builtin import BuiltinAdapter

        return BuiltinAdapter.from_suite(loaded, system, default_k=default_k)
    return _framework_adapter(loaded, system)


def _framework_adapter(loaded: LoadedSuite, system: FrameworkSystem) -> Adapter:
    """Import the framework object and wrap it; problems point at the suite key to fix."""
    from ragmeter.harness.frameworks import EXTRAS, FrameworkSetupError, framework_adapter
    from ragmeter.harness.python import FunctionImportError, import_object

    try:
        obj = import_object(system.object, python_path=[loaded.resolve(p) for p in system.python_path])
    except FunctionImportError as exc:
        extra = EXTRAS.get((exc.missing or "").partition(".")[0])
        hint = f"; install the framework with: pip install 'ragmeter[{extra}]'" if extra else ""
        raise loaded.error(["system", "object"], f"{exc}{hint}") from None
    try:
        return framework_adapter(obj, system, base_dir=loaded.base_dir)
    except FrameworkSetupError as exc:
        raise loaded.error(
            ["system", exc.key], str(exc)
        ) from None  # pragma: no cover - the schema forbids it
