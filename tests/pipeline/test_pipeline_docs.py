"""docs/pipeline.md documents every setting, every index-stats field and every skip reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragmeter.pipeline import IndexStats, PipelineConfig
from ragmeter.pipeline.answer import ABSTAIN_ANSWER
from ragmeter.pipeline.chunker import (
    CHUNKER_VERSION,
    SKIP_BELOW_MIN,
    SKIP_EXCEEDS_MAX,
    SKIP_SENTENCE_EXCEEDS_MAX,
)

DOC = (Path(__file__).resolve().parents[2] / "docs" / "pipeline.md").read_text(encoding="utf-8")


def _table_rows() -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z_0-9]+)` \| ([^|]+) \|", DOC, re.M)}


@pytest.mark.parametrize("name", sorted(PipelineConfig.model_fields))
def test_pipeline_docs_every_setting_has_a_row_with_its_default(name: str) -> None:
    rows = _table_rows()
    assert name in rows, f"setting {name!r} is not in the table of docs/pipeline.md"
    default = PipelineConfig.model_fields[name].default
    if name != "vault":
        shown = "none" if default is None else f"`{default}`" if isinstance(default, str) else str(default)
        assert rows[name].strip() == shown, f"{name}: docs say {rows[name].strip()!r}, code says {shown!r}"


@pytest.mark.parametrize("name", sorted(IndexStats.model_fields))
def test_pipeline_docs_every_index_stats_field_is_described(name: str) -> None:
    assert f"| `{name}` |" in DOC


def test_pipeline_docs_name_the_constants_and_show_a_valid_stats_file() -> None:
    for text in (
        SKIP_BELOW_MIN,
        SKIP_EXCEEDS_MAX,
        SKIP_SENTENCE_EXCEEDS_MAX,
        CHUNKER_VERSION,
        ABSTAIN_ANSWER,
    ):
        assert text in DOC
    block = re.search(r"```json\n(\{\n  \"docs_processed\".*?)\n```", DOC, re.S)
    assert block is not None
    IndexStats.model_validate(json.loads(block.group(1)))
