"""The judge cache: SQLite, keyed on a stable hash of everything that decides a judgement.

The key covers the endpoint, the model as given, the decoding parameters
(temperature, seed, max_tokens), the prompt (id, version and SHA-256 of its
file) and the rendered input messages. Only usable judgements are stored:
failed calls and replies that could not be parsed are never cached, so a
later run asks again. A second identical run therefore makes no judge calls.

>>> key = cache_key(endpoint="http://h/v1", model="m", decoding={"temperature": 0.0},
...                 prompt={"id": "g", "version": "v1", "sha256": "0"},
...                 messages=[{"role": "user", "content": "x"}])
>>> len(key), key == cache_key(endpoint="http://h/v1/", model="m", decoding={"temperature": 0.0},
...                             prompt={"id": "g", "version": "v1", "sha256": "0"},
...                             messages=[{"role": "user", "content": "x"}])
(64, True)
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.io.databases import JUDGE_CACHE, open_database
from ragmeter.redaction import redact

CACHE_SCHEMA_VERSION = JUDGE_CACHE.version


def normalise_endpoint(base_url: str) -> str:
    """Lower-case scheme and host, no trailing slash.

    >>> normalise_endpoint("HTTP://LocalHost:8000/v1/")
    'http://localhost:8000/v1'
    """
    url = base_url.strip().rstrip("/")
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}://{host.lower()}{slash}{path}"


def cache_key(
    *,
    endpoint: str,
    model: str,
    decoding: Mapping[str, Any],
    prompt: Mapping[str, str],
    messages: Sequence[Mapping[str, str]],
) -> str:
    """SHA-256 of the canonical JSON of the inputs that decide a judgement."""
    payload = {
        "v": CACHE_SCHEMA_VERSION,
        "endpoint": normalise_endpoint(endpoint),
        "model": model,
        "decoding": dict(decoding),
        "prompt": dict(prompt),
        "messages": [dict(m) for m in messages],
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class JudgeCache:
    """A SQLite file of judgements; safe to share between the threads of one run.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     cache = JudgeCache(pathlib.Path(tmp) / "c.sqlite")
    ...     cache.put("k", {"parsed": {"score": 5}}, judge="g", prompt_id="g", prompt_version="v1",
    ...               model="m", endpoint="http://h/v1")
    ...     hit = cache.get("k")
    ...     stats = cache.stats()
    ...     cache.close()
    >>> hit, stats["entries"], stats["hits"]
    ({'parsed': {'score': 5}}, 1, 1)
    """

    def __init__(self, path: str | Path, *, write: bool = True) -> None:
        self.path = Path(path)
        self._conn = open_database(self.path, JUDGE_CACHE, write=write, timeout=30, check_same_thread=False)
        if write:
            try:
                # WAL: readers never block the writer, and commits need no fsync each (crash-safe still)
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute(
                    "INSERT OR IGNORE INTO meta(name, value) VALUES ('schema_version', ?)",
                    (str(CACHE_SCHEMA_VERSION),),
                )
                self._conn.commit()
            except sqlite3.DatabaseError as exc:
                self._conn.close()
                raise ConfigError(f"cannot open the judge cache ({exc})", where=str(self.path)) from None
        self._lock = threading.Lock()

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the lock; a database error (a full disk, a damaged file) becomes one line naming the cache."""
        with self._lock:
            try:
                yield
            except sqlite3.DatabaseError as exc:
                raise ConfigError(f"cannot use the judge cache ({exc})", where=str(self.path)) from None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record for ``key`` (and count the hit), or ``None``."""
        with self._locked():
            row = self._conn.execute("SELECT record FROM judgements WHERE key = ?", (key,)).fetchone()
            if row is None:
                return None
            self._conn.execute(
                "UPDATE judgements SET hits = hits + 1, last_hit_at = ? WHERE key = ?", (_now(), key)
            )
            self._conn.commit()
        value = json.loads(row[0])
        return value if isinstance(value, dict) else None

    def contains(self, key: str) -> bool:
        """Whether ``key`` is stored (without counting a hit)."""
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM judgements WHERE key = ?", (key,)).fetchone()
        return row is not None

    def put(
        self,
        key: str,
        record: Mapping[str, Any],
        *,
        judge: str,
        prompt_id: str,
        prompt_version: str,
        model: str,
        endpoint: str,
    ) -> None:
        """Store a usable judgement (callers never store failures); secrets are redacted."""
        text = redact(json.dumps(dict(record), ensure_ascii=False, sort_keys=True))
        model, endpoint = redact(model), redact(normalise_endpoint(endpoint))
        with self._locked():
            self._conn.execute(
                "INSERT OR REPLACE INTO judgements"
                "(key, judge, prompt_id, prompt_version, model, endpoint, created_at, hits, record)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)",
                (key, judge, prompt_id, prompt_version, model, endpoint, _now(), text),
            )
            self._conn.commit()

    def stats(self) -> dict[str, Any]:
        """Entries, hits, size and a breakdown by judge, prompt version and model."""
        with self._lock:
            entries, hits, oldest, newest = self._conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(hits), 0), MIN(created_at), MAX(created_at) FROM judgements"
            ).fetchone()
            groups = self._conn.execute(
                "SELECT judge, prompt_version, model, endpoint, COUNT(*), COALESCE(SUM(hits), 0)"
                " FROM judgements GROUP BY judge, prompt_version, model, endpoint"
                " ORDER BY judge, prompt_version, model, endpoint"
            ).fetchall()
        return {
            "path": str(self.path),
            "entries": int(entries),
            "hits": int(hits),
            "size_bytes": self.path.stat().st_size if self.path.exists() else 0,
            "oldest": oldest,
            "newest": newest,
            "by_judge": [
                {
                    "judge": judge,
                    "prompt_version": version,
                    "model": model,
                    "endpoint": endpoint,
                    "entries": int(count),
                    "hits": int(group_hits),
                }
                for judge, version, model, endpoint, count, group_hits in groups
            ],
        }

    def clear(self, *, judge: str | None = None, model: str | None = None) -> int:
        """Delete entries (all, or those of one judge and/or model); return how many."""
        clauses, params = [], []
        if judge is not None:
            clauses.append("judge = ?")
            params.append(judge)
        if model is not None:
            clauses.append("model = ?")
            params.append(model)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._locked():
            removed = self._conn.execute(f"DELETE FROM judgements{where}", params).rowcount
            self._conn.commit()
            if removed:
                self._conn.execute("VACUUM")
        return int(removed)

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._conn.close()
