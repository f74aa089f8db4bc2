"""Writing a file atomically: a temporary file in the same folder, flushed, then renamed over the target.

A crash (or Ctrl-C) mid-write leaves the previous file intact, never half of the new one.

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "sub" / "out.txt"
>>> write_text_atomic(target, "one\\n")
>>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
('one\\n', ['out.txt'])
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename; folders are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
