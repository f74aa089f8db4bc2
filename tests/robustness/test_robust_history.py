"""``ragmeter history`` (and every command that records runs): only ragmeter's own database is opened.

A database of another program, a file that is not SQLite, a folder, the judge cache or a history
from a newer ragmeter is refused with one line and left exactly as it was; a history written
before ragmeter marked its databases, or at the older schema 1 (no suite or dataset per run), is
still read as it is, and migrated and marked on its next write.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragmeter.io.databases import APPLICATION_ID, HISTORY, JUDGE_CACHE

V1_SCHEMA = """
CREATE TABLE runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, label TEXT NOT NULL, source TEXT,
    git_revision TEXT, ragmeter_version TEXT, n_queries INTEGER NOT NULL, aggregate_json TEXT NOT NULL
);
CREATE TABLE metric_values (
    run_id INTEGER NOT NULL REFERENCES runs(id), metric TEXT NOT NULL, value REAL, n_scored INTEGER,
    PRIMARY KEY (run_id, metric)
);
"""
"""The run history as ragmeter wrote it at schema 1 (before runs kept their suite and dataset)."""


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for statement in statements:
            conn.executescript(statement)
    conn.close()


def _pragmas(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        return (
            int(conn.execute("PRAGMA application_id").fetchone()[0]),
            int(conn.execute("PRAGMA user_version").fetchone()[0]),
        )
    finally:
        conn.close()


DATABASES: dict[str, tuple[Callable[[Path], None], str]] = {
    "other-program": (
        lambda p: _sql(
            p, "CREATE TABLE invoices (id INTEGER, total REAL); INSERT INTO invoices VALUES (1, 9.5);"
        ),
        "another program's SQLite database (tables: invoices), not a ragmeter run history",
    ),
    "other-program-with-runs": (
        lambda p: _sql(p, "CREATE TABLE runs (id INTEGER, command TEXT);"),
        "another program's SQLite database (tables: runs)",
    ),
    "history-plus-a-table": (
        lambda p: _sql(p, HISTORY.schema, "CREATE TABLE notes (x TEXT);"),
        "tables: metric_values, notes, runs",
    ),
    "application-id-of-another-program": (
        lambda p: _sql(p, "PRAGMA application_id = 1234;", HISTORY.schema),
        "application id 0x4d2",
    ),
    "user-version-of-another-program": (
        lambda p: _sql(p, "PRAGMA user_version = 42; CREATE TABLE t (x);"),
        "another program's SQLite database",
    ),
    "judge-cache": (
        lambda p: _sql(
            p, JUDGE_CACHE.schema, f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 1;"
        ),
        "this is a ragmeter judge cache, not a run history",
    ),
    "newer-ragmeter": (
        lambda p: _sql(
            p, HISTORY.schema, f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 99;"
        ),
        f"written by a newer ragmeter (run history schema 99; this one reads up to {HISTORY.version})",
    ),
    "text-file": (lambda p: p.write_text("id,label\n1,a\n", encoding="utf-8"), "not a SQLite database"),
    "binary-file": (lambda p: p.write_bytes(bytes(range(256))), "not a SQLite database"),
    "truncated-sqlite": (
        lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x01" * 50),
        "not a usable run history",
    ),
    "folder": (lambda p: p.mkdir(), "is a directory, expected a run history file (.sqlite)"),
    "schema-1-runs-table-only": (
        lambda p: _sql(p, V1_SCHEMA.split("CREATE TABLE metric_values")[0], "PRAGMA user_version = 1;"),
        "another program's SQLite database (tables: runs)",
    ),
    "schema-1-tables-marked-as-2": (
        lambda p: _sql(p, V1_SCHEMA, f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 2;"),
        "a damaged ragmeter run history (its tables are not those of schema 2)",
    ),
    "current-tables-unmarked-as-1": (
        lambda p: _sql(p, HISTORY.schema, "PRAGMA user_version = 1;"),
        "another program's SQLite database (tables: metric_values, runs)",
    ),
}


@pytest.mark.parametrize("case", list(DATABASES), ids=list(DATABASES))
def test_history_refuses_a_database_that_is_not_its_own(refused: Any, tmp_path: Path, case: str) -> None:
    make, fragment = DATABASES[case]
    make(tmp_path / "h.db")
    refused(["history", "--db", "h.db"], "h.db: ", fragment)


@pytest.mark.parametrize("case", ["other-program", "text-file", "judge-cache", "newer-ragmeter"])
def test_eval_record_refuses_it_before_any_work(refused: Any, tmp_path: Path, case: str) -> None:
    make, fragment = DATABASES[case]
    make(tmp_path / "h.db")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n", encoding="utf-8")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 1.0 t\n", encoding="utf-8")
    argv = ["eval", "--qrels", "q.txt", "--run", "r.txt", "-m", "map", "--record", "--history", "h.db"]
    refused([*argv, "--out", "res"], "h.db: ", fragment)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["history", "--db", "missing.sqlite"], "missing.sqlite: no history database here yet"),
        (["history", "--last", "0"], "'--last'"),
        (["history", "--db", "empty.sqlite"], "empty.sqlite: no run history here"),
    ],
)
def test_history_without_a_database(refused: Any, tmp_path: Path, args: list[str], fragment: str) -> None:
    (tmp_path / "empty.sqlite").write_bytes(b"")
    refused(args, fragment)


def _record(cli: Any, folder: Path, db: str) -> None:
    (folder / "q.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n", encoding="utf-8")
    (folder / "r.txt").write_text("q1 Q0 d1 1 1.0 t\nq2 Q0 x 1 1.0 t\n", encoding="utf-8")
    code, _, err = cli(
        ["eval", "--qrels", "q.txt", "--run", "r.txt", "-m", "map", "--record", "--history", db]
    )
    assert code == 0, err


def test_a_new_history_is_marked_as_ragmeters(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _record(cli, tmp_path, "h.sqlite")
    assert _pragmas(tmp_path / "h.sqlite") == (APPLICATION_ID, 2)


OLD_HISTORIES = {
    "schema-1-unmarked": (V1_SCHEMA + "PRAGMA user_version = 1;", (0, 1)),
    "schema-1-unmarked-no-version": (V1_SCHEMA, (0, 0)),
    "schema-1-marked": (
        V1_SCHEMA + f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 1;",
        None,
    ),
    "schema-2-unmarked": (HISTORY.schema + "PRAGMA user_version = 2;", (0, 2)),
}


@pytest.mark.parametrize("case", list(OLD_HISTORIES), ids=list(OLD_HISTORIES))
def test_an_older_history_is_read_as_it_is_then_migrated_and_marked(
    cli: Any, accepted: Any, tmp_path: Path, case: str
) -> None:
    schema, pragmas = OLD_HISTORIES[case]
    old = tmp_path / "old.sqlite"
    _sql(
        old,
        schema,
        "INSERT INTO runs (created_at, label, n_queries, aggregate_json) VALUES ('2026-01-01', 'first', 2, '{\"map\": 0.25}');",
    )
    before = old.read_bytes()
    rows = json.loads(accepted(["history", "--db", "old.sqlite", "--json"]))
    assert [(r["label"], r["aggregate"], r["suite"], r["dataset_name"]) for r in rows] == [
        ("first", {"map": 0.25}, None, None)
    ]
    assert old.read_bytes() == before  # reading changes nothing
    if pragmas is not None:
        assert _pragmas(old) == pragmas
    _record(cli, tmp_path, "old.sqlite")
    assert _pragmas(old) == (APPLICATION_ID, 2)
    conn = sqlite3.connect(old)
    try:
        columns = [str(c[1]) for c in conn.execute("PRAGMA table_info(runs)")]
    finally:
        conn.close()
    assert columns[-3:] == ["suite", "dataset_name", "dataset_sha256"]
    rows = json.loads(accepted(["history", "--db", "old.sqlite", "--json"]))
    assert [(r["aggregate"]["map"], r["dataset_name"]) for r in rows] == [(0.25, None), (0.5, "q.txt")]


def test_an_empty_sqlite_database_becomes_a_history(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _sql(tmp_path / "blank.sqlite", "VACUUM;")
    _record(cli, tmp_path, "blank.sqlite")
    assert _pragmas(tmp_path / "blank.sqlite") == (APPLICATION_ID, 2)
