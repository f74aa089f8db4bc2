"""Every SQLite database of ragmeter (the run history, the judge cache) is opened here, and only here.

ragmeter marks its own databases: ``PRAGMA application_id`` is :data:`APPLICATION_ID` (``RGMT``)
and ``PRAGMA user_version`` is the schema version of that kind of database. Opening a path:

* missing, an empty file, or a SQLite database with no table and no marks: a new database
  (created, marked and given its tables when opened for writing);
* marked by ragmeter, holding the tables of this kind at a schema this ragmeter reads: opened;
* unmarked but holding exactly this kind's tables and columns (of this schema or of an older
  one): a ragmeter database from before the marks; read as it is, and marked the first time it
  is opened for writing;
* anything else is refused with one line, before anything is written: a file that is not
  SQLite, another program's database, the other kind of ragmeter database, a newer schema, a
  folder. ragmeter never adds its tables to a database that is not its own.

A schema change raises the kind's ``version`` and adds a :class:`Migration` from the version
before. A database at an older schema (marked, or unmarked with exactly that schema's tables) is
migrated when opened for writing, in one transaction with its marks; opened for reading, the
file is left as it is and the migration runs on a copy in memory, so readers always see the
current schema. (The run history is at version 2, the judge cache at version 1.)

>>> import tempfile, pathlib
>>> kind = DatabaseKind("demo store", "CREATE TABLE IF NOT EXISTS t (a TEXT);", version=1)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "demo.sqlite"
>>> conn = open_database(path, kind, write=True)
>>> conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID, conn.execute("PRAGMA user_version").fetchone()
(True, (1,))
>>> conn.close()
>>> other = pathlib.Path(tempfile.mkdtemp()) / "app.db"
>>> sqlite3.connect(other).execute("CREATE TABLE customers (id INTEGER)").connection.close()
>>> open_database(other, kind, write=True)
Traceback (most recent call last):
...
ragmeter.errors.InputError: ...app.db: another program's SQLite database (tables: customers), not a ragmeter demo store; ragmeter leaves it alone: give another path
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ragmeter.errors import InputError

APPLICATION_ID = 0x52474D54
"""``PRAGMA application_id`` of every ragmeter database: the bytes ``RGMT``."""

SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Migration:
    """An older schema of a kind of database, and the SQL that takes it to the next version."""

    schema: str
    """The ``CREATE TABLE`` statements of that older version (to recognise it unmarked)."""
    upgrade: str
    """SQL statements turning a database at that version into one at the next version."""


@dataclass(frozen=True)
class DatabaseKind:
    """One kind of ragmeter database: its name in messages, its tables, and its schema version."""

    name: str
    schema: str
    """``CREATE TABLE IF NOT EXISTS`` statements for every table."""
    version: int
    """``PRAGMA user_version`` of this schema."""
    migrations: tuple[Migration, ...] = ()
    """One per older version, oldest first: ``migrations[v - 1]`` takes version ``v`` to ``v + 1``."""

    def __post_init__(self) -> None:
        if len(self.migrations) != self.version - 1:
            raise ValueError(f"{self.name}: version {self.version} needs {self.version - 1} migrations")

    @cached_property
    def tables(self) -> dict[str, tuple[str, ...]]:
        """Table → column names, as :attr:`schema` creates them."""
        return _tables_of(self.schema)

    @cached_property
    def tables_by_version(self) -> dict[int, dict[str, tuple[str, ...]]]:
        """Schema version → its tables and columns, for this version and every older one."""
        older = {v: _tables_of(m.schema) for v, m in enumerate(self.migrations, start=1)}
        return {**older, self.version: self.tables}

    def upgrade_from(self, version: int) -> str:
        """The SQL that takes a database at ``version`` to :attr:`version` (empty when current)."""
        return "\n".join(m.upgrade for m in self.migrations[version - 1 :])


def _tables_of(schema: str) -> dict[str, tuple[str, ...]]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(schema)
        return _tables(conn)
    finally:
        conn.close()


_RUNS_V1 = """
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    label TEXT NOT NULL,
    source TEXT,
    git_revision TEXT,
    ragmeter_version TEXT,
    n_queries INTEGER NOT NULL,
    aggregate_json TEXT NOT NULL"""
_RUNS_ADDED_IN_V2 = ("suite", "dataset_name", "dataset_sha256")
"""What runs gained at version 2: each run's suite and dataset (all TEXT, added at the end)."""


def _history_schema(runs_columns: str) -> str:
    return f"""
CREATE TABLE IF NOT EXISTS runs ({runs_columns}
);
CREATE TABLE IF NOT EXISTS metric_values (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    metric TEXT NOT NULL,
    value REAL,
    n_scored INTEGER,
    PRIMARY KEY (run_id, metric)
);
"""


HISTORY = DatabaseKind(
    "run history",
    _history_schema(_RUNS_V1 + "".join(f",\n    {column} TEXT" for column in _RUNS_ADDED_IN_V2)),
    version=2,
    migrations=(
        Migration(
            _history_schema(_RUNS_V1),
            "".join(f"ALTER TABLE runs ADD COLUMN {column} TEXT;\n" for column in _RUNS_ADDED_IN_V2),
        ),
    ),
)
"""The run history (:mod:`ragmeter.report.history`): every recorded run's aggregates, suite and dataset."""

JUDGE_CACHE = DatabaseKind(
    "judge cache",
    """
CREATE TABLE IF NOT EXISTS judgements (
    key TEXT PRIMARY KEY,
    judge TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    model TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    created_at TEXT NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0,
    last_hit_at TEXT,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
""",
    version=1,
)
"""The judge cache (:mod:`ragmeter.judges.cache`): usable judgements keyed by everything that decides them."""

KINDS = (HISTORY, JUDGE_CACHE)
"""Every kind of ragmeter database, to tell one from another ("this is the judge cache, not the history")."""


def _tables(conn: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    names = [
        str(row[0])
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
        )
    ]
    return {
        name: tuple(str(col[1]) for col in conn.execute(f"PRAGMA table_info({_quote(name)})"))
        for name in sorted(names)
    }


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _refuse(path: Path, message: str) -> InputError:
    return InputError(message, where=str(path))


def _check_file(path: Path, kind: DatabaseKind) -> bool:
    """Whether ``path`` holds data; a folder or a file that is not SQLite is refused."""
    if path.is_dir():
        raise _refuse(path, f"is a directory, expected a {kind.name} file (.sqlite)")
    if not path.exists():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise _refuse(path, f"cannot read it ({exc.strerror})") from None
    if not head:
        return False
    if head != SQLITE_HEADER:
        raise _refuse(path, f"not a SQLite database, so not a ragmeter {kind.name}; give another path")
    return True


def _identify(path: Path, conn: sqlite3.Connection, kind: DatabaseKind) -> tuple[int, bool]:
    """Check that ``conn`` is a database of ``kind``: its schema version (0: empty) and whether it is marked."""
    app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    tables = _tables(conn)
    if app_id == APPLICATION_ID:
        if version > kind.version:
            raise _refuse(
                path,
                f"written by a newer ragmeter ({kind.name} schema {version}; this one reads up to "
                f"{kind.version}); upgrade ragmeter",
            )
        if not tables:
            return 0, True
        if set(tables) != set(kind.tables):
            other = next((k for k in KINDS if set(k.tables) == set(tables)), None)
            what = f"a ragmeter {other.name}" if other else "a ragmeter database of another kind"
            raise _refuse(path, f"this is {what}, not a {kind.name}; give another path")
        if tables != kind.tables_by_version.get(version):
            raise _refuse(
                path, f"a damaged ragmeter {kind.name} (its tables are not those of schema {version})"
            )
        return version, True
    if app_id == 0 and not tables and version == 0:
        return 0, False  # an empty database: nothing of anyone's to damage
    for known, known_tables in kind.tables_by_version.items():
        if app_id == 0 and tables == known_tables and version in (0, known):
            return known, False  # ours, from before the marks
    names = ", ".join(tables) or "none"
    owner = f"application id {app_id:#x}, " if app_id else ""
    raise _refuse(
        path,
        f"another program's SQLite database ({owner}tables: {names}), not a ragmeter {kind.name}; "
        "ragmeter leaves it alone: give another path",
    )


def _connect(path: Path, kind: DatabaseKind, *, write: bool, **connect: Any) -> sqlite3.Connection:
    try:
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
        conn: sqlite3.Connection = sqlite3.connect(str(path), **connect)
    except (OSError, sqlite3.Error) as exc:
        raise _refuse(path, f"cannot open the {kind.name} ({exc})") from None
    return conn


@contextmanager
def _closed_on_error(conn: sqlite3.Connection, path: Path, what: str) -> Iterator[None]:
    """Close ``conn`` when the block fails; SQLite's own errors become one line saying ``what`` failed."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise _refuse(path, f"{what} ({exc})") from None
    except BaseException:
        conn.close()
        raise


def check_database(path: Path, kind: DatabaseKind) -> None:
    """Refuse ``path`` now, before any work, if :func:`open_database` would refuse to write it.

    Nothing is written: a missing file stays missing.
    """
    if _check_file(path, kind):
        conn = _connect(path, kind, write=False)
        with _closed_on_error(conn, path, f"not a usable {kind.name}"):
            _identify(path, conn, kind)
        conn.close()


def open_database(path: Path, kind: DatabaseKind, *, write: bool, **connect: Any) -> sqlite3.Connection:
    """Open the ragmeter database of ``kind`` at ``path`` (see the module docstring for what is refused).

    ``write=True`` creates a missing file (and its folder), the tables, and the marks, and migrates
    an older schema in place; ``write=False`` changes nothing (a missing file or an empty database
    is an :class:`InputError`; an older schema is migrated on a copy in memory).
    ``connect`` goes to :func:`sqlite3.connect` (``timeout``, ``check_same_thread``).
    """
    if not _check_file(path, kind) and not write:
        raise _refuse(path, f"no {kind.name} here")
    conn = _connect(path, kind, write=write, **connect)
    with _closed_on_error(conn, path, f"not a usable {kind.name}"):
        found, marked = _identify(path, conn, kind)
        if found == 0 and not write:
            raise _refuse(path, f"no {kind.name} here (an empty database)")
        if write and (found < kind.version or not marked):
            # one transaction: the file is either left as it was or fully at this schema, marked
            conn.executescript(
                f"BEGIN;\n{kind.upgrade_from(found) if found else kind.schema}\n"
                f"PRAGMA application_id = {APPLICATION_ID};\nPRAGMA user_version = {kind.version};\nCOMMIT;"
            )
        elif found < kind.version:
            memory: sqlite3.Connection = sqlite3.connect(":memory:", **connect)
            with _closed_on_error(memory, path, f"cannot read the {kind.name} (schema {found})"):
                conn.backup(memory)
                conn.close()
                memory.executescript(kind.upgrade_from(found))
            return memory
    return conn
