"""Read a results folder: ``metrics.json`` (an :class:`~ragmeter.results.EvalResult`) and ``config.json``.

>>> import tempfile
>>> from ragmeter.results import EvalResult
>>> d = EvalResult(aggregate={"mrr": 1.0}, per_query={"q": {"mrr": 1.0}}, n_queries=1,
...                n_scored={"mrr": 1}, n_skipped={"mrr": 0}).write(tempfile.mkdtemp())
>>> load_results(d).result.aggregate
{'mrr': 1.0}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragmeter.errors import InputError
from ragmeter.io.records import describe_validation_error
from ragmeter.results import SCHEMA_VERSION, EvalResult


@dataclass(frozen=True)
class LoadedResults:
    """A results folder as read from disk."""

    path: Path
    result: EvalResult
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """A short name for tables: the folder name."""
        return self.path.name or str(self.path)


def load_results(path: str | Path) -> LoadedResults:
    """Load ``metrics.json`` (required) and ``config.json`` (optional) from a results folder.

    A path to a ``metrics.json`` file is accepted too.
    """
    path = Path(path)
    folder = path.parent if path.is_file() else path
    metrics_file = path if path.is_file() else path / "metrics.json"
    if not folder.exists():
        raise InputError("results folder not found", where=str(folder))
    if not metrics_file.is_file():
        raise InputError("no metrics.json here; is this a ragmeter results folder?", where=str(folder))
    try:
        data = json.loads(metrics_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc.msg})", where=f"{metrics_file}:{exc.lineno}") from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", where=str(metrics_file))
    version = str(data.get("schema_version", ""))
    if version and version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise InputError(
            f"results schema version {version} is not readable by this ragmeter (reads {SCHEMA_VERSION})",
            where=str(metrics_file),
        )
    try:
        result = EvalResult.model_validate(data)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc), where=str(metrics_file)) from None
    config: dict[str, Any] = {}
    config_file = folder / "config.json"
    if config_file.is_file():
        try:
            loaded = json.loads(config_file.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"invalid JSON ({exc.msg})", where=f"{config_file}:{exc.lineno}") from None
        config = loaded if isinstance(loaded, dict) else {}
    return LoadedResults(folder, result, config)
