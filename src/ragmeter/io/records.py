"""Reading structured files (YAML, JSON, JSONL) into records that remember where they came from.

A :class:`Record` is one object of a file with a ``where`` label such as
``samples.yaml:12`` or ``outputs.jsonl:3``, used in every error message.

>>> from pydantic import BaseModel
>>> class M(BaseModel):
...     k: int
>>> try:
...     validate(M, {"k": "x"}, where="f.yaml:3")
... except Exception as exc:
...     print(exc)
f.yaml:3: k: Input should be a valid integer, unable to parse string as an integer
"""

from __future__ import annotations

import difflib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ragmeter.errors import InputError
from ragmeter.io.digests import file_sha256 as file_sha256  # re-exported: it used to live here
from ragmeter.io.jsonyaml import json_lines, load_yaml, loads_json
from ragmeter.io.text_files import data_suffix, line_of
from ragmeter.io.text_files import read_text as read_text  # re-exported: it used to live here

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Record:
    """One top-level object read from a file, with the place it came from."""

    value: Any
    where: str


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation holds: ``M``, ``M | None``, ``list[M]``, ``dict[str, M]``, unions."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _models_in(arg)]


def _known_fields(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """Field names of the (nested) model that ``loc``'s parent points at.

    List indexes, mapping keys and union tags in ``loc`` are stepped over.
    """
    models = [model] if model is not None else []
    for part in loc[:-1]:
        inner = [
            m.model_fields[part].annotation
            for m in models
            if isinstance(part, str) and part in m.model_fields
        ]
        if inner:
            models = [found for annotation in inner for found in _models_in(annotation)]
    return list(dict.fromkeys(name for m in models for name in m.model_fields))


def unknown_key_message(model: type[BaseModel] | None, loc: tuple[Any, ...], *, what: str = "setting") -> str:
    """``unknown setting; did you mean 'x'?`` (or the known names) for the unknown key at ``loc``.

    >>> from ragmeter.config import RagmeterConfig
    >>> unknown_key_message(RagmeterConfig, ("metrics", "retrieval", "defualt_k"))
    "unknown setting; did you mean 'default_k'?"
    """
    known = _known_fields(model, loc)
    close = difflib.get_close_matches(str(loc[-1]), known, n=1)
    if close:
        return f"unknown {what}; did you mean {close[0]!r}?"
    return f"unknown {what}" + (f" (known: {', '.join(known)})" if known else "")


def describe_validation_error(exc: ValidationError, model: type[BaseModel] | None = None) -> str:
    """Turn pydantic's error into one line: ``field.path: message``.

    An unknown key says so and suggests the closest known one (when ``model`` is given).
    """
    errors = exc.errors()
    err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])  # a typo explains the rest
    loc = ".".join(str(part) for part in err["loc"] if part != "__root__")
    msg = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = unknown_key_message(model, tuple(err["loc"]))
    return f"{loc}: {msg}" if loc else msg


def validate(model: type[M], value: Any, *, where: str) -> M:
    """Validate ``value`` as ``model``; raise :class:`InputError` naming ``where`` and the field."""
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc, model), where=where) from None


def check_output_file(path: Path) -> Path:
    """Check, before any work is done, that ``path`` can be written as a file; return it.

    A folder, or a path under something that is a file, is an :class:`InputError` naming the path,
    so a command fails at once instead of after its work, with a traceback.
    """
    if path.is_dir():
        raise InputError("is a directory; expected a file name", where=str(path))
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"cannot create it: {parent} is a file, not a folder", where=str(path))
            break
    return path


def read_jsonl(path: Path) -> list[Record]:
    """Read a JSON Lines file; blank lines are skipped (but counted), each record is labelled ``file:line``.

    Lines end at ``\\n`` only, so U+2028 and U+2029 inside strings are read as the JSON they are.
    """
    return [
        Record(loads_json(line, source=str(path), line=number), f"{path}:{number}")
        for number, line in json_lines(read_text(path))
    ]


def _yaml_item_lines(text: str, key: str | None) -> list[int]:
    """Line numbers (1-based) of the items of the top-level list (or of ``key``'s list)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if key is not None and isinstance(node, yaml.MappingNode):
        for k_node, v_node in node.value:
            if isinstance(k_node, yaml.ScalarNode) and k_node.value == key:
                node = v_node
                break
    if isinstance(node, yaml.SequenceNode):
        return [line_of(text, item.start_mark.index) for item in node.value]
    return []


def read_structured(path: Path) -> Any:
    """Parse a YAML or JSON file (chosen by suffix; YAML otherwise) into Python data."""
    return _parse(read_text(path), path)


def _parse(text: str, path: Path) -> Any:
    if data_suffix(path) == ".json":
        return loads_json(text, source=str(path))
    return load_yaml(text, source=str(path))


def read_record_list(path: Path, *, key: str) -> list[Record]:
    """Read the records of a YAML/JSON/JSONL file.

    A YAML or JSON file holds either a list or an object whose ``key`` is the
    list; a ``.jsonl`` file holds one record per line.
    """
    if data_suffix(path) == ".jsonl":
        return read_jsonl(path)
    text = read_text(path)
    data = _parse(text, path)
    listed_under: str | None = None
    if isinstance(data, dict):
        if key not in data:
            raise InputError(f"expected a list of records or an object with a {key!r} list", where=str(path))
        data, listed_under = data[key], key
    if not isinstance(data, list):
        raise InputError(f"expected a list of records under {key!r}", where=str(path))
    if not data:
        raise InputError(f"no records under {key!r}", where=str(path))
    lines = _yaml_item_lines(text, listed_under) if data_suffix(path) != ".json" else []
    records = []
    for index, value in enumerate(data):
        label = f"{key}[{index}]"
        where = f"{path}:{lines[index]}" if index < len(lines) else f"{path}:{label}"
        records.append(Record(value, where))
    return records
