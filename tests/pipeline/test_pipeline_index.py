from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import ragmeter.pipeline.index as index_module
from ragmeter.errors import ConfigError
from ragmeter.io.index_stats import check_index_stats, load_index_stats
from ragmeter.pipeline import IndexStats, ReferencePipeline, build_note_index
from ragmeter.schema.rag import IndexStats as ReaderIndexStats

MakeVault = Callable[[dict[str, str]], Path]
VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"


def test_pipeline_demo_vault_index_stats() -> None:
    stats = ReferencePipeline({"vault": VAULT}).build_index()
    notes = sorted(p for p in VAULT.rglob("*.md"))
    assert stats.docs_processed == len(notes) >= 30
    assert stats.docs_with_zero_chunks.count == 1
    assert stats.docs_with_zero_chunks.rel_paths == ["work/drafts/untitled.md"]
    assert stats.chunks_attempted == stats.chunks_embedded + stats.chunks_skipped
    assert stats.chunks_skipped == sum(stats.skip_reasons.values()) == 0
    tpc = stats.tokens_per_chunk
    assert tpc.min is not None and tpc.max is not None and tpc.mean is not None and tpc.p95 is not None
    assert 0 < tpc.min <= tpc.mean <= tpc.p95 <= tpc.max <= 200
    assert stats.embedding_model.startswith("bm25s-")
    assert stats.chunker_version == "ragmeter-md-heading-1"
    assert len(stats.index_version) == 16
    assert stats.created_at.endswith("Z")


def test_pipeline_index_stats_file_is_read_by_ragmeter(tmp_path: Path) -> None:
    pipeline = ReferencePipeline({"vault": VAULT})
    path = pipeline.write_index_stats(tmp_path / "index_stats.json")
    data = json.loads(path.read_text())
    assert set(data) == set(IndexStats.model_fields)
    assert set(data["tokens_per_chunk"]) == {"min", "max", "mean", "p95"}
    assert set(data["docs_with_zero_chunks"]) == {"count", "rel_paths"}
    loaded, warnings = load_index_stats(path)
    assert warnings == []
    assert loaded.zero_chunk_paths() == ["work/drafts/untitled.md"]
    assert check_index_stats(ReaderIndexStats.model_validate(data), where="x") == []


def test_pipeline_skips_and_zero_chunk_notes_are_counted(make_vault: MakeVault) -> None:
    long_line = " ".join(f"word{i}" for i in range(40))
    vault = make_vault(
        {
            "a/ok.md": "# A\nfine text here\n",
            "a/long.md": f"# Long\n{long_line}\n",
            "b/empty.md": "",
            "b/headings.md": "# Only\n## Headings\n",
            "b/.hidden.md": "# Hidden\nnot indexed\n",
            ".obsidian/config.md": "# Config\nnot indexed\n",
            "b/image.png": "not a note",
        }
    )
    stats = build_note_index(vault, max_chunk_tokens=20).stats
    assert stats.docs_processed == 4
    assert stats.docs_with_zero_chunks.rel_paths == ["a/long.md", "b/empty.md", "b/headings.md"]
    assert (stats.chunks_attempted, stats.chunks_embedded, stats.chunks_skipped) == (2, 1, 1)
    assert stats.skip_reasons == {"sentence_exceeds_max_tokens": 1}
    assert stats.tokens_per_chunk.model_dump() == {"min": 3.0, "max": 3.0, "mean": 3.0, "p95": 3.0}
    skip = build_note_index(vault, max_chunk_tokens=20, oversize="skip").stats
    assert skip.skip_reasons == {"exceeds_max_tokens": 1}


def test_pipeline_empty_vault_indexes_nothing(make_vault: MakeVault) -> None:
    vault = make_vault({"empty.md": ""})
    pipeline = ReferencePipeline({"vault": vault})
    stats = pipeline.build_index()
    assert (stats.docs_processed, stats.chunks_attempted, stats.tokens_per_chunk.min) == (1, 0, None)
    out = pipeline.answer("anything at all?", k=3)
    assert out["retrieved"] == [] and out["abstained"] is True


def test_pipeline_index_version_tracks_content_and_settings(make_vault: MakeVault) -> None:
    vault = make_vault({"w/a.md": "# A\nalpha text\n"})
    first = build_note_index(vault, max_chunk_tokens=50).version
    assert build_note_index(vault, max_chunk_tokens=50).version == first
    assert build_note_index(vault, max_chunk_tokens=51).version != first
    (vault / "w" / "a.md").write_text("# A\nalpha text changed\n")
    assert build_note_index(vault, max_chunk_tokens=50).version != first


def test_pipeline_index_is_cached_by_version(
    make_vault: MakeVault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = make_vault({"w/a.md": "# A\nalpha text\n", "p/b.md": "# B\nbeta text\n"})
    cache = tmp_path / "cache"
    first = ReferencePipeline({"vault": vault, "index_dir": cache})
    stats = first.build_index()
    folder = cache / stats.index_version
    assert first.index_stats_path == folder / "index_stats.json"
    assert IndexStats.model_validate_json((folder / "index_stats.json").read_text()) == stats
    expected = first.answer("alpha", k=2)

    def no_chunking(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cached index should have been used")

    monkeypatch.setattr(index_module, "chunk_note", no_chunking)
    second = ReferencePipeline({"vault": vault, "index_dir": cache})
    assert second.build_index() == stats  # same created_at: loaded, not rebuilt
    got = second.answer("alpha", k=2)
    assert got["retrieved"] == expected["retrieved"] and got["answer"] == expected["answer"]
    assert ReferencePipeline({"vault": vault}).index_stats_path is None


def test_pipeline_broken_cache_is_rebuilt(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault({"w/a.md": "# A\nalpha text\n"})
    cache = tmp_path / "cache"
    stats = ReferencePipeline({"vault": vault, "index_dir": cache}).build_index()
    (cache / stats.index_version / "chunks.json").write_text("{not json")
    again = ReferencePipeline({"vault": vault, "index_dir": cache})
    assert again.build_index().index_version == stats.index_version
    assert again.answer("alpha", k=1)["retrieved"][0]["rel_path"] == "w/a.md"
    assert json.loads((cache / stats.index_version / "chunks.json").read_text())[0]["id"] == "w/a.md#A"


def test_pipeline_index_build_is_fast() -> None:
    build_note_index(VAULT, max_chunk_tokens=200)  # warm imports
    started = time.perf_counter()
    build_note_index(VAULT, max_chunk_tokens=200)
    assert time.perf_counter() - started < 0.5


def test_pipeline_missing_vault_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"pipeline config: vault: vault folder not found: .*nowhere"):
        ReferencePipeline({"vault": tmp_path / "nowhere"}).build_index()


def test_pipeline_unwritable_cache_is_a_config_error(make_vault: MakeVault, tmp_path: Path) -> None:
    vault = make_vault({"w/a.md": "# A\nalpha\n"})
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    with pytest.raises(ConfigError, match="index_dir"):
        ReferencePipeline({"vault": vault, "index_dir": blocker}).build_index()
