"""Numbers read from files are numbers: ``true`` is not 1, and ``inf`` and ``nan`` are no setting.

:class:`NumbersModel` is the base of the settings models (configs, suites, registries, judge
blocks): a boolean where a number is expected, and a non-finite number anywhere, are errors
that name the field.

>>> class Settings(NumbersModel):
...     default_k: int = 5
...     level: float | None = None
...     strict: bool = False
>>> Settings.model_validate({"default_k": 3, "strict": True}).default_k
3
>>> for bad in ({"default_k": True}, {"level": float("inf")}, {"level": "nan"}):
...     try:
...         Settings.model_validate(bad)
...     except ValueError as exc:
...         print(exc.errors()[0]["loc"], exc.errors()[0]["msg"])
('default_k',) Input should be a valid integer
('level',) Input should be a finite number
('level',) Input should be a finite number
"""

from __future__ import annotations

import types
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


def _is_number_type(annotation: Any) -> bool:
    """Whether a field annotation takes numbers (int or float) but not booleans."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _is_number_type(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        return bool not in options and any(_is_number_type(option) for option in options)
    return annotation in (int, float)


@cache
def _number_fields(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(name for name, info in model.model_fields.items() if _is_number_type(info.annotation))


class _Boolean:
    """Stands in for a boolean given for a number, so the field's own check refuses it (and names the field)."""

    def __init__(self, value: bool) -> None:
        self.value = value

    def __repr__(self) -> str:
        return str(self.value).lower()


class NumbersModel(BaseModel):
    """A pydantic model whose number fields refuse booleans and whose floats must be finite."""

    model_config = ConfigDict(allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_boolean_numbers(cls, data: Any) -> Any:
        if isinstance(data, dict):
            booleans = [name for name in _number_fields(cls) if isinstance(data.get(name), bool)]
            if booleans:
                return {**data, **{name: _Boolean(data[name]) for name in booleans}}
        return data
