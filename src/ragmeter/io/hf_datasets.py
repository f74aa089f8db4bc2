"""Hugging Face ``datasets``: ``Dataset`` and ``DatasetDict`` objects, and folders written by ``save_to_disk``.

A saved folder is recognised by the files ``save_to_disk`` writes (``state.json`` and
``dataset_info.json``, or ``dataset_dict.json`` for several splits) and read with
``datasets.load_from_disk`` (the ``datasets`` extra). A ``DatasetDict`` needs a split: the one
named (``--split``), else its only one; several without a name is an error naming them. A
single ``Dataset`` has no splits and ignores ``--split`` (which may be meant for the other input).
The result is an Arrow table, read as a run, qrels or rows of samples by the caller.

>>> import pathlib, tempfile
>>> is_saved_dataset(pathlib.Path(tempfile.mkdtemp()))
False
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from ragmeter.errors import InputError
from ragmeter.extras import import_optional


def is_saved_dataset(path: Path) -> bool:
    """A folder ``Dataset.save_to_disk`` or ``DatasetDict.save_to_disk`` wrote."""
    return path.is_dir() and (
        (path / "dataset_dict.json").is_file()
        or ((path / "state.json").is_file() and (path / "dataset_info.json").is_file())
    )


def is_dataset_dict(data: Any) -> bool:
    """Whether ``data`` is a ``datasets.DatasetDict`` (checked without importing ``datasets``)."""
    return type(data).__module__.startswith("datasets.") and type(data).__name__ == "DatasetDict"


def pick_split(data: Any, split: str | None, *, where: str) -> tuple[Any, str]:
    """The split of a ``DatasetDict`` to read, and its name."""
    names = list(data.keys())
    if split is None:
        if len(names) != 1:
            raise InputError(
                f"the dataset has splits {', '.join(names)}: name one with --split (split=)", where=where
            )
        split = names[0]
    if split not in names:
        raise InputError(f"no split {split!r}; the dataset has: {', '.join(names)}", where=where)
    return data[split], split


def load_saved(path: Path, split: str | None) -> tuple[pa.Table, dict[str, Any]]:
    """The table of a saved dataset folder (one split of it), and what the provenance records."""
    datasets = import_optional("datasets", needed_for="reading a saved Hugging Face dataset")
    try:
        data = datasets.load_from_disk(str(path))
    except (OSError, ValueError) as exc:
        raise InputError(
            f"cannot load the saved dataset ({str(exc).splitlines()[0]})", where=str(path)
        ) from None
    provenance: dict[str, Any] = {"format": "Hugging Face dataset (save_to_disk)"}
    if is_dataset_dict(data):
        data, split = pick_split(data, split, where=str(path))
        provenance["split"] = split
    return data.with_format("arrow")[:], provenance
