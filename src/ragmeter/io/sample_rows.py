"""Rows of samples in the shapes other RAG evaluation tools write: RAGAS rows and DeepEval test cases.

Each shape in :data:`ROW_SHAPES` names the fields it reads, and where each goes in a ragmeter
sample; a row is read by the shape whose fields it uses. Nothing is dropped: a field the shape
knows but ragmeter does not score (RAGAS's ``rubrics``, DeepEval's ``tools_called``) is kept
under the sample's ``metadata``; a field no shape knows is an error naming it (with the closest
known field); a row that mixes two shapes (a ragmeter sample with a RAGAS ``answer``) is an
error, never half read. The mapping used is recorded in the provenance.

======================  ================================  =====================================
ragmeter                RAGAS (0.2+ / 0.1 names)          DeepEval ``LLMTestCase``
======================  ================================  =====================================
``input``               ``user_input`` / ``question``     ``input``
output ``answer``       ``response`` / ``answer``         ``actual_output``
output ``retrieved``    ``retrieved_contexts`` /          ``retrieval_context``
                        ``contexts`` (+ ``retrieved_context_ids``)
``expected_answer``     ``reference`` / ``ground_truth``  ``expected_output``
                        (``ground_truths``)
``expected_output``     ``reference_context_ids``, else   ``context``
                        ``reference_contexts``
``id``                  ``id`` (else the row number)      ``name`` (else the row number)
======================  ================================  =====================================

Contexts without ids are matched to the reference contexts by their exact text (the text is
the id); with ``retrieved_context_ids`` / ``reference_context_ids`` the ids are used. A list
field given as text (a CSV cell) is read as JSON, or as the Python list RAGAS's ``to_csv``
writes; DeepEval's ``save_as`` joins a list with ``|``, so its text is split there, as
DeepEval reads it back.

>>> row = {"user_input": "Capital of France?", "retrieved_contexts": ["Paris is it.", "Rome is not."],
...        "reference_contexts": ["Paris is it."], "response": "Paris", "reference": "Paris"}
>>> sample = rows_to_records([row], where=lambda i: f"rows[{i}]")[0][0]
>>> sample["id"], sample["metadata"], sample["actual_output"]["answer"]
('0', {'expected_answer': 'Paris'}, 'Paris')
>>> [item["id"] for item in sample["actual_output"]["retrieved"]], sample["expected_output"]
(['Paris is it.', 'Rome is not.'], ['Paris is it.'])
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragmeter.errors import InputError
from ragmeter.io.jsonyaml import JsonError, parse_json
from ragmeter.schema.samples import Sample

NATIVE_FIELDS = frozenset(
    {
        "id",
        "input",
        "expected_output",
        "metadata",
        "actual_output",
        "gold_supports",
        "required_support_groups",
        "recency_conflict_rule",
        "answerable",
        "category",
        "tags",
        "difficulty",
        "vault",
    }
)
"""The fields of a ragmeter sample (:class:`ragmeter.schema.samples.Sample`); others ride along."""


@dataclass(frozen=True)
class RowShape:
    """A row shape of another tool: its fields, by what ragmeter makes of them."""

    name: str
    fields: dict[str, tuple[str, ...]]
    """ragmeter's role → the shape's field names for it, in order of preference."""
    kept: frozenset[str]
    """Fields the shape has that ragmeter keeps under ``metadata`` without scoring them."""
    marks: frozenset[str]
    """Fields only this shape has: a row with one of them is of this shape."""
    list_separator: str | None = None
    """How the tool joins a list into one text cell (``None``: JSON or a Python list)."""

    def known(self) -> set[str]:
        """Every field name of the shape."""
        return {name for names in self.fields.values() for name in names} | set(self.kept)


RAGAS = RowShape(
    "RAGAS rows",
    {
        "id": ("id",),
        "input": ("user_input", "question"),
        "answer": ("response", "answer"),
        "contexts": ("retrieved_contexts", "contexts"),
        "context_ids": ("retrieved_context_ids",),
        "expected_answer": ("reference", "ground_truth", "ground_truths"),
        "reference_contexts": ("reference_contexts",),
        "reference_ids": ("reference_context_ids",),
    },
    kept=frozenset(
        {"multi_responses", "rubrics", "persona_name", "query_style", "query_length", "synthesizer_name"}
    ),
    marks=frozenset(
        {
            "user_input",
            "question",
            "response",
            "answer",
            "retrieved_contexts",
            "contexts",
            "retrieved_context_ids",
            "reference",
            "ground_truth",
            "ground_truths",
            "reference_contexts",
            "reference_context_ids",
        }
    ),
)

DEEPEVAL = RowShape(
    "DeepEval test cases",
    {
        "id": ("name", "id"),
        "input": ("input",),
        "answer": ("actual_output",),
        "contexts": ("retrieval_context",),
        "expected_answer": ("expected_output",),
        "reference_contexts": ("context",),
    },
    kept=frozenset(
        {
            "metadata",
            "additional_metadata",
            "comments",
            "source_file",
            "tools_called",
            "expected_tools",
            "token_cost",
            "input_token_count",
            "output_token_count",
            "completion_time",
            "flaky",
            "multimodal",
            "tags",
            "mcp_servers",
            "mcp_tools_called",
            "mcp_resources_called",
            "mcp_prompts_called",
            "custom_column_key_values",
            "expectations",
            "expected_labels",
        }
    ),
    marks=frozenset(
        {"retrieval_context", "context", "tools_called", "expected_tools", "additional_metadata"}
    ),
    list_separator="|",
)

ROW_SHAPES: tuple[RowShape, ...] = (RAGAS, DEEPEVAL)
"""The row shapes of other tools ragmeter reads (ragmeter's own samples need no mapping)."""

NATIVE = "ragmeter samples"

QUESTION_ONLY = frozenset({"question", "user_input"})
"""RAGAS fields a ragmeter sample may carry along (its ``input`` is the question): nothing else is lost."""


def shape_of(row: Mapping[str, Any], *, where: str) -> RowShape | None:
    """The shape a row is written in (``None``: a ragmeter sample); mixed shapes are an error."""
    keys = set(row)
    found = [shape for shape in ROW_SHAPES if keys & shape.marks]
    if not found and "id" not in keys and "input" in keys and keys <= DEEPEVAL.known():
        found = [DEEPEVAL]  # a DeepEval golden or test case with none of its list fields
    if len(found) > 1:
        raise InputError(
            f"the row mixes {found[0].name} fields ({', '.join(sorted(keys & found[0].marks))}) and "
            f"{found[1].name} fields ({', '.join(sorted(keys & found[1].marks))})",
            where=where,
        )
    if not found:
        return None
    shape = found[0]
    native = sorted((keys & NATIVE_FIELDS) - shape.known())
    if native and keys & shape.marks <= QUESTION_ONLY:
        return None  # a ragmeter sample that also keeps the question under another name
    if native:
        raise InputError(
            f"the row mixes {shape.name} fields ({', '.join(sorted(keys & shape.marks))}) with ragmeter sample "
            f"fields ({', '.join(native)}): write it all in one shape (see docs/formats.md)",
            where=where,
        )
    return shape


def _as_list(value: Any, name: str, shape: RowShape, where: str) -> list[Any]:
    """A list field's value: a list, or the text a tool wrote it as."""
    if isinstance(value, (list, tuple)):
        return list(value)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                parsed = parse_json(text)
            except JsonError:
                try:
                    parsed = ast.literal_eval(text)
                except (ValueError, SyntaxError):
                    parsed = None
            if isinstance(parsed, list):
                return parsed
        if shape.list_separator is not None:
            return value.split(shape.list_separator) if value else []
        raise InputError(
            f"{name}: expected a list, got a text that is not one ({_short(value)}); "
            "write it as a JSON list, or as the Python list RAGAS's to_csv writes",
            where=where,
        )
    raise InputError(f"{name}: expected a list, got {type(value).__name__}", where=where)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_ID_ROLES = frozenset({"id", "context_ids", "reference_ids"})
"""Roles whose values are ids (a text or a whole number); every other role holds texts."""


def _check_value(value: Any, role: str, label: str, where: str) -> None:
    """A value of a text role is a text, of an id role a text or a whole number; else an error naming it."""
    if isinstance(value, str):
        return
    if role in _ID_ROLES:
        if isinstance(value, int) and not isinstance(value, bool):
            return
        expected = "a text or a whole number (an id)"
    else:
        expected = "a text"
    raise InputError(f"{label}: expected {expected}, got {type(value).__name__} {_short(value)}", where=where)


def _pick(row: Mapping[str, Any], shape: RowShape, role: str, where: str, used: dict[str, str]) -> Any:
    names = [name for name in shape.fields.get(role, ()) if row.get(name) is not None]
    if len(names) > 1:
        raise InputError(f"both {names[0]!r} and {names[1]!r} give the {role}; keep one", where=where)
    if not names:
        return None
    used[role] = names[0]
    value = row[names[0]]
    if role in _SINGLE_ROLES:
        _check_value(value, role, names[0], where)
    elif role == "expected_answer":  # one answer, or several (RAGAS 0.1 ground_truths)
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            _check_value(item, role, f"{names[0]}[{i}]" if isinstance(value, list) else names[0], where)
    return value


_SINGLE_ROLES = frozenset({"id", "input", "answer"})
"""Roles that hold one value (the list roles are checked item by item)."""


def _shape_row(
    row: Mapping[str, Any], shape: RowShape, index: int, where: str, used: dict[str, str]
) -> dict[str, Any]:
    """One row of another tool as a raw ragmeter sample."""
    known = shape.known()
    for key in row:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(
                f"unknown field {key!r} for {shape.name}{hint} (known: {', '.join(sorted(known))})",
                where=where,
            )
    record: dict[str, Any] = {}
    sample_id = _pick(row, shape, "id", where, used)
    record["id"] = sample_id if sample_id is not None else str(index)
    question = _pick(row, shape, "input", where, used)
    if question is not None:
        record["input"] = question
    metadata: dict[str, Any] = {}
    expected = _pick(row, shape, "expected_answer", where, used)
    if expected is not None:
        metadata["expected_answer"] = expected
    for key in sorted(shape.kept):
        if row.get(key) is not None:
            metadata[key] = row[key]
    if metadata:
        record["metadata"] = metadata
    contexts = _list_role(row, shape, "contexts", where, used)
    context_ids = _list_role(row, shape, "context_ids", where, used)
    reference = _list_role(row, shape, "reference_contexts", where, used)
    reference_ids = _list_role(row, shape, "reference_ids", where, used)
    if reference_ids is not None:
        record["expected_output"] = reference_ids
    elif reference is not None:
        record["expected_output"] = list(dict.fromkeys(reference))
    answer = _pick(row, shape, "answer", where, used)
    output: dict[str, Any] = {}
    if answer is not None:
        output["answer"] = answer
    if contexts is not None:
        if context_ids is not None and len(context_ids) != len(contexts):
            raise InputError(
                f"{used['context_ids']} has {len(context_ids)} ids for {len(contexts)} contexts", where=where
            )
        ids: Sequence[Any] = context_ids if context_ids is not None else contexts
        output["retrieved"] = [{"id": i, "text": t} for i, t in zip(ids, contexts, strict=True)]
    elif context_ids is not None:
        output["retrieved"] = [{"id": i} for i in context_ids]
    if output:
        record["actual_output"] = output
    return record


def _list_role(
    row: Mapping[str, Any], shape: RowShape, role: str, where: str, used: dict[str, str]
) -> list[Any] | None:
    value = _pick(row, shape, role, where, used)
    if value is None:
        return None
    values = _as_list(value, used[role], shape, where)
    for i, item in enumerate(values):
        _check_value(item, role, f"{used[role]}[{i}]", where)
    return values


def rows_to_records(
    rows: Sequence[Any],
    *,
    where: Callable[[int], str],
    columns: Mapping[str, str] | None = None,
) -> tuple[list[dict[str, Any] | Sample], dict[str, Any]]:
    """Rows of samples (any shape of :data:`ROW_SHAPES`, or ragmeter's) as raw sample records.

    ``columns`` renames: field → the column that holds it (``{"user_input": "query"}``). A row
    that is a ragmeter sample passes through unchanged. Returns the records and the provenance
    (the shape and the field each role came from).
    """
    mapping = dict(columns or {})
    records: list[dict[str, Any] | Sample] = []
    shapes: set[str] = set()
    used: dict[str, str] = {}
    kept: set[str] = set()
    for index, raw in enumerate(rows):
        here = where(index)
        if isinstance(raw, Sample):
            shapes.add(NATIVE)
            records.append(raw)
            continue
        if not isinstance(raw, Mapping):
            raise InputError(f"a sample must be an object, got {type(raw).__name__}", where=here)
        row = _renamed(raw, mapping, here)
        shape = shape_of(row, where=here)
        if shape is None:
            shapes.add(NATIVE)
            records.append(row)
            continue
        shapes.add(shape.name)
        records.append(_shape_row({k: v for k, v in row.items() if v is not None}, shape, index, here, used))
        kept |= {key for key in shape.kept if row.get(key) is not None}
    if len(shapes) > 1:
        raise InputError(
            f"the rows mix shapes: {', '.join(sorted(shapes))}; write them all in one",
            where=where(0).split(":")[0],
        )
    provenance: dict[str, Any] = {"shape": next(iter(shapes), NATIVE)}
    if used:
        provenance["mapping"] = _mapping_provenance(used)
    if kept:
        provenance["kept_in_metadata"] = sorted(kept)
    if mapping:
        provenance["columns"] = mapping
    return records, provenance


_ROLE_TARGET = {
    "id": "id",
    "input": "input",
    "answer": "actual_output.answer",
    "contexts": "actual_output.retrieved[].text (and .id, unless ids are given)",
    "context_ids": "actual_output.retrieved[].id",
    "expected_answer": "metadata.expected_answer",
    "reference_contexts": "expected_output (the texts as ids, unless ids are given)",
    "reference_ids": "expected_output",
}


def _mapping_provenance(used: Mapping[str, str]) -> dict[str, str]:
    """The source field of each ragmeter field, as the provenance records it."""
    return {_ROLE_TARGET[role]: name for role, name in used.items()}


def _renamed(row: Mapping[str, Any], mapping: Mapping[str, str], where: str) -> dict[str, Any]:
    """The row with each mapped column renamed to its field (a missing column is an error)."""
    if not mapping:
        return dict(row)
    out = dict(row)
    known = mapping_fields()
    for name, column in mapping.items():
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise InputError(f"unknown field {name!r} in the column mapping{hint}", where="--columns")
        if column not in row:
            raise InputError(
                f"--columns {name}={column}: the row has no {column!r} (it has {', '.join(map(repr, row))})",
                where=where,
            )
        if name in row and name != column:
            raise InputError(f"--columns {name}={column}: the row already has a {name!r}", where=where)
        out[name] = out.pop(column)
    return out


def mapping_fields() -> set[str]:
    """Every field name ``--columns`` may map a column to, for datasets."""
    return set(NATIVE_FIELDS).union(*(shape.known() for shape in ROW_SHAPES))
