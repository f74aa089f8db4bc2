"""The suite file's models: the systems (http, python, builtin, frameworks) and the suite itself.

Validation is strict (unknown keys are errors); :mod:`ragmeter.harness.suite` loads a file into
these models and turns their errors into one line naming the file, the line and the key.

>>> BuiltinSystem.model_validate({"type": "builtin", "vault": "vault/"}).type
'builtin'
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from ragmeter.harness.framework_suite import (
    DspySystem,
    HaystackSystem,
    LangchainSystem,
    LlamaIndexSystem,
)
from ragmeter.harness.templates import (
    ENV_REFERENCE,
    PLACEHOLDER,
    TemplateError,
    compile_jmespath,
    compile_template,
    env_names,
)
from ragmeter.metrics.names import MAX_K
from ragmeter.schema.strict_numbers import NumbersModel
from ragmeter.schema.urls import http_url_problem

DEFAULT_HTTP_BODY: dict[str, Any] = {"question": "{{ question }}", "k": "{{ k }}"}
"""The request body sent by an http system that gives no ``body`` (methods other than GET)."""

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
FUNCTION_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"


def _check_jmespath(expression: str) -> str:
    try:
        compile_jmespath(expression)
    except TemplateError as exc:
        raise ValueError(str(exc)) from None
    return expression


JMESPathExpression = Annotated[str, AfterValidator(_check_jmespath)]
Positive = Annotated[float, Field(strict=True, gt=0)]
NonNegative = Annotated[float, Field(strict=True, ge=0)]


class HttpSystem(NumbersModel):
    """``system.type: http`` — a JSON API called once per question."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["http"]
    url: str = Field(description="Endpoint; may contain ${ENV} references.")
    method: Literal["GET", "POST", "PUT"] = "POST"
    headers: dict[str, str] = Field(
        default_factory=dict, description="Header values may contain ${ENV} references (secrets)."
    )
    secret_headers: list[str] = Field(
        default_factory=list,
        description="Headers whose values are secrets, besides those named like one (Authorization, *key*, …).",
    )
    params: dict[str, Any] = Field(
        default_factory=dict, description="Query-string template ({{ expression }} and ${ENV})."
    )
    body: Any = Field(
        default=None, description="JSON body template; default {question, k} for POST/PUT, none for GET."
    )
    response: dict[str, JMESPathExpression] | None = Field(
        default=None,
        description="Output field -> JMESPath over the JSON response; absent: the response is the output.",
    )

    @field_validator("method", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        _compile_or_raise(value)
        if ENV_REFERENCE.search(value) is None:  # one with ${ENV} is checked once the variables are known
            problem = http_url_problem(PLACEHOLDER.sub("x", value))
            if problem is not None:
                raise ValueError(f"{problem}, got {value!r}")
        elif not value.startswith(("http://", "https://", "${")):
            raise ValueError(f"must start with http:// or https://, got {value!r}")
        return value

    @field_validator("params", "body")
    @classmethod
    def _template(cls, value: Any) -> Any:
        _compile_or_raise(value)
        return value

    @field_validator("response")
    @classmethod
    def _response(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        if value is not None and not value:
            raise ValueError("must map at least one output field to a JMESPath expression")
        return value

    @model_validator(mode="after")
    def _secret_headers(self) -> HttpSystem:
        names = {name.lower() for name in self.headers}
        for name in self.secret_headers:
            if name.lower() not in names:
                raise ValueError(f"secret_headers: {name!r} is not one of the system's headers")
        return self

    @model_validator(mode="after")
    def _default_body(self) -> HttpSystem:
        if self.body is None and self.method != "GET":
            self.body = dict(DEFAULT_HTTP_BODY)
        if self.body is not None and self.method == "GET":
            raise ValueError("a GET request has no body; put the question in 'params'")
        return self

    def uses_question(self) -> bool:
        """Whether a request template names ``question`` (then every sample needs one)."""
        text = json.dumps([self.url, self.params, self.body])
        return any(re.search(r"\bquestion\b", match) for match in PLACEHOLDER.findall(text))

    def env_references(self) -> list[tuple[tuple[str | int, ...], str]]:
        """Every ``${NAME}`` used by the request, with the key path where it appears."""
        found: list[tuple[tuple[str | int, ...], str]] = []
        _collect_env(("url",), self.url, found)
        for name, value in self.headers.items():
            _collect_env(("headers", name), value, found)
        _collect_env(("params",), self.params, found)
        _collect_env(("body",), self.body, found)
        return found


class PythonSystem(NumbersModel):
    """``system.type: python`` — ``package.module:function`` called with each sample (a dict)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["python"]
    function: str = Field(pattern=FUNCTION_PATTERN, description="package.module:function")
    kwargs: dict[str, Any] = Field(default_factory=dict, description="Extra keyword arguments.")
    python_path: list[str] = Field(
        default_factory=lambda: ["."], description="Folders put on sys.path (relative to the suite)."
    )


class BuiltinSystem(NumbersModel):
    """``system.type: builtin`` — ragmeter's reference pipeline (markdown vault, BM25, extractive answers).

    Besides the keys below, any setting of the pipeline (``PipelineConfig``,
    see docs/pipeline.md) may be given here; they are checked when the suite loads.
    """

    model_config = ConfigDict(extra="allow")

    type: Literal["builtin"]
    vault: str = Field(description="Folder of markdown notes (relative to the suite).")
    index_dir: str | None = Field(
        default=None, description="Where the index is cached (relative to the suite); default: not cached."
    )
    folder_mode: Literal["off", "on", "on_with_fallback"] | None = None
    abstain_threshold: Annotated[float, Field(strict=True, ge=0)] | None = None

    @field_validator("folder_mode", mode="before")
    @classmethod
    def _yaml_booleans(cls, value: Any) -> Any:
        # YAML 1.1 reads a bare off/on as false/true
        return ("on" if value else "off") if isinstance(value, bool) else value

    def pipeline_settings(self, resolve: Callable[[str], Path]) -> dict[str, Any]:
        """The pipeline's settings: the keys given here (paths resolved), without ``type``."""
        settings: dict[str, Any] = {"vault": resolve(self.vault), **(self.model_extra or {})}
        if self.index_dir is not None:
            settings["index_dir"] = resolve(self.index_dir)
        if self.folder_mode is not None:
            settings["folder_mode"] = self.folder_mode
        if self.abstain_threshold is not None:
            settings["abstain_threshold"] = self.abstain_threshold
        return settings


SystemSpec = Annotated[
    HttpSystem
    | PythonSystem
    | BuiltinSystem
    | LangchainSystem
    | LlamaIndexSystem
    | HaystackSystem
    | DspySystem,
    Field(discriminator="type"),
]


class Suite(NumbersModel):
    """The whole suite file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, description="Names the run and the default results folder.")
    description: str | None = None
    dataset: str = Field(description="Samples file (YAML/JSON/JSONL), relative to the suite.")
    system: SystemSpec | None = Field(default=None, description="The system under test (or 'systems').")
    systems: dict[str, SystemSpec] | None = Field(
        default=None,
        description="Several systems under test by name, asked the same questions and compared (instead of 'system').",
    )
    baseline: str | None = Field(
        default=None,
        description="With 'systems': the one the others are compared against (default: the first).",
    )
    metrics: list[str] | None = Field(default=None, description="Metric names; default: evaluate's.")
    k: Annotated[int, Field(strict=True, ge=1, le=MAX_K)] | None = None
    concurrency: Annotated[int, Field(strict=True, ge=1, le=256)] = 4
    timeout_seconds: Positive = 30.0
    retries: Annotated[int, Field(strict=True, ge=0, le=10)] = 2
    backoff_seconds: NonNegative = 0.5
    max_backoff_seconds: Positive = 30.0
    results_dir: str | None = Field(default=None, description="Default: results/<name> next to the suite.")
    judge: Any = Field(
        default=None, description="Judge settings (docs/judges.md), checked when the suite loads."
    )

    @field_validator("systems")
    @classmethod
    def _systems(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None and not value:
            raise ValueError("must name at least one system")
        for name in value or {}:
            if not re.fullmatch(NAME_PATTERN, name):
                raise ValueError(
                    f"system name {name!r} must start with a letter or digit and hold only letters, digits, '.', '_' "
                    "and '-' (it names a results folder)"
                )
        return value

    @field_validator("metrics")
    @classmethod
    def _metrics(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and not value:
            raise ValueError("must name at least one metric (or leave 'metrics' out for the defaults)")
        return value


def _compile_or_raise(value: Any) -> None:
    try:
        compile_template(value)
    except TemplateError as exc:
        raise ValueError(str(exc)) from None


def _collect_env(
    loc: tuple[str | int, ...], value: Any, found: list[tuple[tuple[str | int, ...], str]]
) -> None:
    if isinstance(value, str):
        found.extend((loc, name) for name in env_names(value))
    elif isinstance(value, dict):
        for key, item in value.items():
            _collect_env((*loc, str(key)), item, found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _collect_env((*loc, index), item, found)
