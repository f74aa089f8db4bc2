"""The suite keys of framework systems: ``type: langchain | llamaindex | haystack | dspy``.

Every framework system names a Python object (``object: package.module:name``)
and may say where the output contract's ``rel_path``, ``heading_path`` and
``id`` come from in the framework's document metadata (``metadata:``); each
framework has its own defaults (see :data:`DEFAULT_METADATA`). Validation is
strict: an unknown key is an error naming it, with a did-you-mean.

>>> s = LangchainSystem.model_validate({"type": "langchain", "object": "my_pkg.chains:rag_chain"})
>>> s.metadata_mapping().rel_path[:2], s.metadata_mapping().heading_path[:2]
(('source', 'file_path'), ('Header 1', 'Header 2'))
>>> DspySystem.model_validate({"type": "dspy", "object": "rag:program"}).metadata_mapping().heading_path
('heading_path', 'headings')
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragmeter.harness.templates import TemplateError, compile_template

OBJECT_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$"
"""``package.module:name`` (the name may be dotted: ``module:factory.instance``)."""

Framework = Literal["langchain", "llamaindex", "haystack", "dspy"]

_MARKDOWN_HEADERS = tuple(f"Header {n}" for n in range(1, 7))
_GENERIC_HEADINGS = ("heading_path", "headings")
_GENERIC_IDS = ("id", "chunk_id", "doc_id")


class MetadataMapping(BaseModel):
    """Which document metadata keys give ``rel_path``, ``heading_path`` and ``id`` (first key present wins).

    ``heading_path`` keys are read in order and their values joined (``Header 1``,
    ``Header 2``, … as LangChain's ``MarkdownHeaderTextSplitter`` is usually set up); a
    key whose value is already a path (a list, or ``A > B``) gives the whole path.
    ``id`` falls back to the framework's own document id. ``path_root`` makes
    absolute paths relative to a folder (relative to the suite file).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rel_path: tuple[str, ...] | None = None
    heading_path: tuple[str, ...] | None = None
    id: tuple[str, ...] | None = None
    path_root: str | None = None

    @field_validator("rel_path", "heading_path", "id", mode="before")
    @classmethod
    def _keys(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list) and (not value or not all(isinstance(v, str) and v for v in value)):
            raise ValueError("must be a metadata key or a non-empty list of metadata keys")
        return value


DEFAULT_METADATA: dict[str, MetadataMapping] = {
    "langchain": MetadataMapping(
        rel_path=("source", "file_path", "path"),
        heading_path=(*_MARKDOWN_HEADERS, *_GENERIC_HEADINGS),
        id=_GENERIC_IDS,
    ),
    "llamaindex": MetadataMapping(
        rel_path=("file_path", "source", "file_name"),
        heading_path=("header_path", *_MARKDOWN_HEADERS, *_GENERIC_HEADINGS),
        id=_GENERIC_IDS,
    ),
    "haystack": MetadataMapping(
        rel_path=("file_path", "source", "path"),
        heading_path=(*_GENERIC_HEADINGS, *_MARKDOWN_HEADERS),
        id=_GENERIC_IDS,
    ),
    "dspy": MetadataMapping(
        rel_path=("source", "file_path", "path", "rel_path"),
        heading_path=_GENERIC_HEADINGS,
        id=_GENERIC_IDS,
    ),
}
"""Each framework's usual metadata keys (used for every key the suite's ``metadata:`` leaves out)."""


class _FrameworkSystem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    object: str = Field(pattern=OBJECT_PATTERN, description="package.module:name of the framework object")
    python_path: list[str] = Field(
        default_factory=lambda: ["."], description="Folders put on sys.path (relative to the suite)."
    )
    metadata: MetadataMapping = Field(
        default_factory=MetadataMapping, description="Metadata keys for rel_path, heading_path and id."
    )

    @property
    def framework(self) -> Framework:
        """The framework's name (the ``type``)."""
        value: Framework = getattr(self, "type")  # noqa: B009 - every subclass declares its literal
        return value

    def metadata_mapping(self) -> MetadataMapping:
        """The suite's mapping, with the framework's defaults for the keys it leaves out."""
        default = DEFAULT_METADATA[self.framework]
        given = self.metadata.model_dump(exclude_none=True)
        return default.model_copy(update=given)


class LangchainSystem(_FrameworkSystem):
    """``system.type: langchain`` — a ``BaseRetriever`` or a Runnable returning documents and/or an answer."""

    type: Literal["langchain"]
    input_key: str | None = Field(
        default=None, description="Invoke with {input_key: question}; default: the question string itself."
    )
    documents_key: str | None = Field(
        default=None, description="Output key of the documents; default: the first list of Documents."
    )
    answer_key: str | None = Field(
        default=None, description="Output key of the answer; default: answer, result, output, response, text."
    )


class LlamaIndexSystem(_FrameworkSystem):
    """``system.type: llamaindex`` — a retriever (``retrieve``) or a query engine (``query``)."""

    type: Literal["llamaindex"]


class HaystackSystem(_FrameworkSystem):
    """``system.type: haystack`` — a ``Pipeline`` with a retriever and (optionally) a generator component."""

    type: Literal["haystack"]
    retriever: str | None = Field(
        default=None, description="Component whose 'documents' are the ranking; default: the only one."
    )
    generator: str | None = Field(
        default=None, description="Component whose 'replies' hold the answer; default: the only one."
    )
    inputs: dict[str, dict[str, Any]] | None = Field(
        default=None,
        description="{component: {socket: template}} ({{ question }}, {{ k }}, {{ sample.X }}); "
        "default: the question to every open 'query'/'question' socket and k to the retriever's 'top_k'.",
    )

    @field_validator("inputs")
    @classmethod
    def _templates(cls, value: dict[str, dict[str, Any]] | None) -> dict[str, dict[str, Any]] | None:
        try:
            compile_template(value)
        except TemplateError as exc:
            raise ValueError(str(exc)) from None
        return value


class DspySystem(_FrameworkSystem):
    """``system.type: dspy`` — a ``dspy.Module`` whose prediction carries passages and an answer."""

    type: Literal["dspy"]
    input_field: str = Field(default="question", description="Keyword the question is passed as.")
    passages_field: str | None = Field(
        default=None, description="Prediction field of the passages; default: passages, context, documents."
    )
    answer_field: str = Field(default="answer", description="Prediction field of the answer.")


FRAMEWORK_SYSTEMS: dict[str, type[_FrameworkSystem]] = {
    "langchain": LangchainSystem,
    "llamaindex": LlamaIndexSystem,
    "haystack": HaystackSystem,
    "dspy": DspySystem,
}
"""The framework system models by ``type``."""

FrameworkSystem = LangchainSystem | LlamaIndexSystem | HaystackSystem | DspySystem
