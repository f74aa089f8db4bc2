"""Writing files so that a crash, a kill or a full disk leaves the old file or none, never half a file.

Every file ragmeter writes whole (``metrics.json``, ``per_query.jsonl``, ``config.json``,
``report.html``, JUnit, agentic results, mined datasets, …) goes through :func:`atomic_files`
or one of the ``write_*_atomic`` helpers: the content goes to a temporary file in the same folder
(``.NAME.<random>.tmp``), is fsynced, then renamed over ``NAME`` (``os.replace``, atomic on
POSIX), and the folder is fsynced so the rename lasts. Several files given together are all
written before any is renamed. Text passes through :func:`ragmeter.redaction.redact` first.

Append-only logs written as work completes (``outputs.jsonl``, judge logs, trial logs) use
:class:`AppendLog`: each line goes out whole in one ``write``, and a line a full disk cut short
is taken back, so the file always ends at a line boundary.

A failure removes the temporary file (and any folder made for it) and raises an
:class:`OSError` that names the destination, which the CLI prints as one line:
``Error: out/metrics.json: No space left on device``.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = write_text_atomic(folder / "a" / "report.txt", "hello\\n")
>>> (folder / "a" / "report.txt").read_text(), sorted(p.name for p in (folder / "a").iterdir())
('hello\\n', ['report.txt'])
>>> with atomic_files(folder / "m.json", folder / "q.jsonl") as (m, q):
...     _ = q.write('{"id": "q1"}\\n')
...     _ = m.write("{}\\n")
>>> sorted(p.name for p in folder.iterdir())
['a', 'm.json', 'q.jsonl']
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import Any

from ragmeter.io.text_files import writable
from ragmeter.redaction import redact as _redact

CHUNK_BYTES = 1 << 20
"""A streamed writer hands the operating system this much at a time."""
_TEMP_NAME = re.compile(r"^\..+\.[0-9a-f]{8}\.tmp$")


def is_temp_file(name: str) -> bool:
    """Whether ``name`` is a temporary file this module left behind (after a kill).

    >>> is_temp_file(".metrics.json.0a1b2c3d.tmp"), is_temp_file("metrics.json")
    (True, False)
    """
    return bool(_TEMP_NAME.match(name))


def named_error(exc: OSError, path: str | Path) -> OSError:
    """``exc`` as an :class:`OSError` (same subclass and errno) whose file name is ``path``."""
    if exc.filename == str(path) or exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Re-raise an :class:`OSError` of the block as one that names ``path``."""
    try:
        yield
    except OSError as exc:
        raise named_error(exc, path) from None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_folder(folder: Path) -> None:
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and missing parents; return the ones made, deepest first.

    A file where a folder should be is an error naming it (``out: is a file, not a folder``).
    """
    missing = []
    current = folder
    while not current.is_dir():
        if current.exists() or current.is_symlink():
            raise NotADirectoryError(errno.ENOTDIR, "is a file, not a folder", str(current))
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    with _naming(folder):
        folder.mkdir(parents=True, exist_ok=True)
    return missing


def _new_mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666  # less the umask, as for any new file


class StagedFile:
    """A temporary file being written in place of ``path``; text is redacted and encoded as UTF-8."""

    def __init__(self, path: Path, *, redact: bool = True) -> None:
        self.path = path
        self._redact = redact
        self._buffer: list[bytes] = []
        self._buffered = 0
        mode = _new_mode(path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
        self.temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        with _naming(path):
            self._fd = os.open(self.temp, flags, mode)

    def write(self, data: str | bytes) -> int:
        """Add ``data`` (text is redacted first); returns its length."""
        chunk = writable(_redact(data) if self._redact else data) if isinstance(data, str) else bytes(data)
        self._buffer.append(chunk)
        self._buffered += len(chunk)
        if self._buffered >= CHUNK_BYTES:
            self.flush()
        return len(data)

    def flush(self) -> None:
        """Hand what is buffered to the operating system."""
        if self._buffer:
            data = b"".join(self._buffer)
            self._buffer, self._buffered = [], 0
            with _naming(self.path):
                _write_all(self._fd, data)

    def finish(self) -> None:
        """Flush, fsync and close the temporary file."""
        self.flush()
        with _naming(self.path):
            os.fsync(self._fd)
            os.close(self._fd)
        self._fd = -1

    def commit(self) -> None:
        """Rename the finished temporary file over :attr:`path`."""
        with _naming(self.path):
            os.replace(self.temp, self.path)

    def discard(self) -> None:
        """Close and remove the temporary file."""
        if self._fd >= 0:
            with suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        with suppress(OSError):
            os.unlink(self.temp)


@contextmanager
def atomic_files(*paths: str | Path, redact: bool = True) -> Iterator[list[StagedFile]]:
    """Stream into temporary files that replace ``paths`` together when the block ends without error.

    On an error (in the block, or while writing) no file in ``paths`` changes and the temporary
    files are gone; an :class:`OSError` names the file it happened to. Missing folders are
    made (and removed again on failure).
    """
    made: list[Path] = []
    staged: list[StagedFile] = []
    try:
        for target in map(Path, paths):
            made += _make_folders(target.parent)
            staged.append(StagedFile(target, redact=redact))
        yield staged
        for stage in staged:
            stage.finish()
        for stage in staged:
            stage.commit()
    except BaseException:
        for stage in staged:
            stage.discard()
        for folder in made:
            with suppress(OSError):
                folder.rmdir()
        raise
    for folder in {stage.path.parent for stage in staged}:
        _fsync_folder(folder)


@contextmanager
def atomic_writer(path: str | Path, *, redact: bool = True) -> Iterator[StagedFile]:
    """Stream into one file atomically (:func:`atomic_files` for a single path).

    >>> import tempfile, pathlib
    >>> with atomic_writer(pathlib.Path(tempfile.mkdtemp()) / "x.txt") as out:
    ...     out.write("abc")
    3
    """
    with atomic_files(path, redact=redact) as (staged,):
        yield staged


def write_text_atomic(path: str | Path, text: str, *, redact: bool = True) -> Path:
    """Write ``text`` (UTF-8, secrets redacted) to ``path`` atomically; returns the path."""
    with atomic_writer(path, redact=redact) as out:
        out.write(text)
    return Path(path)


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (bytes are written as given); returns the path."""
    with atomic_writer(path) as out:
        out.write(data)
    return Path(path)


def write_json_atomic(path: str | Path, data: Any, *, indent: int | None = 2) -> Path:
    """Write ``data`` as JSON (non-ASCII kept, unknown types as text) to ``path`` atomically."""
    return write_text_atomic(path, json.dumps(data, indent=indent, ensure_ascii=False, default=str) + "\n")


class AppendLog:
    """An append-only file of lines: each line goes out whole in one ``write``; thread-safe.

    A failed write (a full disk) is taken back before the error is raised, so the file never
    ends in half a line; ``sync`` fsyncs each line (a power cut loses none).
    """

    def __init__(self, path: str | Path, *, fresh: bool = False, sync: bool = True) -> None:
        self.path = Path(path)
        self._sync = sync
        self._lock = threading.Lock()
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC | (os.O_TRUNC if fresh else 0)
        try:
            self._fd = os.open(self.path, flags, 0o666)
        except OSError as exc:
            raise named_error(exc, self.path) from None

    def fileno(self) -> int:
        """The file descriptor (for locks)."""
        return self._fd

    def append(self, line: str) -> None:
        """Write ``line`` (redacted, a newline added) as one whole line."""
        data = writable(_redact(line) + "\n")
        with self._lock:
            start = os.lseek(self._fd, 0, os.SEEK_END)
            try:
                _write_all(self._fd, data)
                if self._sync:
                    os.fsync(self._fd)
            except OSError as exc:
                with suppress(OSError):
                    os.ftruncate(self._fd, start)
                raise named_error(exc, self.path) from None

    def close(self) -> None:
        """Close the file (idempotent)."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> AppendLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def drop_torn_line(path: Path) -> str | None:
    """Cut a last line that has no newline (a write a kill interrupted); say what was dropped, or ``None``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "log.jsonl"
    >>> _ = p.write_text('{"a": 1}\\n{"a": ')
    >>> drop_torn_line(p).endswith("log.jsonl:2: dropped a truncated last line left by an interrupted run")
    True
    >>> p.read_text()
    '{"a": 1}\\n'
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if not data or data.endswith(b"\n"):
        return None
    cut = data.rfind(b"\n") + 1
    with ExitStack() as stack:
        fd = os.open(path, os.O_WRONLY)
        stack.callback(os.close, fd)
        os.ftruncate(fd, cut)
        os.fsync(fd)
    line = data.count(b"\n", 0, cut) + 1
    return f"{path}:{line}: dropped a truncated last line left by an interrupted run"
