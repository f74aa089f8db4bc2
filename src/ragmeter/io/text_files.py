"""Reading a file's bytes and text: decompressed, decoded as UTF-8, or one clear error naming the file.

Every reader of ragmeter starts here (:mod:`ragmeter.io.jsonyaml` parses what this returns):

- A ``.gz``, ``.bz2``, ``.xz`` (and, with pyarrow, ``.lz4``, ``.zst``, ``.br``) file is
  decompressed; a broken one is named.
- Text is UTF-8, with or without a byte-order mark. A UTF-16 or UTF-32 file (with or without
  a byte-order mark) and any other encoding are named, with the line of the first bad byte.
- A folder given for a file, a missing file and an unreadable one say so.

>>> decode_text("\\ufeffid: 1\\n".encode(), source="f.yaml")
'id: 1\\n'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ragmeter.errors import InputError

_COMPRESSED = {
    ".gz": "gzip",
    ".bz2": "bz2",
    ".xz": "xz",
    ".lz4": "lz4",
    ".zst": "zstd",
    ".zstd": "zstd",
    ".br": "brotli",
}
"""File suffix → compression; such files are decompressed before they are read."""

TABLE_SUFFIXES = frozenset({".json", ".csv", ".tsv", ".parquet", ".pq", ".jsonl"})
"""Suffixes of qrels and runs that a reader other than TREC's claims (every other file is read as TREC)."""

_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


READ_PROGRESS_BYTES = 1 << 23
"""Readers of large files tell their ``progress`` each time this many more bytes (8 MiB) are read."""

ProgressCallback = Callable[[int, int], None]
"""``progress(bytes read, file size)``."""


class ReadingProgress:
    """Tells a :data:`ProgressCallback` of a file's bytes read so far, every :data:`READ_PROGRESS_BYTES` and at the end.

    >>> heard = []
    >>> reading = ReadingProgress(Path(__file__), lambda done, size: heard.append(done == size))
    >>> reading.add(1)
    >>> reading.end()
    >>> heard
    [True]
    """

    def __init__(self, path: Path, progress: ProgressCallback | None) -> None:
        self.progress = progress
        self.size = path.stat().st_size if progress is not None else 0
        self.done = 0
        self.every = READ_PROGRESS_BYTES
        self.report_at = self.every

    def add(self, n: int) -> None:
        """``n`` more bytes were read."""
        self.done += n
        if self.progress is not None and self.done >= self.report_at:
            self.progress(min(self.done, self.size), self.size)
            self.report_at = self.done + self.every

    def end(self) -> None:
        """The whole file was read."""
        if self.progress is not None:
            self.progress(self.size, self.size)


def compression_of(path: Path) -> str | None:
    """The compression a file's suffix names (``"gzip"`` for ``run.gz``), or None.

    >>> compression_of(Path("run.txt.gz")), compression_of(Path("run.txt"))
    ('gzip', None)
    """
    return _COMPRESSED.get(path.suffix.lower())


def data_suffix(path: Path) -> str:
    """The suffix that says what a file holds, behind a compression suffix (``.jsonl`` for ``x.jsonl.gz``).

    >>> data_suffix(Path("outputs.jsonl.gz")), data_suffix(Path("d.YAML"))
    ('.jsonl', '.yaml')
    """
    if compression_of(path) is not None:
        path = path.with_suffix("")
    return path.suffix.lower()


def read_bytes(path: Path) -> bytes:
    """The bytes of a file (decompressed when its suffix names a compression), or an :class:`InputError`."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError("file not found", where=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, expected a file", where=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read file ({exc.strerror or exc})", where=str(path)) from None
    kind = compression_of(path)
    return data if kind is None else _decompress(data, kind, path)


def _decompress(data: bytes, kind: str, path: Path) -> bytes:
    try:
        if kind == "gzip":
            import gzip

            return gzip.decompress(data)
        if kind == "bz2":
            import bz2

            return bz2.decompress(data)
        if kind == "xz":
            import lzma

            return lzma.decompress(data)
        import pyarrow as pa

        with pa.input_stream(pa.py_buffer(data), compression=kind) as stream:
            return bytes(stream.read())
    except ImportError:
        raise InputError(f"reading {kind} files needs pyarrow", where=str(path)) from None
    except Exception as exc:  # OSError, EOFError, zlib.error, lzma.LZMAError, pyarrow's errors: corrupt data
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(f"not a valid {kind} file ({detail})", where=str(path)) from None


def decode_text(data: bytes, *, source: str, line: int | None = None) -> str:
    """UTF-8 bytes as text (a leading byte-order mark is dropped); any other encoding is named.

    ``line``: the bytes are that line of ``source`` (else a whole file, whose line is found).

    >>> decode_text("\\ufeffid: 1\\n".encode(), source="f.yaml")
    'id: 1\\n'
    >>> decode_text("a\\n\\xe9\\n".encode("latin-1"), source="f.yaml")
    Traceback (most recent call last):
    ...
    ragmeter.errors.InputError: f.yaml:2: not UTF-8 text: byte 0xe9 (column 1) cannot be decoded; save the file as UTF-8
    """
    if line is None or line == 1:
        for bom, name in _BOMS:
            if data.startswith(bom):
                raise InputError(
                    f"the file is {name} text (byte-order mark {bom.hex(' ').upper()}); "
                    "ragmeter reads UTF-8: save it as UTF-8",
                    where=source,
                )
        head = data[:64]
        if len(head) >= 4 and head.count(0) * 3 >= len(head):
            raise InputError(
                "the file looks like UTF-16 or UTF-32 text (a third of its first bytes are 0); "
                "ragmeter reads UTF-8: save it as UTF-8",
                where=source,
            )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        lineno = line if line is not None else data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"not UTF-8 text: byte 0x{data[exc.start]:02x} (column {exc.start - line_start + 1}) cannot be "
            "decoded; save the file as UTF-8",
            where=f"{source}:{lineno}",
        ) from None


def read_text(path: Path, *, empty: str = "file is empty") -> str:
    """Read a UTF-8 text file (see :func:`read_bytes` and :func:`decode_text`).

    ``empty`` is the error for a file with nothing but white space.
    """
    text = decode_text(read_bytes(path), source=str(path))
    if not text.strip():
        raise InputError(empty, where=str(path))
    return text


def line_of(text: str, index: int) -> int:
    """The 1-based line (counting ``\\n`` only) of a character index.

    >>> line_of("a\\nb\\u2028c", 4)
    2
    """
    return text.count("\n", 0, max(0, index)) + 1


# -- lone surrogates ---------------------------------------------------------------------------

LONE_ESCAPE = re.compile(  # a high half not followed by a low one, or a low half not after a high one
    r"(?<!\\)\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})(?<!\\)\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
"""A JSON escape of a lone surrogate: text that stands for no character."""
SURROGATE = re.compile("[\ud800-\udfff]")
"""A surrogate code point in a Python string (a lone escape read, or a file name's undecodable byte)."""


def writable(text: str) -> bytes:
    r"""``text`` as UTF-8, every lone surrogate (escaped or not) written as U+FFFD.

    Such text comes from a file name with bytes that are not UTF-8; writing it as it is would
    make a file that no UTF-8 reader, ragmeter's included, could read back.

    >>> writable(r'{"path": "q\udcff.txt"}'), writable("q\udcff.txt"), writable(r'"\ud83d\ude00"')
    (b'{"path": "q\\ufffd.txt"}', b'q\xef\xbf\xbd.txt', b'"\\ud83d\\ude00"')
    """
    if SURROGATE.search(text):
        text = SURROGATE.sub("\ufffd", text)
    if "\\u" in text and LONE_ESCAPE.search(text):
        text = LONE_ESCAPE.sub(r"\\ufffd", text)
    return text.encode("utf-8")
