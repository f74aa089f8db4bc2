"""``ragmeter cache stats|clear``: only ragmeter's own judge cache is opened, read or cleared."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ragmeter.io.databases import APPLICATION_ID, HISTORY, JUDGE_CACHE
from ragmeter.judges.cache import JudgeCache


def _sql(path: Path, script: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.executescript(script)
    conn.close()


MARK = f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 1;"
FILES = {
    "other-program": (
        lambda p: _sql(p, "CREATE TABLE judgements (id INTEGER); CREATE TABLE users (name TEXT);"),
        "another program's SQLite database (tables: judgements, users), not a ragmeter judge cache",
    ),
    "history": (
        lambda p: _sql(p, HISTORY.schema + MARK),
        "this is a ragmeter run history, not a judge cache",
    ),
    "newer": (
        lambda p: _sql(
            p, JUDGE_CACHE.schema + f"PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = 7;"
        ),
        "written by a newer ragmeter (judge cache schema 7",
    ),
    "text": (lambda p: p.write_text("key,value\n", encoding="utf-8"), "not a SQLite database"),
    "folder": (lambda p: p.mkdir(), "is a folder; give the judge cache file"),
}


@pytest.mark.parametrize("case", list(FILES), ids=list(FILES))
@pytest.mark.parametrize("command", ["stats", "clear"])
def test_cache_refuses_a_file_that_is_not_its_own(
    refused: Any, tmp_path: Path, case: str, command: str
) -> None:
    make, fragment = FILES[case]
    make(tmp_path / "c.db")
    refused(["cache", command, "--path", "c.db"], "c.db: ", fragment)


@pytest.mark.parametrize(
    ("config", "fragment"),
    [
        ("judge:\n  cache_pth: c.sqlite\n", "judge: cache_pth: unknown setting; did you mean 'cache_path'?"),
        ("judge: yes\n", "judge: must be a mapping of judge settings"),
        ("judge:\n  cache_path: [a]\n", "judge: cache_path"),
        ("judge:\n  base_url: 'http://'\n", "judge: base_url: has no host"),
        ("jugde:\n  cache_path: c.sqlite\n", "jugde: unknown setting; did you mean 'judge'?"),
    ],
)
def test_cache_refuses_a_bad_judge_block(refused: Any, tmp_path: Path, config: str, fragment: str) -> None:
    (tmp_path / "ragmeter.yaml").write_text(config, encoding="utf-8")
    refused(["cache", "stats"], "ragmeter.yaml: ", fragment)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["cache", "stats", "--config", "D"], "D: is a directory, expected a config file"),
        (["cache", "stats", "--config", "nope.yaml"], "nope.yaml: config file not found"),
        (
            ["cache", "clear", "--path", "good.sqlite", "--judge", "groundednes"],
            "--judge: unknown judge 'groundednes'",
        ),
        (["cache", "purge"], "No such command 'purge'"),
    ],
)
def test_bad_cache_arguments_are_refused(
    refused: Any, tmp_path: Path, args: list[str], fragment: str
) -> None:
    (tmp_path / "D").mkdir()
    cache = JudgeCache(tmp_path / "good.sqlite")
    cache.put(
        "k",
        {"parsed": {}},
        judge="groundedness",
        prompt_id="g",
        prompt_version="v1",
        model="m",
        endpoint="http://h",
    )
    cache.close()
    refused(args, fragment)


def test_a_cache_from_before_the_marks_is_read_unchanged(accepted: Any, tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    _sql(
        path,
        JUDGE_CACHE.schema + "INSERT INTO meta VALUES ('schema_version', '1');"
        "INSERT INTO judgements (key, judge, prompt_id, prompt_version, model, endpoint, created_at, record)"
        " VALUES ('k', 'groundedness', 'g', 'v1', 'm', 'http://h', '2026-01-01', '{}');",
    )
    before = path.read_bytes()
    stats = json.loads(accepted(["cache", "stats", "--path", "old.sqlite", "--json"]))
    assert stats["entries"] == 1
    assert path.read_bytes() == before
