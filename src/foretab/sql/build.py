"""The history query of a plan, built as a sqlglot AST with bound ``?`` parameters.

One ``SELECT`` per year table, joined with ``UNION ALL``::

    SELECT CAST(? AS TEXT) AS city, CAST(? AS TEXT) AS district, project_name, month, price,
           units_sold
    FROM project_price_table_jiangning_district_nanjing_2021
    WHERE project_name IN (?, ?) AND month BETWEEN ? AND ?
    UNION ALL ...
    ORDER BY city, district, project_name, month

A scope question (a district or city as a whole) reads every project of the scope's year
tables in one scan: the same query without the name filter (``scope_query``).

The city and district columns (bound from the catalog entry of each table) give every row
its exact entity: "Huangpu District" exists in two cities, and project names repeat.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from sqlglot import exp

from foretab.core.months import Month
from foretab.core.plan import EntityRef
from foretab.corpus.schema import TableColumns, default_schema
from foretab.store.catalog import CatalogEntry


@dataclass(frozen=True)
class HistoryQuery:
    """A query and its parameters, in placeholder order.

    ``shape`` is all the AST depends on (the builder, its tables and how many names each
    filters on, the columns): queries of one shape differ only in their parameters, so
    their SQL text is generated once per shape and dialect, and the AST itself is built
    only when that text is not known yet (``build``; building and rendering it cost
    ~1 ms of a warm question).
    """

    build: Callable[[], exp.Query] = field(repr=False, compare=False)
    params: tuple[object, ...]
    shape: tuple[object, ...] = ()

    @classmethod
    def of(cls, ast: exp.Query, params: tuple[object, ...]) -> HistoryQuery:
        """A query whose AST is already built (no shape: its text is never shared)."""
        return cls(lambda: ast, params)

    @cached_property
    def ast(self) -> exp.Query:
        return self.build()

    def sql(self, dialect: str = "duckdb") -> str:
        if not self.shape:
            return self.ast.sql(dialect=dialect)
        key = (self.shape, dialect)
        text = _TEXT_BY_SHAPE.get(key)
        if text is None:
            text = self.ast.sql(dialect=dialect)
            if len(_TEXT_BY_SHAPE) >= _TEXTS_KEPT:
                _TEXT_BY_SHAPE.pop(next(iter(_TEXT_BY_SHAPE)))
            _TEXT_BY_SHAPE[key] = text
        return text


#: SQL texts by (shape, dialect), oldest dropped first past ``_TEXTS_KEPT``.
_TEXT_BY_SHAPE: dict[tuple[object, ...], str] = {}
_TEXTS_KEPT = 4096


def default_columns() -> TableColumns:
    """The real-estate schema's table columns (callers that know no store's schema)."""
    return default_schema().columns


# The builders below pass ``copy=False`` and build nodes rather than parse strings: each
# builder call otherwise deep-copies the whole tree and re-parses every column name, which
# cost about 6 ms of a question's ~17 (the SQL text is the same either way).
_TEXT = exp.DataType.build("text")


def _select(table: CatalogEntry, condition: exp.Expression, cols: TableColumns) -> exp.Select:
    # The two outer entity slots are bound from the catalog (empty for a one-level schema),
    # named as the schema names its group levels (city, district).
    slots = [
        exp.alias_(exp.Cast(this=exp.Placeholder(), to=_TEXT.copy()), name, copy=False)
        for name in (cols.outer, cols.inner)
    ]
    return (
        exp.Select(expressions=[*slots, *(exp.column(c) for c in cols.standard)])
        .from_(exp.table_(table.table_name), copy=False)
        .where(condition, copy=False)
    )


def _months(cols: TableColumns) -> exp.Expression:
    return exp.Between(this=exp.column(cols.month), low=exp.Placeholder(), high=exp.Placeholder())


def history_query(
    tables: Sequence[CatalogEntry],
    entities: Sequence[EntityRef],
    first: Month,
    last: Month,
    cols: TableColumns | None = None,
) -> HistoryQuery | None:
    """The query for ``entities``' values from ``first`` to ``last`` (None if no table applies)."""
    cols = cols or default_columns()
    parts: list[tuple[CatalogEntry, int]] = []  # each table read, and how many names it filters
    params: list[object] = []
    shape: list[object] = ["history", cols]
    for table in tables:
        names = sorted(
            {p.name for p in entities if (p.outer, p.inner) == (table.outer, table.inner)}
        )
        lo, hi = max(first, Month(table.year, 1)), min(last, Month(table.year, 12))
        if not names or hi < lo:
            continue
        shape.append((table.table_name, len(names)))
        parts.append((table, len(names)))
        params += [table.outer, table.inner, *names, lo.first_day, hi.first_day]

    def build() -> exp.Query:
        selects = []
        for table, n_names in parts:
            names_in = exp.In(
                this=exp.column(cols.entity),
                expressions=[exp.Placeholder() for _ in range(n_names)],
            )
            condition = exp.And(this=names_in, expression=_months(cols))
            selects.append(_select(table, condition, cols))
        return _union(selects, cols)

    return HistoryQuery(build, tuple(params), tuple(shape)) if parts else None


def scope_query(
    tables: Sequence[CatalogEntry], first: Month, last: Month, cols: TableColumns | None = None
) -> HistoryQuery | None:
    """Every entity of ``tables`` from ``first`` to ``last``: one scan per year table."""
    cols = cols or default_columns()
    read: list[CatalogEntry] = []
    params: list[object] = []
    shape: list[object] = ["scope", cols]
    for table in tables:
        lo, hi = max(first, Month(table.year, 1)), min(last, Month(table.year, 12))
        if hi < lo:
            continue
        read.append(table)
        params += [table.outer, table.inner, lo.first_day, hi.first_day]
        shape.append(table.table_name)

    def build() -> exp.Query:
        return _union([_select(table, _months(cols), cols) for table in read], cols)

    return HistoryQuery(build, tuple(params), tuple(shape)) if read else None


def _union(selects: list[exp.Select], cols: TableColumns) -> exp.Query:
    query: exp.Query = selects[0]
    for select in selects[1:]:
        query = exp.Union(this=query, expression=select, distinct=False)
    order = [exp.Ordered(this=exp.column(c), nulls_first=True) for c in _order(cols)]
    return query.order_by(*order, copy=False)


def _order(cols: TableColumns) -> tuple[str, ...]:
    return (cols.outer, cols.inner, cols.entity, cols.month)
