"""Every suite (or ``system:`` block) the docs show is accepted by the suite loader, as written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from ragmeter.harness.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]


def _suite_blocks() -> list[tuple[str, str]]:
    blocks = []
    for doc in DOCS:
        for index, match in enumerate(
            re.finditer(r"```yaml\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
        ):
            if re.search(r"^system:", match.group(1), re.M):
                blocks.append((f"{doc.name}#{index}", match.group(1)))
    return blocks


@pytest.mark.parametrize(("where", "block"), _suite_blocks(), ids=[w for w, _ in _suite_blocks()])
def test_doc_suite_blocks_load(where: str, block: str, tmp_path: Path) -> None:
    examples = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", examples)
    data = yaml.safe_load(block)
    data.setdefault("name", "from-the-docs")
    data.setdefault("dataset", "tests.yaml")
    suite = examples / "doc_suite.yaml"
    suite.write_text(yaml.safe_dump(data), encoding="utf-8")
    loaded = load_suite(suite, environ={"RAG_API_KEY": "k"})
    assert loaded.suite.system.type == data["system"]["type"], where


def test_pipeline_options_mapping_gets_a_hint(tmp_path: Path) -> None:
    from ragmeter.errors import ConfigError

    examples = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", examples)
    suite = examples / "s.yaml"
    suite.write_text(
        "name: s\ndataset: tests.yaml\nsystem:\n  type: builtin\n  vault: vault/\n"
        "  options: {max_chunk_tokens: 200}\n",
        encoding="utf-8",
    )
    with pytest.raises(ConfigError) as info:
        load_suite(suite, environ={})
    assert "s.yaml:6" in str(info.value) and "directly under system:" in str(info.value)
