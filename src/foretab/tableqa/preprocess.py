"""Preprocessing (paper §3): clean column names (keeping the mapping), profile each column.

The profile is what the enhanced column selector and the answer generator show the LLM:
dtype, enum-like columns (few distinct values) with their values, list- and dict-valued
columns with their keys or an example.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import pandas as pd

ENUM_MAX_VALUES = 10
_VALUE_CHARS = 60
_KEEP = set(string.punctuation) | {" "}

ColumnKind = Literal["number", "boolean", "datetime", "category", "text", "list", "dict", "other"]


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    """One column as the prompts describe it."""

    name: str
    original: str
    dtype: str
    kind: ColumnKind
    n_unique: int | None
    values: tuple[str, ...] = ()  # enum-like columns: every value
    keys: tuple[str, ...] = ()  # dict-valued columns: keys seen
    example: str = ""
    minimum: str = ""
    maximum: str = ""

    @property
    def is_enum(self) -> bool:
        return bool(self.values)

    def describe(self) -> str:
        """One line for the enhanced prompts."""
        text = f"- {self.name!r} ({self.dtype}"
        if self.kind == "number" and self.minimum:
            text += f", from {self.minimum} to {self.maximum}"
        text += ")"
        if self.values:
            text += ": one of " + ", ".join(repr(v) for v in self.values)
        elif self.keys:
            text += ": dictionaries with keys " + ", ".join(repr(k) for k in self.keys)
        elif self.example:
            text += f", e.g. {self.example}"
        return text


@dataclass(frozen=True, slots=True)
class TableProfile:
    """The cleaned table's columns, in order, and the renaming applied."""

    columns: tuple[ColumnInfo, ...]
    n_rows: int

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    @property
    def renamed(self) -> dict[str, str]:
        """``{clean name: original name}`` for the columns whose name changed."""
        return {c.name: c.original for c in self.columns if c.name != c.original}

    def subset(self, names: list[str] | tuple[str, ...]) -> tuple[ColumnInfo, ...]:
        wanted = set(names)
        return tuple(c for c in self.columns if c.name in wanted)


def clean_name(name: object) -> str:
    """Drop emoji and other symbols; keep letters, digits, punctuation and single spaces."""
    text = unicodedata.normalize("NFKC", str(name))
    kept = "".join(
        ch if (ch.isalnum() or ch in _KEEP) else " "
        for ch in text
        if unicodedata.category(ch)[0] != "C"
    )
    return re.sub(r"\s+", " ", kept).strip()


def clean_columns(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, str]]:
    """A copy with clean, unique column names and the ``{clean: original}`` mapping."""
    used: set[str] = set()
    mapping: dict[str, str] = {}
    names = []
    for index, original in enumerate(df.columns):
        base = clean_name(original) or f"column_{index}"
        name, n = base, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        names.append(name)
        mapping[name] = str(original)
    out = df.copy()
    out.columns = names
    return out, mapping


def profile_table(df: pd.DataFrame, mapping: dict[str, str] | None = None) -> TableProfile:
    """Profile every column of an already cleaned frame."""
    mapping = mapping or {}
    return TableProfile(
        columns=tuple(
            _profile_column(df[c], str(c), mapping.get(str(c), str(c))) for c in df.columns
        ),
        n_rows=len(df),
    )


def prepare(df: pd.DataFrame) -> tuple[pd.DataFrame, TableProfile]:
    """Clean the names and profile the table: what every pipeline starts from."""
    cleaned, mapping = clean_columns(df)
    return cleaned, profile_table(cleaned, mapping)


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


def _profile_column(series: pd.Series, name: str, original: str) -> ColumnInfo:
    import pandas as pd

    dtype = str(series.dtype)
    non_null = series.dropna()
    sample = non_null.head(50).tolist()
    if sample and all(isinstance(v, dict) for v in sample):
        keys: dict[str, None] = {}
        for value in sample:
            keys.update(dict.fromkeys(str(k) for k in value))
        return ColumnInfo(name, original, "dict", "dict", None, keys=tuple(list(keys)[:20]))
    if sample and all(hasattr(v, "__len__") and not isinstance(v, str) for v in sample):
        return ColumnInfo(name, original, "list", "list", None, example=_short(list(sample[0])))
    try:
        n_unique = int(non_null.nunique())
    except TypeError:
        return ColumnInfo(
            name, original, dtype, "other", None, example=_short(sample[0]) if sample else ""
        )
    if pd.api.types.is_bool_dtype(series):
        kind: ColumnKind = "boolean"
    elif pd.api.types.is_numeric_dtype(series):
        kind = "number"
    elif pd.api.types.is_datetime64_any_dtype(series):
        kind = "datetime"
    elif isinstance(series.dtype, pd.CategoricalDtype):
        kind = "category"
    else:
        kind = "text" if n_unique > ENUM_MAX_VALUES else "category"
    values: tuple[str, ...] = ()
    if kind in ("category", "text", "boolean") and 0 < n_unique <= ENUM_MAX_VALUES:
        values = tuple(_short(v) for v in non_null.unique().tolist())
    minimum = maximum = ""
    if kind in ("number", "datetime") and len(non_null):
        minimum, maximum = _short(non_null.min()), _short(non_null.max())
    example = _short(sample[0]) if sample and not values else ""
    return ColumnInfo(
        name, original, dtype, kind, n_unique, values=values, example=example,
        minimum=minimum, maximum=maximum,
    )  # fmt: skip
