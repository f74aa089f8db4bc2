"""The ``python`` system: ``package.module:function`` called with each sample as a dict.

The function receives the sample (``id``, ``input``, metadata and the other
fields of the dataset record) plus the suite's ``kwargs``, and ``k=`` when its
signature has a ``k`` parameter (or ``**kwargs``). It returns the output
contract. Plain functions run on their own thread (several at once, up to the
suite's ``concurrency``); ``async def`` functions run on the event loop.

Exceptions it raises are recorded per question as ``"Type: message"``, as the http
system records its failures (:func:`~ragmeter.harness.calls.call_failure`): connection
errors and HTTP 429 / 5xx of the clients it uses are retried, a timeout is a timeout.

>>> import_function("json:dumps", python_path=[])({"a": 1})
'{"a": 1}'
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragmeter.harness.calls import CallFailed, call_failure, call_in_thread, describe_exception, sample_dict
from ragmeter.harness.suite import PythonSystem
from ragmeter.schema.samples import Sample


class FunctionImportError(Exception):
    """The function named by the suite cannot be imported (message is one line).

    ``missing`` names the module that was not found, when that was the problem.
    """

    def __init__(self, message: str, *, missing: str | None = None) -> None:
        super().__init__(message)
        self.missing = missing


def import_object(spec: str, *, python_path: Sequence[Path | str]) -> Any:
    """Import ``package.module:name`` (``name`` may be dotted); ``python_path`` folders go first on ``sys.path``.

    >>> import_object("os.path:sep.join", python_path=[])("ab")
    'a/b'
    """
    module_name, _, attribute = spec.partition(":")
    for folder in reversed([str(Path(p).resolve()) for p in python_path]):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise FunctionImportError(f"cannot import module {module_name!r} ({exc})", missing=exc.name) from None
    except Exception as exc:  # the module itself failed while importing
        raise FunctionImportError(f"importing {module_name!r} failed: {describe_exception(exc)}") from None
    found: Any = module
    for part in attribute.split("."):
        found = getattr(found, part, _MISSING)
        if found is _MISSING:
            raise FunctionImportError(f"module {module_name!r} has no attribute {attribute!r}")
    return found


_MISSING = object()


def import_function(spec: str, *, python_path: Sequence[Path | str]) -> Callable[..., Any]:
    """Import ``package.module:function``; the ``python_path`` folders are put first on ``sys.path``."""
    function = import_object(spec, python_path=python_path)
    if not callable(function):
        raise FunctionImportError(f"{spec} is a {type(function).__name__}, not a function")
    return function  # type: ignore[no-any-return]


def _accepts_k(function: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "k" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


class PythonAdapter:
    """Calls a Python function in-process."""

    def __init__(
        self, system: PythonSystem, *, python_path: Sequence[Path], function: Callable[..., Any] | None = None
    ) -> None:
        self.system = system
        self.description = system.function
        self._function = function or import_function(system.function, python_path=python_path)
        self._pass_k = "k" not in system.kwargs and _accepts_k(self._function)
        self._is_async = inspect.iscoroutinefunction(self._function)

    async def start(self) -> None:
        """Nothing to open: the function was imported when the adapter was made."""

    async def aclose(self) -> None:
        """Nothing to close."""

    async def call(self, sample: Sample, *, k: int) -> Any:
        """Call the function with the sample; its exceptions become :class:`CallFailed`."""
        kwargs = dict(self.system.kwargs)
        if self._pass_k:
            kwargs["k"] = k
        data = sample_dict(sample)
        try:
            if self._is_async:
                return await self._function(data, **kwargs)
            return await call_in_thread(lambda: self._function(data, **kwargs))
        except CallFailed:
            raise
        except Exception as exc:
            raise call_failure(exc) from None
