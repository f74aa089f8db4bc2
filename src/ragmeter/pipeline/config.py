"""Settings of the reference pipeline (a pydantic model; unknown keys are errors).

>>> cfg = PipelineConfig.model_validate({"vault": "examples/vault", "folder_mode": "on"})
>>> cfg.k, cfg.folder_mode, cfg.max_chunk_tokens, cfg.abstain_threshold
(5, 'on', 200, 0.35)
>>> load_pipeline_config({"vault": "v", "k": 0})
Traceback (most recent call last):
...
ragmeter.errors.ConfigError: pipeline config: k: Input should be greater than or equal to 1 (got 0)
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, ValidationError, model_validator

from ragmeter.errors import ConfigError
from ragmeter.metrics.names import MAX_K
from ragmeter.pipeline.chunker import OversizePolicy
from ragmeter.schema.strict_numbers import NumbersModel

FolderMode = Literal["off", "on", "on_with_fallback"]


class PipelineConfig(NumbersModel):
    """Everything the reference pipeline can be told; every field but ``vault`` has a default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vault: Path = Field(description="Folder of markdown notes (*.md, *.markdown; hidden entries ignored).")
    index_dir: Path | None = Field(
        default=None,
        description="Where built indexes are cached, one sub-folder per index_version; None: memory only.",
    )
    k: int = Field(default=5, ge=1, le=MAX_K, description="Chunks to retrieve when answer() is given no k.")
    max_chunk_tokens: int = Field(default=200, ge=1, description="Largest chunk, in tokens.")
    min_chunk_tokens: int = Field(default=1, ge=1, description="Smaller chunks are skipped.")
    oversize: OversizePolicy = Field(
        default="split", description="Oversize sections: split (paragraphs, then sentences) or skip."
    )
    folder_mode: FolderMode = Field(default="off", description="Folder selection before retrieval.")
    folder_keep_fraction: float = Field(
        default=0.5, gt=0, le=1, description="Keep folders scoring at least this fraction of the best."
    )
    folder_top_n: int = Field(default=3, ge=1, description="A folder's score sums its top-n chunk scores.")
    abstain_threshold: float = Field(
        default=0.35, ge=0, description="Abstain when the best retrieval score is below this."
    )
    answer_chunks: int = Field(default=3, ge=1, description="Top chunks the answer sentences come from.")
    max_answer_sentences: int = Field(default=2, ge=1, description="Sentences in an answer, at most.")
    second_sentence_ratio: float = Field(
        default=0.5, ge=0, le=1, description="A further sentence needs this fraction of the best's score."
    )
    bm25_k1: float = Field(default=1.5, ge=0, description="BM25 term-frequency saturation.")
    bm25_b: float = Field(default=0.75, ge=0, le=1, description="BM25 length normalisation.")

    @model_validator(mode="after")
    def _limits(self) -> PipelineConfig:
        if self.min_chunk_tokens > self.max_chunk_tokens:
            raise ValueError(
                f"min_chunk_tokens ({self.min_chunk_tokens}) is more than max_chunk_tokens ({self.max_chunk_tokens})"
            )
        return self


def load_pipeline_config(
    settings: PipelineConfig | Mapping[str, Any], *, where: str = "pipeline config"
) -> PipelineConfig:
    """Validate settings into a :class:`PipelineConfig`; errors are ``ConfigError`` naming the field.

    >>> load_pipeline_config({"vault": "v", "folder_mod": "on"})
    Traceback (most recent call last):
    ...
    ragmeter.errors.ConfigError: pipeline config: folder_mod: unknown setting; did you mean 'folder_mode'?
    """
    if isinstance(settings, PipelineConfig):
        return settings
    if not isinstance(settings, Mapping):
        raise ConfigError(f"settings must be a mapping, got {type(settings).__name__}", where=where)
    try:
        return PipelineConfig.model_validate(dict(settings))
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(part) for part in err["loc"])
        if err["type"] == "extra_forbidden":
            close = difflib.get_close_matches(field, list(PipelineConfig.model_fields), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ConfigError(f"unknown setting{hint}", where=f"{where}: {field}") from None
        if err["type"] == "missing":
            raise ConfigError("required setting is missing", where=f"{where}: {field}") from None
        message = str(err["msg"]).removeprefix("Value error, ")
        got = f" (got {err['input']!r})" if field else ""
        raise ConfigError(f"{message}{got}", where=f"{where}: {field}" if field else where) from None
