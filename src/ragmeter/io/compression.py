"""Compressed input files: which suffixes mean which codec, and their decompressed bytes.

Every reader of a file goes through :func:`read_bytes` (or :func:`open_stream`), so a TREC,
JSON, YAML or JSON Lines file compressed with gzip, bzip2, xz, zstd, lz4 or brotli reads as
its plain twin, line numbers included.

>>> codec_of(Path("run.txt.gz")), codec_of(Path("run.zstd")), codec_of(Path("run.txt"))
('gzip', 'zstd', None)
>>> inner_suffix(Path("run.csv.bz2"))
'.csv'
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ragmeter.errors import InputError

if TYPE_CHECKING:
    import pyarrow as pa

CODECS = {
    ".gz": "gzip",
    ".bz2": "bz2",
    ".xz": "xz",
    ".zst": "zstd",
    ".zstd": "zstd",
    ".lz4": "lz4",
    ".br": "brotli",
}
"""A compression suffix → its codec (pyarrow's name; ``xz`` is read by the standard library)."""

SUFFIXES = tuple(CODECS)


def codec_of(path: Path) -> str | None:
    """The codec a file name asks for (``None``: not compressed)."""
    return CODECS.get(path.suffix.lower())


def inner_suffix(path: Path) -> str:
    """The suffix behind a compression suffix (``.csv`` for ``run.csv.gz``), lower-case."""
    if codec_of(path) is not None:
        path = path.with_suffix("")
    return path.suffix.lower()


def open_stream(path: Path) -> pa.NativeFile:
    """A pyarrow stream of the file's decompressed bytes (for ``xz``, read whole by the standard library)."""
    import pyarrow as pa

    codec = codec_of(path)
    if codec == "xz":
        return pa.BufferReader(read_bytes(path))
    return pa.input_stream(str(path), compression=codec)


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when its name ends in a compression suffix.

    A missing file raises :class:`FileNotFoundError` (as :meth:`Path.read_bytes` does); data that
    does not decompress is an :class:`InputError` naming the file and the codec.
    """
    codec = codec_of(path)
    if codec is None:
        return path.read_bytes()
    if not path.is_file():
        return path.read_bytes()  # the OS error (missing file, folder) as for a plain file
    try:
        if codec == "xz":
            import lzma

            return lzma.decompress(path.read_bytes())
        with open_stream(path) as stream:
            return bytes(stream.read())
    except Exception as exc:  # lzma.LZMAError, pyarrow's OSError or ArrowInvalid: corrupt data
        raise InputError(
            f"cannot decompress the file as {codec} ({type(exc).__name__}: {exc})", where=str(path)
        ) from None
