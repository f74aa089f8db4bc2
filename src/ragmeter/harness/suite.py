"""The suite file: what to ask, whom to ask, how to score it, and where the results go.

A suite is YAML (or JSON). Every path in it is relative to the suite file.
Validation is strict (unknown keys are errors) and every error is one line
naming the file, the line and the key::

    Error: suite.yaml:12: system.url: must start with http:// or https://, got 'localhost:8000/ask'

>>> suite = Suite.model_validate({
...     "name": "smoke",
...     "dataset": "tests.yaml",
...     "system": {"type": "python", "function": "my_rag.api:answer"},
... })
>>> suite.concurrency, suite.timeout_seconds, suite.retries, suite.system.type
(4, 30.0, 2, 'python')

Several systems are listed by name under ``systems:`` (as promptfoo lists providers) instead
of ``system:``; one run asks each of them every question and compares them, the first (or
``baseline:``) against each other::

    systems:
      bm25:    {type: builtin, vault: vault/}
      bm25-b0: {type: builtin, vault: vault/, bm25_b: 0.0}
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ragmeter.errors import ConfigError, InputError, MetricNameError
from ragmeter.harness.framework_suite import FRAMEWORK_SYSTEMS, MetadataMapping
from ragmeter.harness.suite_models import BuiltinSystem, HttpSystem, PythonSystem, Suite, SystemSpec
from ragmeter.harness.templates import ENV_REFERENCE, PLACEHOLDER, expand_env
from ragmeter.io.records import describe_validation_error, read_structured, read_text
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.urls import http_url_problem

__all__ = [  # the models are re-exported: suite files are read here
    "BuiltinSystem",
    "HttpSystem",
    "LoadedSuite",
    "PythonSystem",
    "Suite",
    "SystemSpec",
    "check_builtin",
    "check_environment",
    "check_judge",
    "check_metric_names",
    "check_response_mapping",
    "check_systems",
    "format_loc",
    "load_suite",
    "tidy_path",
    "yaml_line",
]

# -- locating errors in the file -------------------------------------------------------------------


def format_loc(loc: Sequence[str | int]) -> str:
    """``("system", "headers", "X")`` → ``system.headers.X``; indices as ``[i]``.

    >>> format_loc(("metrics", 1))
    'metrics[1]'
    """
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def yaml_line(text: str, loc: Sequence[str | int]) -> int | None:
    """The 1-based line of the key (or item) at ``loc``, or of its nearest existing parent.

    >>> yaml_line("name: x\\nsystem:\\n  type: http\\n  url: y\\n", ("system", "url"))
    4
    >>> yaml_line("name: x\\nsystem:\\n  type: http\\n", ("system", "url"))
    2
    """
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    if node is None:
        return None
    line = int(node.start_mark.line) + 1
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                    line = int(key_node.start_mark.line) + 1
                    node = value_node
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = int(node.start_mark.line) + 1
        else:
            return line
    return line


def _clean_loc(data: Any, loc: Sequence[str | int]) -> list[str | int]:
    """Drop pydantic's union labels (``system.http.url`` → ``system.url``) by walking the data."""
    out: list[str | int] = []
    current = data
    for index, part in enumerate(loc):
        present = (isinstance(current, dict) and part in current) or (
            isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        )
        if present:
            out.append(part)
            current = current[part]
        elif index == len(loc) - 1 and isinstance(current, dict) and isinstance(part, str):
            out.append(part)
    return out


_SYSTEM_MODELS: dict[str, type[BaseModel]] = {
    "http": HttpSystem,
    "python": PythonSystem,
    "builtin": BuiltinSystem,
    **FRAMEWORK_SYSTEMS,
}


def _model_at(data: Any, parent: Sequence[str | int]) -> type[BaseModel] | None:
    if not parent:
        return Suite
    path = list(parent)
    if path[:1] == ["systems"] and len(path) >= 2:  # systems.<name>... is read as system...
        path = ["system", *path[2:]]
        system = _value_or_none(data, ["systems", parent[1]])
    else:
        system = _value_or_none(data, ["system"])
    if path == ["system"] and isinstance(system, dict):
        return _SYSTEM_MODELS.get(str(system.get("type")))
    if path == ["system", "metadata"]:
        return MetadataMapping
    return None


def _value_or_none(data: Any, loc: Sequence[str | int]) -> Any:
    try:
        return _value_at(data, loc)
    except (KeyError, IndexError, TypeError):
        return None


def _describe(data: Any, exc: ValidationError) -> tuple[list[str | int], str]:
    """The key path and a one-line message for the first validation error (a misspelt key first)."""
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = _clean_loc(data, err["loc"])
    kind = err["type"]
    if kind == "extra_forbidden":
        model = _model_at(data, loc[:-1])
        message = "unknown key"
        if model is not None:
            known = list(model.model_fields)
            close = difflib.get_close_matches(str(loc[-1]), known, n=1)
            message += f"; did you mean {close[0]!r}?" if close else f" (known keys: {', '.join(known)})"
        return loc, message
    if kind == "missing":
        return loc, "required key is missing"
    if kind in {"union_tag_invalid", "union_tag_not_found"}:
        tags = ", ".join(_SYSTEM_MODELS)
        if kind == "union_tag_not_found":
            return [*loc, "type"], f"required key is missing (one of: {tags})"
        got = err.get("ctx", {}).get("tag")
        return [*loc, "type"], f"unknown system type {got!r} (expected one of: {tags})"
    if kind == "model_attributes_type":
        return loc, f"must be a mapping, got {type(_value_at(data, loc)).__name__}"
    return loc, str(err["msg"]).removeprefix("Value error, ")


def _value_at(data: Any, loc: Sequence[str | int]) -> Any:
    for part in loc:
        data = data[part]
    return data


def tidy_path(path: Path) -> Path:
    """``path`` resolved, then made relative to the current folder when it lies inside it."""
    resolved = path.resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve())
    except ValueError:
        return resolved


# -- loading ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedSuite:
    """A validated suite with the file it came from and its paths resolved."""

    suite: Suite
    path: Path
    text: str = field(repr=False)
    system_name: str | None = None
    """Set on the view of one of several ``systems`` (:meth:`system_views`): its name."""

    @property
    def base_dir(self) -> Path:
        """The folder the suite's relative paths start from."""
        return self.path.parent

    def resolve(self, relative: str) -> Path:
        """A path from the suite, resolved against the suite's folder (``~`` expanded).

        The result is tidy for messages: relative to the current folder when
        inside it (``results/demo``, not ``examples/../results/demo``), else absolute.
        """
        candidate = Path(relative).expanduser()
        return tidy_path(candidate if candidate.is_absolute() else self.base_dir / candidate)

    @property
    def dataset_path(self) -> Path:
        """The dataset file."""
        return self.resolve(self.suite.dataset)

    @property
    def results_dir(self) -> Path:
        """The results folder (default ``results/<name>`` next to the suite)."""
        return self.resolve(self.suite.results_dir or f"results/{self.suite.name}")

    @property
    def system(self) -> SystemSpec:
        """The system under test (of a single-system suite, or of this view of one of several)."""
        if self.suite.system is None:
            raise ConfigError("this suite lists several systems; ask for one of its system_views()")
        return self.suite.system

    def system_views(self) -> list[LoadedSuite]:
        """One single-system suite per system: the suite itself, or one per entry of ``systems``.

        A view's results folder is ``<results_dir>/<name>``; its errors point at ``systems.<name>``.
        """
        if self.suite.systems is None:
            return [self]
        top = self.suite.results_dir or f"results/{self.suite.name}"
        return [
            LoadedSuite(
                self.suite.model_copy(
                    update={"system": spec, "systems": None, "baseline": None, "results_dir": f"{top}/{name}"}
                ),
                self.path,
                self.text,
                name,
            )
            for name, spec in self.suite.systems.items()
        ]

    def _in_file(self, loc: Sequence[str | int]) -> tuple[str | int, ...]:
        """``loc`` as written in the file: a view's ``system.url`` is ``systems.<name>.url``."""
        if self.system_name is not None and loc and loc[0] == "system":
            return ("systems", self.system_name, *loc[1:])
        return tuple(loc)

    def where(self, *loc: str | int) -> str:
        """``suite.yaml:12`` for the key at ``loc`` (for error messages)."""
        loc = self._in_file(loc)
        line = yaml_line(self.text, loc) if self.path.suffix.lower() != ".json" else None
        return f"{self.path}:{line}" if line is not None else str(self.path)

    def error(self, loc: Sequence[str | int], message: str) -> ConfigError:
        """A :class:`ConfigError` pointing at ``loc`` in the suite file."""
        return ConfigError(f"{format_loc(self._in_file(loc))}: {message}", where=self.where(*loc))


def load_suite(path: str | Path, *, environ: Mapping[str, str] | None = None) -> LoadedSuite:
    """Read and validate a suite file; check that its dataset exists and its ``${ENV}`` are set.

    Errors are :class:`~ragmeter.errors.ConfigError` with ``where`` = ``file:line``.
    """
    path = Path(path)
    try:
        text = read_text(path)
        data = read_structured(path)
    except InputError as exc:
        raise ConfigError(exc.message, where=exc.where) from None
    if not isinstance(data, dict):
        raise ConfigError(f"a suite must be a mapping, got {type(data).__name__}", where=str(path))
    loaded_text = text
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        loc, message = _describe(data, exc)
        line = yaml_line(loaded_text, loc) if path.suffix.lower() != ".json" else None
        where = f"{path}:{line}" if line is not None else str(path)
        raise ConfigError(f"{format_loc(loc)}: {message}" if loc else message, where=where) from None
    loaded = LoadedSuite(suite, path, loaded_text)
    check_systems(loaded)
    dataset = loaded.dataset_path
    if not dataset.is_file():
        what = "is a directory, expected a file" if dataset.is_dir() else "file not found"
        raise loaded.error(["dataset"], f"{what}: {dataset}")
    check_metric_names(loaded)
    check_judge(loaded)
    for view in loaded.system_views():
        check_response_mapping(view)
        check_environment(view, os.environ if environ is None else environ)
        check_builtin(view)
    return loaded


def check_systems(loaded: LoadedSuite) -> None:
    """Exactly one of ``system`` and ``systems``; a ``baseline`` names one of the ``systems``."""
    suite = loaded.suite
    if suite.system is None and suite.systems is None:
        raise loaded.error(
            ["system"], "required key is missing (or list several under 'systems', each by name)"
        )
    if suite.system is not None and suite.systems is not None:
        raise loaded.error(["systems"], "give either 'system' (one) or 'systems' (several by name), not both")
    if suite.baseline is not None:
        if suite.systems is None:
            raise loaded.error(["baseline"], "a baseline needs several systems under 'systems'")
        if suite.baseline not in suite.systems:
            close = difflib.get_close_matches(suite.baseline, list(suite.systems), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (the systems: {', '.join(suite.systems)})"
            raise loaded.error(["baseline"], f"{suite.baseline!r} is not one of the systems{hint}")


def check_response_mapping(loaded: LoadedSuite) -> None:
    """Every key of an http system's ``response`` mapping must be a field of the output contract.

    An unknown key would record nothing (``retreived: chunks`` scores every query 0).
    """
    system = loaded.suite.system
    if not isinstance(system, HttpSystem) or not system.response:
        return
    fields = list(SystemOutput.model_fields)
    for key in system.response:
        if key not in fields:
            close = difflib.get_close_matches(key, fields, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"the output fields are {', '.join(fields)}"
            raise loaded.error(["system", "response", key], f"unknown output field; {hint}")


def check_judge(loaded: LoadedSuite) -> None:
    """The suite's ``judge:`` block must be a valid judge config (checked before any question is asked).

    A block holding only ``bertscore:`` (the ``bertscore_*`` metrics' settings) needs no endpoint:
    its settings are checked as those of a full config.
    """
    block = loaded.suite.judge
    if block is None:
        return
    from ragmeter.judges.config import ENDPOINT_STAND_INS, JudgeConfig, bertscore_only, not_a_judge_block

    if not isinstance(block, dict):
        raise loaded.error(["judge"], not_a_judge_block(block))
    stand_ins = ENDPOINT_STAND_INS if bertscore_only(block) else {}
    try:
        JudgeConfig.model_validate({**stand_ins, **block})
    except ValidationError as exc:
        errors = exc.errors()
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = [part for part in err["loc"] if isinstance(part, (str, int))]
        message = describe_validation_error(exc, JudgeConfig)
        raise ConfigError(
            f"judge.{message}" if loc else f"judge: {message}", where=loaded.where("judge", *loc)
        ) from None


def check_metric_names(loaded: LoadedSuite) -> None:
    """Every metric name must parse and be known (checked before any question is asked)."""
    from ragmeter.metrics.registry import resolve_metric

    for index, name in enumerate(loaded.suite.metrics or []):
        try:
            resolve_metric(name)
        except MetricNameError as exc:
            raise loaded.error(["metrics", index], str(exc)) from None


def check_environment(loaded: LoadedSuite, environ: Mapping[str, str]) -> None:
    """Every ``${NAME}`` of an http system must be set in the environment."""
    system = loaded.suite.system
    if not isinstance(system, HttpSystem):
        return
    for loc, name in system.env_references():
        if name not in environ:
            raise loaded.error(["system", *loc], f"environment variable {name} is not set")
    if ENV_REFERENCE.search(system.url):
        problem = http_url_problem(PLACEHOLDER.sub("x", expand_env(system.url, environ)))
        if problem is not None:  # named as written: the expanded URL may hold a secret
            raise loaded.error(
                ["system", "url"], f"{problem} once its variables are expanded, got {system.url!r}"
            )


def check_builtin(loaded: LoadedSuite) -> None:
    """A builtin system's settings must be valid pipeline settings, and its vault must exist."""
    system = loaded.suite.system
    if not isinstance(system, BuiltinSystem):
        return
    from ragmeter.pipeline.config import PipelineConfig

    extra = system.model_extra or {}
    if "k" in extra:
        raise loaded.error(
            ["system", "k"], "set k at the top level of the suite (it is what the pipeline retrieves)"
        )
    settings = system.pipeline_settings(loaded.resolve)
    try:
        PipelineConfig.model_validate(settings)
    except ValidationError as exc:
        errors = exc.errors()
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        key = str(err["loc"][0]) if err["loc"] else "type"
        if err["type"] == "extra_forbidden" and key == "options":
            raise loaded.error(
                ["system", key],
                "unknown key; the pipeline's settings go directly under system: "
                "(max_chunk_tokens: 200, not options: {max_chunk_tokens: 200})",
            ) from None
        if err["type"] == "extra_forbidden":
            known = [*BuiltinSystem.model_fields, *(f for f in PipelineConfig.model_fields if f != "k")]
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else " (see docs/pipeline.md for the settings)"
            raise loaded.error(["system", key], f"unknown key{hint}") from None
        raise loaded.error(["system", key], str(err["msg"]).removeprefix("Value error, ")) from None
    vault = loaded.resolve(system.vault)
    if not vault.is_dir():
        what = "is a file, expected a folder of notes" if vault.exists() else "folder not found"
        raise loaded.error(["system", "vault"], f"{what}: {vault}")
