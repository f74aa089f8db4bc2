"""Run history in SQLite: every recorded run's aggregates, so trends can be shown.

The default database is ``.ragmeter/history.sqlite`` in the working directory
(``--history PATH`` or ``history.path`` in the config change it).

>>> import tempfile, pathlib
>>> from ragmeter.results import EvalResult
>>> db = pathlib.Path(tempfile.mkdtemp()) / "h.sqlite"
>>> r = EvalResult(aggregate={"mrr": 0.5}, per_query={}, n_queries=2, n_scored={"mrr": 2}, n_skipped={"mrr": 0})
>>> record_run(r, db=db, label="first")
1
>>> [(e.label, e.aggregate["mrr"]) for e in load_history(db)]
[('first', 0.5)]
"""

from __future__ import annotations

import json
import os
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ragmeter.errors import InputError
from ragmeter.io.databases import HISTORY, check_database, open_database
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
) -> int:
    """Append one run's aggregates to the history (default :func:`default_history_path`); return its id."""
    db = db or default_history_path()
    created = str(result.provenance.get("created_at") or datetime.now(UTC).isoformat(timespec="seconds"))
    with closing(open_database(db, HISTORY, write=True)) as conn, conn:
        cur = conn.execute(
            "INSERT INTO runs (created_at, label, source, git_revision, ragmeter_version, n_queries, aggregate_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                created,
                label,
                source,
                git_revision,
                str(result.provenance.get("ragmeter_version", "")),
                result.n_queries,
                json.dumps(result.aggregate),
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
            "SELECT id, created_at, label, source, git_revision, n_queries, aggregate_json FROM runs ORDER BY id"
        ).fetchall()
    entries = [
        HistoryEntry(int(r[0]), str(r[1]), str(r[2]), r[3], r[4], int(r[5]), dict(json.loads(r[6])))
        for r in rows
    ]
    return entries[-last:] if last else entries
