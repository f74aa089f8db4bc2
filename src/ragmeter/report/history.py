"""Run history in SQLite: every recorded run's aggregates, so trends can be shown.

The default database is ``.ragmeter/history.sqlite`` in the working directory
(``--history PATH`` or ``history.path`` in the config change it).

Each run records its suite's name (``None`` for ``eval``) and its dataset's
file name and SHA-256 (from the result's provenance), so a trend only joins
runs of one suite on one dataset (:func:`same_series`) and can mark where
the dataset's content changed.

>>> import tempfile, pathlib
>>> from ragmeter.results import EvalResult
>>> db = pathlib.Path(tempfile.mkdtemp()) / "h.sqlite"
>>> r = EvalResult(aggregate={"mrr": 0.5}, per_query={}, n_queries=2, n_scored={"mrr": 2}, n_skipped={"mrr": 0})
>>> record_run(r, db=db, label="first")
1
>>> [(e.label, e.aggregate["mrr"]) for e in load_history(db)]
[('first', 0.5)]
>>> dataset_identity({"inputs": {"dataset": {"path": "data/tests.yaml", "sha256": "ab12"}}})
('tests.yaml', 'ab12')
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.databases import HISTORY, check_database, open_database
from ragmeter.redaction import redact
from ragmeter.results import EvalResult

DEFAULT_HISTORY_PATH = Path(".ragmeter") / "history.sqlite"
HISTORY_ENV = "RAGMETER_HISTORY"


def default_history_path() -> Path:
    """``$RAGMETER_HISTORY`` when set, else ``.ragmeter/history.sqlite`` in the working directory."""
    return Path(os.environ.get(HISTORY_ENV) or DEFAULT_HISTORY_PATH)


@dataclass(frozen=True)
class HistoryEntry:
    """One recorded run."""

    id: int
    created_at: str
    label: str
    source: str | None
    git_revision: str | None
    n_queries: int
    aggregate: dict[str, float | None]
    suite: str | None = None
    """The suite's name (``ragmeter run``); ``None`` for ``eval`` and runs recorded before it was kept."""
    dataset_name: str | None = None
    """The dataset's (or qrels') file name; ``None`` when unknown."""
    dataset_sha256: str | None = None


def dataset_identity(provenance: dict[str, Any]) -> tuple[str | None, str | None]:
    """The file name and SHA-256 of a result's dataset (or TREC qrels), from its provenance."""
    inputs = provenance.get("inputs")
    for found in (inputs.get("dataset"), inputs.get("qrels")) if isinstance(inputs, dict) else ():
        if isinstance(found, dict) and found.get("path"):
            sha = found.get("sha256")
            return Path(str(found["path"])).name, str(sha) if sha else None
    return None, None


def same_series(
    entries: list[HistoryEntry], *, suite: str | None, dataset_name: str | None
) -> list[HistoryEntry]:
    """The runs of one suite (``None``: runs of ``eval``) on one dataset file, oldest first.

    >>> a = HistoryEntry(1, "t", "demo", None, None, 3, {}, "demo", "tests.yaml", "aa")
    >>> b = HistoryEntry(2, "t", "other", None, None, 3, {}, "other", "tests.yaml", "aa")
    >>> [e.id for e in same_series([a, b], suite="demo", dataset_name="tests.yaml")]
    [1]
    """
    if dataset_name is None:
        return []
    return [e for e in entries if e.suite == suite and e.dataset_name == dataset_name]


def check_history(db: Path | None = None) -> None:
    """Refuse, before any work, a history path that :func:`record_run` would refuse (nothing is written)."""
    check_database(db or default_history_path(), HISTORY)


def record_run(
    result: EvalResult,
    *,
    db: Path | None = None,
    label: str,
    source: str | None = None,
    git_revision: str | None = None,
    suite: str | None = None,
) -> int:
    """Append one run's aggregates to the history (default :func:`default_history_path`); return its id.

    ``suite`` is the suite's name (``ragmeter run``); the dataset is read from the provenance. Texts
    are redacted (:mod:`ragmeter.redaction`); a database that cannot be written (a full disk) is a
    one-line error naming it.
    """
    db = db or default_history_path()
    created = str(result.provenance.get("created_at") or datetime.now(UTC).isoformat(timespec="seconds"))
    source, git_revision = (redact(text) if text else text for text in (source, git_revision))
    try:
        return _record(db, result, created, redact(label), source, git_revision, suite)
    except sqlite3.DatabaseError as exc:
        raise InputError(f"cannot record the run in the history database ({exc})", where=str(db)) from None


def _record(
    db: Path,
    result: EvalResult,
    created: str,
    label: str,
    source: str | None,
    git_revision: str | None,
    suite: str | None,
) -> int:
    dataset_name, dataset_sha = dataset_identity(result.provenance)
    with closing(open_database(db, HISTORY, write=True)) as conn, conn:
        cur = conn.execute(
            "INSERT INTO runs (created_at, label, source, git_revision, ragmeter_version, n_queries, aggregate_json,"
            " suite, dataset_name, dataset_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                created,
                label,
                source,
                git_revision,
                str(result.provenance.get("ragmeter_version", "")),
                result.n_queries,
                json.dumps(result.aggregate),
                suite,
                dataset_name,
                dataset_sha,
            ),
        )
        run_id = int(cur.lastrowid or 0)
        conn.executemany(
            "INSERT INTO metric_values (run_id, metric, value, n_scored) VALUES (?, ?, ?, ?)",
            [(run_id, m, v, result.n_scored.get(m)) for m, v in result.aggregate.items()],
        )
    return run_id


def load_history(db: Path | None = None, *, last: int | None = None) -> list[HistoryEntry]:
    """Recorded runs, oldest first (the ``last`` N when given)."""
    db = db or default_history_path()
    if not db.exists():
        raise InputError(
            "no history database here yet (record one with 'ragmeter run' or 'eval --record')", where=str(db)
        )
    with closing(open_database(db, HISTORY, write=False)) as conn:
        rows = conn.execute(
            "SELECT id, created_at, label, source, git_revision, n_queries, aggregate_json, suite, dataset_name,"
            " dataset_sha256 FROM runs ORDER BY id"
        ).fetchall()
    entries = [
        HistoryEntry(int(r[0]), str(r[1]), str(r[2]), r[3], r[4], int(r[5]), dict(json.loads(r[6])), *r[7:10])
        for r in rows
    ]
    return entries[-last:] if last else entries
