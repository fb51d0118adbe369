"""Typed answers in DataBench's five types, and their submission strings."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum


class AnswerType(StrEnum):
    """DataBench's answer types."""

    BOOLEAN = "boolean"
    CATEGORY = "category"
    NUMBER = "number"
    LIST_CATEGORY = "list[category]"
    LIST_NUMBER = "list[number]"


@dataclass(frozen=True, slots=True)
class TypedAnswer:
    """An answer value, its type, and the string a DataBench submission would contain."""

    type: AnswerType
    value: bool | int | float | str | tuple[bool | int | float | str | None, ...] | None
    text: str

    def to_json(self) -> object:
        return list(self.value) if isinstance(self.value, tuple) else self.value


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _scalar(value: object) -> bool | int | float | str | None:
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    return str(value)


def _number_text(value: int | float) -> str:
    return str(value)


def _item_text(value: object) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def normalise(value: object, expected: AnswerType | None = None) -> TypedAnswer:
    """Type the sandbox's JSON value (inferring the type unless ``expected`` is given)."""
    if isinstance(value, dict):
        value = list(value.values()) if len(value) != 1 else next(iter(value.values()))
    scalar_types = (AnswerType.BOOLEAN, AnswerType.CATEGORY, AnswerType.NUMBER)
    if isinstance(value, list) and expected in scalar_types and len(value) == 1:
        value = value[0]
    if isinstance(value, list):
        items = tuple(_scalar(v if not isinstance(v, list) else str(v)) for v in value)
        kind = expected if expected in (AnswerType.LIST_CATEGORY, AnswerType.LIST_NUMBER) else None
        if kind is None:
            kind = (
                AnswerType.LIST_NUMBER
                if items and all(_is_number(v) for v in items)
                else AnswerType.LIST_CATEGORY
            )
        return TypedAnswer(kind, items, "[" + ", ".join(_item_text(v) for v in items) + "]")
    item = _scalar(value)
    if expected in (AnswerType.LIST_CATEGORY, AnswerType.LIST_NUMBER):
        return TypedAnswer(expected, (item,), "[" + _item_text(item) + "]")
    if isinstance(item, bool):
        kind = AnswerType.BOOLEAN
    elif _is_number(item):
        kind = AnswerType.NUMBER
    else:
        kind = expected or AnswerType.CATEGORY
    text = _number_text(item) if _is_number(item) else str(item)  # type: ignore[arg-type]
    return TypedAnswer(kind, item, text)
