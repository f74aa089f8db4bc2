"""Where the drill-down's data lives, and reading it without ever failing the report.

A results folder holds only part of what a query's drill-down shows:

===================== ==========================================================
``per_query.jsonl``    values, unscored reasons, the question (``input``), the
                       answer and references, the top ranked items with gains
                       and 300 characters of text, the judges' verdicts
``outputs.jsonl``      every retrieved chunk with its whole text and score
                       (``ragmeter run``; ``eval`` names its outputs file in
                       the provenance)
the dataset            the gold supports and expected answers (``config.json``
                       names it for ``run``, the provenance for ``eval``)
``judge_log.jsonl``    the judges' outcomes and raw replies, when the
                       ``per_query.jsonl`` lines lack them
the traces file        an agentic trace's task and search queries
===================== ==========================================================

Each reader returns what it found and, when a source is absent, unreadable or
changed since the run, one note saying so in words; the report shows those
notes instead of leaving a silent blank.

>>> import tempfile, pathlib
>>> sources = read_sources(pathlib.Path(tempfile.mkdtemp()), metrics={}, config={})
>>> sources.samples, sources.notes[0]
({}, 'gold supports and expected answers: not shown (the results do not name their dataset)')
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragmeter.errors import RagmeterError
from ragmeter.io.jsonyaml import JsonError, json_lines, parse_json
from ragmeter.io.text_files import read_bytes
from ragmeter.report.sections import nested
from ragmeter.schema.outputs import SystemOutput
from ragmeter.schema.samples import Sample


@dataclass
class Sources:
    """What the drill-down could read besides ``per_query.jsonl``."""

    samples: dict[str, Sample] = field(default_factory=dict)
    outputs: dict[str, SystemOutput] = field(default_factory=dict)
    judge_outcomes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Sample id → its judge outcomes from the judge log (only read when needed)."""
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Trace id → ``{"task": ..., "searches": [[query, ...] per iteration]}`` (agentic results)."""
    notes: list[str] = field(default_factory=list)


def iter_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (decompressed; lines end at ``\\n``).

    An unreadable file, blank and damaged lines (a repeated key, ``NaN`` too) are skipped;
    bytes that are not UTF-8 show as U+FFFD.
    """
    try:
        text = read_bytes(path).decode("utf-8-sig", errors="replace")
    except RagmeterError:
        return
    for _, line in json_lines(text):
        try:
            value = parse_json(line)
        except JsonError:
            continue
        if isinstance(value, dict):
            yield value


def _named_file(candidates: list[Any], folder: Path) -> Path | None:
    """The first candidate that exists: in ``folder``, else as written (from the working directory)."""
    for raw in candidates:
        if not isinstance(raw, str) or not raw:
            continue
        for path in (folder / raw, Path(raw), folder / Path(raw).name):
            if path.is_file():
                return path
    return None


def _inputs(metrics: Mapping[str, Any]) -> Mapping[str, Any]:
    return nested(metrics, "provenance", "inputs")


def _same_bytes(path: Path, recorded: Any) -> bool:
    if not isinstance(recorded, str):
        return True
    from ragmeter.io.digests import file_sha256

    return file_sha256(path) == recorded


def _read_dataset(
    folder: Path, metrics: Mapping[str, Any], config: Mapping[str, Any], notes: list[str]
) -> dict[str, Sample]:
    from ragmeter.io.datasets import load_dataset

    inputs = _inputs(metrics)
    recorded = nested(inputs, "dataset")
    resolved = nested(config, "suite", "resolved_paths").get("dataset")
    named = [resolved, recorded.get("path")]
    what = "gold supports and expected answers"
    trec = [str(nested(inputs, k).get("path")) for k in ("qrels", "run") if inputs.get(k)]
    if trec:
        notes.append(
            f"relevance judgements and ranked lists: not shown (a TREC run; see {' and '.join(trec)})"
        )
        return {}
    if not any(isinstance(n, str) for n in named):
        notes.append(f"{what}: not shown (the results do not name their dataset)")
        return {}
    path = _named_file(named, folder)
    if path is None:
        notes.append(f"{what}: not shown (dataset file {next(n for n in named if n)} not found)")
        return {}
    try:
        samples = {s.id: s for s in load_dataset(path)}
    except RagmeterError as exc:
        notes.append(f"{what}: not shown (the dataset could not be read: {exc})")
        return {}
    if not _same_bytes(path, recorded.get("sha256")):
        notes.append(f"{what}: read from {path}, which changed since this run (its sha256 differs)")
    return samples


def _read_outputs(folder: Path, metrics: Mapping[str, Any], notes: list[str]) -> dict[str, SystemOutput]:
    from ragmeter.io.outputs import load_outputs

    recorded = nested(_inputs(metrics), "outputs")
    path = _named_file(["outputs.jsonl", recorded.get("path")], folder)
    if path is None:
        if recorded.get("path"):
            notes.append(
                f"whole chunk texts and scores: not shown (outputs file {recorded['path']} not found)"
            )
        return {}
    try:
        outputs = load_outputs(path)
    except RagmeterError as exc:
        notes.append(f"whole chunk texts and scores: not shown (the outputs could not be read: {exc})")
        return {}
    if path.name != "outputs.jsonl" and not _same_bytes(path, recorded.get("sha256")):
        notes.append(f"chunk texts and scores: read from {path}, which changed since this run")
    return outputs


def _read_judge_log(folder: Path, metrics: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    path = _named_file(["judge_log.jsonl", nested(metrics, "provenance", "judge", "log").get("path")], folder)
    found: dict[str, dict[str, dict[str, Any]]] = {}
    if path is None:
        return {}
    for line in iter_jsonl(path):
        if line.get("kind") == "outcome" and isinstance(line.get("item_id"), str):
            found.setdefault(line["item_id"], {})[str(line.get("key"))] = line  # the last line wins
    return {item: list(by_key.values()) for item, by_key in found.items()}


def _read_traces(folder: Path, metrics: Mapping[str, Any], notes: list[str]) -> dict[str, dict[str, Any]]:
    recorded = nested(metrics, "provenance", "traces")
    if not recorded:
        return {}
    path = _named_file([recorded.get("path")], folder)
    if path is None or recorded.get("format", "native") != "native":
        notes.append(
            f"trace tasks and search queries: not shown (traces file {recorded.get('path')} not read)"
        )
        return {}
    traces: dict[str, dict[str, Any]] = {}
    for line in iter_jsonl(path):
        turns = [t for t in _list(line.get("turns")) if isinstance(t, dict)]
        last = turns[-1] if turns else {}
        searches = [
            [str(s.get("query") or "") for s in _list(it.get("searches")) if isinstance(s, dict)]
            for it in _list(last.get("iterations"))
            if isinstance(it, dict)
        ]
        task = line.get("task") if isinstance(line.get("task"), str) else last.get("user")
        traces[str(line.get("trace_id"))] = {"task": task, "searches": [s for s in searches if s]}
    return traces


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def read_sources(
    folder: Path, *, metrics: Mapping[str, Any], config: Mapping[str, Any], judges_in_rows: bool = True
) -> Sources:
    """Read the dataset, the outputs, the judge log (unless the rows hold the judges) and agentic traces."""
    sources = Sources()
    if metrics.get("agentic") is not None or nested(metrics, "provenance").get("traces"):
        sources.traces = _read_traces(folder, metrics, sources.notes)
        return sources
    sources.samples = _read_dataset(folder, metrics, config, sources.notes)
    sources.outputs = _read_outputs(folder, metrics, sources.notes)
    if not judges_in_rows:
        sources.judge_outcomes = _read_judge_log(folder, metrics)
    return sources
