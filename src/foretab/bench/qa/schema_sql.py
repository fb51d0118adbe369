"""The builder's gold SQL for any corpus schema.

The templates' SQL is written once, with the default schema's column names
(``project_name``, ``price``, ``units_sold``); for a store whose schema names them
otherwise (``symbol``), every identifier of those names is renamed (outside string
literals), so the gold SQL stays the same query over the store's own columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import duckdb

from foretab.corpus.schema import TableColumns, default_schema
from foretab.dataset.items import QAItem

_LITERAL = re.compile(r"('(?:[^']|'')*')")


@dataclass(frozen=True, slots=True)
class ColumnRenames:
    """Default-schema column name → this store's, for the names that differ."""

    names: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, cols: TableColumns) -> ColumnRenames:
        default = default_schema().columns
        pairs = [(default.entity, cols.entity), (default.value, cols.value)]
        if default.summed and cols.summed:
            pairs.append((default.summed, cols.summed))
        return cls(tuple((old, new) for old, new in pairs if old != new))

    def sql(self, text: str) -> str:
        if not self.names or not text:
            return text
        renames = dict(self.names)
        word = re.compile(r"\b(" + "|".join(map(re.escape, renames)) + r")\b")
        # Outside string literals only: a project may be named like a column. (The SQL is
        # the builder's own, with '' as the only quote escape; parsing it with sqlglot
        # would be exact but ~20 ms a statement.)
        parts = _LITERAL.split(text)
        return "".join(
            part if i % 2 else word.sub(lambda m: renames[m.group(1)], part)
            for i, part in enumerate(parts)
        )

    def item(self, item: QAItem) -> QAItem:
        if not self.names:
            return item
        return replace(
            item,
            history_sql=self.sql(item.history_sql),
            future_sql=self.sql(item.future_sql),
            answer_sql=self.sql(item.answer_sql),
        )


class RenamingConnection:
    """A DuckDB connection that runs the builder's SQL over the store's own column names."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, renames: ColumnRenames) -> None:
        self._conn = conn
        self._renames = renames

    def execute(self, sql: str, *args: Any) -> duckdb.DuckDBPyConnection:
        return self._conn.execute(self._renames.sql(sql), *args)
