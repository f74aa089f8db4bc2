"""Notice a file that changes while ragmeter reads it (a run still being written, say).

Readers take a :func:`snapshot` (inode, size, modification time) before reading and
call :func:`check_unchanged` after: a difference is one :class:`~ragmeter.errors.InputError`
naming the file, instead of numbers from half a file. Readers never memory-map a file
the user may rewrite: a file that shrinks under a map kills the process with SIGBUS.
This module imports nothing heavy (the CLI's early digest thread uses it).

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "run"
>>> _ = p.write_text("q1 Q0 d1 1 1.0 r\\n")
>>> before = snapshot(p)
>>> check_unchanged(p, before)
>>> _ = p.write_text("q1 Q0 d1 1 1.0 r\\nq1 Q0 d2 2 0.5 r\\n")
>>> check_unchanged(p, before)
Traceback (most recent call last):
    ...
ragmeter.errors.InputError: ...: the file changed while it was read (is it still being written?); run again once it is complete
"""

from __future__ import annotations

import os
from pathlib import Path

from ragmeter.errors import InputError

Snapshot = tuple[int, int, int] | None
"""A file's inode, size and modification time in nanoseconds; ``None`` when it cannot be seen."""


def snapshot(path: str | Path) -> Snapshot:
    """The file as it is now (see :data:`Snapshot`)."""
    try:
        return state(os.stat(path))
    except OSError:
        return None


def state(st: os.stat_result) -> tuple[int, int, int]:
    """The parts of a ``stat`` result that change when a file is rewritten."""
    return st.st_ino, st.st_size, st.st_mtime_ns


def changed(path: str | Path) -> InputError:
    """The error for a file that changed while it was read."""
    return InputError(
        "the file changed while it was read (is it still being written?); run again once it is complete",
        where=str(path),
    )


def check_unchanged(path: str | Path, before: Snapshot) -> None:
    """Raise :func:`changed` unless the file is as it was at ``before``."""
    if snapshot(path) != before:
        raise changed(path)
