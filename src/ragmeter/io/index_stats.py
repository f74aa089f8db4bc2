"""Load an index-statistics file (``--index-stats PATH`` or ``index_stats:`` in the config).

The file is one JSON (or YAML) object in the :class:`~ragmeter.schema.rag.IndexStats`
shape. Impossible counts are errors naming the file and field; counts that do not
add up, and unknown fields, are warnings.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "index_stats.json"
>>> _ = p.write_text('{"docs_processed": 4, "docs_with_zero_chunks": 1, "chunkz": 3}')
>>> stats, warnings = load_index_stats(p)
>>> stats.docs_processed, [w.split(": ", 1)[1] for w in warnings]
(4, ["unknown field 'chunkz' (ignored)"])
"""

from __future__ import annotations

import json
from pathlib import Path

from ragmeter.errors import InputError
from ragmeter.io.records import read_structured, validate
from ragmeter.schema.rag import IndexStats, ZeroChunkDocs


def check_index_stats(stats: IndexStats, *, where: str) -> list[str]:
    """Reject impossible counts (``InputError``); return warnings for counts that do not add up."""
    warnings: list[str] = []
    zero = stats.zero_chunk_count()
    if zero is not None and stats.docs_processed is not None and zero > stats.docs_processed:
        raise InputError(
            f"docs_with_zero_chunks ({zero}) is more than docs_processed ({stats.docs_processed})",
            where=where,
        )
    if isinstance(stats.docs_with_zero_chunks, ZeroChunkDocs):
        listed = len(stats.docs_with_zero_chunks.rel_paths)
        if listed and listed != zero:
            raise InputError(
                f"docs_with_zero_chunks.rel_paths lists {listed} documents but count is {zero}", where=where
            )
    attempted = stats.chunks_attempted
    for name in ("chunks_embedded", "chunks_skipped"):
        value = getattr(stats, name)
        if attempted is not None and value is not None and value > attempted:
            raise InputError(f"{name} ({value}) is more than chunks_attempted ({attempted})", where=where)
    if None not in (attempted, stats.chunks_embedded, stats.chunks_skipped):
        done = (stats.chunks_embedded or 0) + (stats.chunks_skipped or 0)
        if done != attempted:
            warnings.append(
                f"{where}: chunks_embedded + chunks_skipped = {done}, but chunks_attempted = {attempted}"
            )
    if stats.skip_reasons is not None and stats.chunks_skipped is not None:
        total = sum(stats.skip_reasons.values())
        if total != stats.chunks_skipped:
            warnings.append(
                f"{where}: skip_reasons add up to {total}, but chunks_skipped = {stats.chunks_skipped}"
            )
    tpc = stats.tokens_per_chunk
    if tpc is not None and tpc.min is not None and tpc.max is not None and tpc.min > tpc.max:
        raise InputError(
            f"tokens_per_chunk.min ({tpc.min}) is more than tokens_per_chunk.max ({tpc.max})", where=where
        )
    for name in sorted(stats.model_extra or {}):
        warnings.append(f"{where}: unknown field {name!r} (ignored)")
    return warnings


def load_index_stats(path: str | Path) -> tuple[IndexStats, list[str]]:
    """Read and check an index-statistics file; return the model and any warnings."""
    path = Path(path)
    data = read_structured(path)
    if not isinstance(data, dict):
        raise InputError("index stats must be a JSON object", where=str(path))
    stats = validate(IndexStats, data, where=str(path))
    return stats, check_index_stats(stats, where=str(path))


def index_stats_json_schema() -> str:
    """The JSON Schema of the index-statistics file (as shipped in ``schema/index_stats.schema.json``)."""
    schema = IndexStats.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
