"""One safe way to read JSON, JSON Lines and YAML: every input rule is enforced here, once.

Every reader of ragmeter (datasets, outputs, suites, configs, registries, traces, results,
logs) parses files through this module, so each rule holds everywhere:

- **Text** (:mod:`ragmeter.io.text_files`): UTF-8, with or without a byte-order mark;
  UTF-16/UTF-32 and other encodings are named; compressed files are decompressed.
- **JSON** (:func:`loads_json`): a repeated key, ``NaN``/``Infinity``, a number too long to
  read and nesting deeper than Python can parse are errors naming the file and line.
- **JSON Lines** (:func:`json_lines`): lines end at ``\\n`` only (``\\r\\n`` is fine), so
  U+2028, U+2029 and U+0085 inside strings, which are legal JSON, never split a record;
  blank lines are skipped but counted, so line 1 is line 1.
- **YAML** (:func:`load_yaml`): safe types only, and nothing is converted behind the user's
  back. Only plain decimal numbers, ``true``/``false`` and ``null`` are typed; YAML 1.1's
  other conversions (``0017`` octal, ``1:30`` base 60, ``no``/``yes``, dates) are off, so
  those stay text. Mapping keys, and the values of id, answer and text fields
  (:data:`TEXT_FIELDS`), are always the text as written. ``.inf`` and ``.nan`` are errors;
  so are repeated keys, aliases that expand past :data:`MAX_ALIAS_EXPANSION` values (an
  "alias bomb"), and characters YAML forbids (a NUL byte), each with its line.
- **Text values** (both): an escaped lone surrogate (``"\\ud800"``, half of a UTF-16 pair) is
  not a character: it is an error naming the field, as no UTF-8 file can hold it.

>>> load_yaml("id: 0017\\nexpected_output: [1:30, no, 7]\\nk: 5\\nflag: no\\n", source="d.yaml")
{'id': '0017', 'expected_output': ['1:30', 'no', '7'], 'k': 5, 'flag': 'no'}
>>> loads_json('{"a": 1, "a": 2}', source="m.json")
Traceback (most recent call last):
...
ragmeter.errors.InputError: m.json:1: duplicate key 'a' in one object
>>> [n for n, _ in json_lines('{"a": "x\\u2028y"}\\r\\n\\n{"b": 1}\\n')]
[1, 3]
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import math
import re
from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ragmeter.errors import InputError
from ragmeter.io.text_files import decode_text, line_of

MAX_ALIAS_EXPANSION = 200_000
"""Values that YAML aliases may add to a document beyond the values it spells out."""

MAX_FLOW_DEPTH = 1_000
"""Brackets (``[`` and ``{``) a YAML document may nest; PyYAML's scanner is quadratic in the depth."""

_BRACKET = re.compile(r"[\[\]{}]")

TEXT_FIELDS = frozenset(
    {
        # ids
        "id",
        "ids",
        "qid",
        "query_id",
        "sample_id",
        "doc_id",
        "docid",
        "docno",
        "trace_id",
        "result_id",
        "item_id",
        "domain_id",
        # ground truth, answers and outputs
        "expected_output",
        "expected_answer",
        "expected_answers",
        "expected",
        "answer",
        "answers",
        "reference",
        "ground_truth",
        "relevant",
        "retrieved",
        "output",
        "actual_output",
        "aliases",
        # texts, names and labels
        "input",
        "question",
        "query",
        "text",
        "title",
        "snippet",
        "snippets",
        "tags",
        "category",
        "difficulty",
        "rel_path",
        "heading_path",
        "name",
        "description",
    }
)
"""Keys whose values are read as the text written, wherever they occur in a YAML file.

A scalar there is never a number or a boolean: ``id: 0017`` is ``"0017"``, ``answer: no`` is
``"no"``, ``expected_output: [7, 1.50]`` is ``["7", "1.50"]`` (a null stays null; in a
mapping, such as graded ground truth, the keys are text and the values are read as usual).
"""

# -- JSON ----------------------------------------------------------------------------------------


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _Constant(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return value


def _no_constant(name: str) -> Any:
    raise _Constant(name)


class JsonError(ValueError):
    """Text that is not JSON ragmeter reads: what is wrong (``reason``) and, when known, where (an index)."""

    def __init__(self, reason: str, index: int | None = None, column: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.index = index
        self.column = column

    @property
    def problem(self) -> str:
        """The reason as an error message (``invalid JSON (Expecting value)``)."""
        if self.reason.startswith("duplicate key") or any(
            refused in self.reason for refused in (" is not a number JSON allows ", " surrogate pair, ")
        ):
            return self.reason
        return f"invalid JSON ({self.reason})"


def parse_json(text: str) -> Any:
    """``json.loads`` without its leniencies: a repeated key, ``NaN`` and ``Infinity`` are errors.

    Raises :class:`JsonError` (a ``ValueError``) saying what is wrong and where.

    >>> parse_json('{"a": [1, 2.5, "x\\u2028y"]}')
    {'a': [1, 2.5, 'x\u2028y']}
    """
    try:
        value = json.loads(text, object_pairs_hook=_unique_object, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise JsonError(exc.msg, exc.pos, exc.colno) from None
    except _Duplicate as exc:
        raise JsonError(f"duplicate key {exc.key!r} in one object", _duplicate_at(text, exc.key)) from None
    except _Constant as exc:
        path = _constant_path(text)
        key = json.dumps(path[-1], ensure_ascii=False) if path and isinstance(path[-1], str) else None
        spelled = rf"{re.escape(key)}\s*:\s*" if key else r"(?<![\w\"])"
        found = re.search(rf"{spelled}{re.escape(exc.name)}(?![\w\"])", text)
        raise JsonError(
            f"{field_path(path)}: {exc.name} is not a number JSON allows (numbers must be finite; "
            "write null for no value)",
            found.start() if found else None,
        ) from None
    except RecursionError:
        raise JsonError("nested too deeply to read") from None
    except ValueError as exc:  # an integer with more digits than Python converts
        raise JsonError(
            "a number has too many digits" if "digits" in str(exc) else str(exc).splitlines()[0]
        ) from None
    lone = _lone_surrogate(value) if _SURROGATE_ESCAPE.search(text) else None
    if lone is not None:
        path, char = lone
        found = re.search(rf"\\u{ord(char):04x}", text, flags=re.IGNORECASE)
        raise JsonError(
            f"{field_path(path)}: {_lone_surrogate_reason(char)}", found.start() if found else None
        )
    return value


_SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F]")
"""An escape of a UTF-16 surrogate (``\\ud800``): only then can a parsed text hold a lone one."""


def _lone_surrogate(root: Any) -> tuple[list[str | int], str] | None:
    """The path to the first text (a key or a value) holding a lone surrogate, and that character."""
    stack: list[tuple[Any, list[str | int]]] = [(root, [])]
    while stack:
        value, path = stack.pop()
        texts = [value] if isinstance(value, str) else list(value) if isinstance(value, dict) else []
        for text in texts:
            bad = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
            if bad is not None:
                return path if text is value else [*path, text], bad
        items = (
            value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        )
        stack.extend((child, [*path, key]) for key, child in reversed(list(items)))
    return None


def _lone_surrogate_reason(char: str) -> str:
    return (
        f"\\u{ord(char):04x} is half of a UTF-16 surrogate pair, not a character "
        "(write the character itself, or both halves of the pair)"
    )


class _Marker:
    """Stands in for ``NaN``/``Infinity`` when :func:`_constant_path` parses a text again."""


def _constant_path(text: str) -> list[str | int]:
    """Keys and indexes down to the first ``NaN``/``Infinity`` in ``text`` (for the error message only)."""
    marker = _Marker()
    try:
        root = json.loads(text, parse_constant=lambda _: marker)
    except (ValueError, RecursionError):
        return []
    stack: list[tuple[Any, list[str | int]]] = [(root, [])]
    while stack:  # depth first, in document order: the first constant is the one the parser refused
        value, path = stack.pop()
        if value is marker:
            return path
        items = (
            value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        )
        stack.extend((child, [*path, key]) for key, child in reversed(list(items)))
    return []


def field_path(path: list[str | int]) -> str:
    """A path into a JSON document as its messages name it (``the value`` for the whole document).

    >>> field_path(["per_query", "q2", "map"]), field_path(["runs", 0, "ndcg@10"]), field_path(["a b", 1])
    ('per_query.q2.map', 'runs[0].ndcg@10', "['a b'][1]")
    """
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][\w@-]*", part, flags=re.ASCII):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out or "the value"


def loads_json(text: str | bytes, *, source: str, line: int | None = None) -> Any:
    """:func:`parse_json`; an error is an :class:`InputError` naming ``source`` and the line.

    ``line`` is the line of the file that ``text`` is (a JSON Lines record); without it
    ``text`` is a whole file and the line is found in it.
    """
    if isinstance(text, bytes):
        text = decode_text(text, source=source, line=line)
    try:
        return parse_json(text)
    except JsonError as exc:
        problem = exc.problem
        if (
            line is not None and exc.column is not None
        ):  # "(Expecting value)" → "(Expecting value at column 3)"
            problem = f"{problem[:-1]}{' column' if problem.endswith(' at)') else ' at column'} {exc.column})"
        where = f"{source}:{line}" if line is not None else source
        if line is None and exc.index is not None:
            where = f"{source}:{line_of(text, exc.index)}"
        raise InputError(problem, where=where) from None


def _duplicate_at(text: str, key: str) -> int | None:
    """Where the second ``key`` of an object with a repeated key is, or None.

    Only for the error message: the text is parsed again by the standard library's pure-Python
    scanner, whose object parser is wrapped to see where each object starts and ends.
    """
    found: list[int] = []
    parse = json.decoder.JSONObject  # type: ignore[attr-defined]

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[dict[str, Any], int]:
        start = s_and_end[1]
        pairs, end = parse(s_and_end, args[0], args[1], None, list, *args[4:])
        if not found and len([k for k, _ in pairs if k == key]) > 1:
            spelled = re.compile(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:")
            hits = [m.start() for m in spelled.finditer(text, start, end)]
            found.append(hits[1] if len(hits) > 1 else start)
        return dict(pairs), end

    decoder: Any = json.JSONDecoder()
    try:
        decoder.parse_object = parse_object
        decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
        decoder.decode(text)
    except (ValueError, RecursionError, AttributeError):
        return None
    return found[0] if found else None


def json_lines(text: str) -> Iterator[tuple[int, str]]:
    """The non-blank lines of JSON Lines text with their 1-based numbers.

    Lines end at ``\\n`` only (a ``\\r`` before it is dropped): U+2028, U+2029 and U+0085
    are legal inside JSON strings and never end a record.
    """
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip(" \t\r"):
            yield number, line.removesuffix("\r")


# -- YAML ----------------------------------------------------------------------------------------

_MERGE = "tag:yaml.org,2002:merge"
_NULL = "tag:yaml.org,2002:null"


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with plain types only, text kept as written, unique keys and finite numbers."""

    yaml_implicit_resolvers: dict[Any, Any] = {}  # noqa: RUF012 (PyYAML's own class attribute)

    text_fields: frozenset[str] = TEXT_FIELDS

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._keys_of: dict[int, str] = {}
        """The mapping key each value node was read under (by node id), to name it in an error."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        own = [pair for pair in node.value if pair[0].tag != _MERGE]
        self.flatten_mapping(node)
        merged = node.value[: len(node.value) - len(own)]
        mapping: dict[Any, Any] = {}
        for key_node, value_node in merged:
            mapping[self._key(key_node)] = self.construct_object(value_node, deep=deep)
        first: dict[str, int] = {}
        for key_node, value_node in own:
            key = self._key(key_node)
            if key in first:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {first[key]})", key_node.start_mark
                )
            first[key] = key_node.start_mark.line + 1
            self._keys_of[id(value_node)] = key  # for messages about the value (".nan is not ...")
            mapping[key] = (
                self._text(value_node)
                if key in self.text_fields
                else self.construct_object(value_node, deep=deep)
            )
        return mapping

    def _key(self, node: Node) -> str:
        if not isinstance(node, ScalarNode):
            raise yaml.constructor.ConstructorError(
                None, None, "a key must be a single value, not a list or a mapping", node.start_mark
            )
        return str(node.value)

    def _text(self, node: Node) -> Any:
        if isinstance(node, ScalarNode):
            return None if node.tag == _NULL and node.style is None else str(node.value)
        if isinstance(node, SequenceNode):
            return [self._text(item) for item in node.value]
        return self.construct_object(node, deep=True)

    def construct_yaml_float(self, node: ScalarNode) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            key = self._keys_of.get(id(node))
            raise yaml.constructor.ConstructorError(
                None, None, f"{key + ': ' if key else ''}{node.value} is not a finite number", node.start_mark
            )
        return value

    def construct_yaml_int(self, node: ScalarNode) -> int:
        text = str(node.value)
        if not re.fullmatch(r"[-+]?[0-9]+", text):
            raise yaml.constructor.ConstructorError(
                None, None, f"{text!r} is not a plain whole number", node.start_mark
            )
        try:
            return int(text)
        except ValueError:  # more digits than Python converts
            raise yaml.constructor.ConstructorError(
                None, None, "the number has too many digits", node.start_mark
            ) from None


for _tag, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^[-+]?(?:0|[1-9][0-9]*)$", "-+0123456789"),
    (
        "float",
        r"^(?:[-+]?(?:\.[0-9]+|(?:0|[1-9][0-9]*)(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("merge", r"^(?:<<)$", "<"),
):
    _Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern), list(_first))
_Loader.add_constructor("tag:yaml.org,2002:float", _Loader.construct_yaml_float)
_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


def _check_aliases(root: Node, limit: int) -> None:
    """Refuse aliases that expand to more than ``limit`` extra values, or that contain themselves."""
    size: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        children: list[Node] = []
        if isinstance(node, SequenceNode):
            children = node.value
        elif isinstance(node, MappingNode):
            children = [part for pair in node.value for part in pair]
        if finished:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in children)
            if size[key] - len(size) > limit:
                raise _AliasBomb(f"aliases expand to more than {limit:,} values", node)
            continue
        if key in size:
            continue
        if key in open_nodes:
            raise _AliasBomb("an alias refers to a value that contains it", node)
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in size)


class _AliasBomb(Exception):
    def __init__(self, message: str, node: Node) -> None:
        super().__init__(message)
        self.node = node


def _check_flow_depth(text: str, source: str) -> None:
    """Refuse brackets nested deeper than :data:`MAX_FLOW_DEPTH` (counted fast, before PyYAML scans them)."""
    if text.count("[") + text.count("{") <= MAX_FLOW_DEPTH:
        return
    depth = 0
    for match in _BRACKET.finditer(text):
        depth += 1 if match.group() in "[{" else -1
        if depth > MAX_FLOW_DEPTH:
            raise InputError(
                f"invalid YAML (nested too deeply to read: more than {MAX_FLOW_DEPTH} levels)",
                where=f"{source}:{line_of(text, match.start())}",
            )


def load_yaml(text: str, *, source: str, text_fields: frozenset[str] = TEXT_FIELDS) -> Any:
    """Parse one YAML document (see the module docstring); errors are :class:`InputError` naming the line.

    ``text_fields``: the keys whose values are read as the text written.
    """
    _check_flow_depth(text, source)
    try:
        loader = _Loader(text)
        loader.text_fields = text_fields
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            if "*" in text:  # an alias (or just a star in a text): count what the aliases expand to
                _check_aliases(node, MAX_ALIAS_EXPANSION)
            value = loader.construct_document(node)
        finally:
            loader.dispose()
    except _AliasBomb as exc:
        raise InputError(f"invalid YAML ({exc})", where=f"{source}:{exc.node.start_mark.line + 1}") from None
    except yaml.reader.ReaderError as exc:
        shown = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        raise InputError(
            f"invalid YAML (the character {shown} is not allowed in YAML)",
            where=f"{source}:{line_of(text, exc.position)}",
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{line_of(text, mark.index)}" if mark is not None else source
        problem = str(exc.problem or exc.context or "unreadable")
        if problem.startswith("duplicate key"):
            raise InputError(problem, where=where) from None
        raise InputError(f"invalid YAML ({problem})", where=where) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML ({str(exc).splitlines()[0]})", where=source) from None
    except RecursionError:
        raise InputError("invalid YAML (nested too deeply to read)", where=source) from None
    lone = _lone_surrogate(value) if _SURROGATE_ESCAPE.search(text) else None
    if lone is not None:
        path, char = lone
        found = re.search(rf"\\(?:u|U0000){ord(char):04x}", text, flags=re.IGNORECASE)
        where = f"{source}:{line_of(text, found.start())}" if found else source
        raise InputError(f"{field_path(path)}: {_lone_surrogate_reason(char)}", where=where)
    return value
