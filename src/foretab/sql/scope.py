"""The answer query of a past scope question: ranking, filtering and aggregates in SQL.

One scan over the scopes' year tables (``UNION ALL``, each select tagged with its scope's
position and its catalog city / district, all bound), then, per scope, the docs/design.md §4 rules:

* a candidate is a project with a value for the metric in the window; its value is the
  exact mean of its rounded monthly prices (or the sum of its units sold);
* PICK / TOP / FILTER / FILTER_THEN_PICK / TOP_THEN_PICK choose projects with
  ``ROW_NUMBER() OVER (PARTITION BY scope ORDER BY value, cat)``, ``cat`` being the
  project's catalog position (city, district, project in byte order: ``COLLATE "C"``), so
  ties go to the first project in catalog order;
* MEAN / TOTAL / COUNT aggregate the candidates' values.

Rows: one summary row per scope (``pos`` 0: the candidate count and the aggregate), then
the chosen projects (``pos`` 1, 2, …). Money is carried in whole cents (doubles holding
integers, exact in both engines): a rounded price is ``ROUND(price * 100)``; a mean is
``FLOOR(AVG(cents) + 0.5)``, the exact decimal mean rounded half up (a sum of whole cents
is exact, and a quotient off a half by at least 1/2n is never rounded onto it), as
``foretab.analyze.values.dmean`` computes it. NULL, NaN and infinite prices are not values
(``price BETWEEN -max AND max`` is false for all three, on DuckDB and PostgreSQL).

The statement's fixed part is written as SQL text (it holds no value and no name from the
store) and parsed once per shape; the per-table selects are built as an AST and spliced in.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp

from foretab.core.catalog import CatalogEntry
from foretab.core.months import Month
from foretab.core.plan import Extreme, Metric, ScopeOp, ScopeQuery, ScopeRef
from foretab.corpus.schema import TableColumns
from foretab.sql.build import (
    SENTINEL_TABLE,
    HistoryQuery,
    SelectLayout,
    default_columns,
    joined_layout,
    select_layout,
)


def scope_columns(cols: TableColumns) -> tuple[str, ...]:
    """The columns of every row the query returns, in order."""
    return ("scope", "pos", cols.outer, cols.inner, cols.entity, "value", "candidates")


def _cents(cols: TableColumns) -> dict[Metric, str]:
    return {Metric.VALUE: f"{cols.value}_cents", Metric.UNITS: "units_cents"}


_SUMMARY_VALUE = {
    ScopeOp.MEAN: "FLOOR(AVG({vc}) + 0.5) / 100",
    ScopeOp.TOTAL: "SUM({vc}) / 100",
    ScopeOp.COUNT: "CAST(COUNT(CASE WHEN units_cents > 0 THEN 1 END) AS DOUBLE)",
}


@dataclass(frozen=True, slots=True)
class _Shape:
    """What decides the statement's text (values are bound, so they are not part of it)."""

    op: ScopeOp
    metric: Metric
    rank_by: Metric
    extreme: Extreme
    low: bool
    high: bool
    cols: TableColumns  # the schema's names, which the statement's text spells


def _picks(shape: _Shape) -> tuple[str, str]:
    """The CTE choosing projects (numbered ``pos`` 1, 2, … per scope), and which to keep."""
    order = "DESC" if shape.extreme is Extreme.HIGHEST else "ASC"
    cols = shape.cols
    vc, rc = _cents(cols)[shape.metric], _cents(cols)[shape.rank_by]
    bounds = [f"{vc} / 100 {op} ?" for op, on in ((">=", shape.low), ("<=", shape.high)) if on]
    per_entity = f"per_{cols.entity_level}"
    keys = f"{cols.outer}, {cols.inner}, {cols.entity}"

    def numbered(value: str, by: str, where: list[str], source: str = per_entity) -> str:
        return (
            f"picks AS (SELECT scope, {keys}, {value} / 100 AS value, "
            f"ROW_NUMBER() OVER (PARTITION BY scope ORDER BY {by}) AS pos FROM {source} "
            f"WHERE {' AND '.join(where)})"
        )

    if shape.op is ScopeOp.PICK:
        return numbered(vc, f"{vc} {order}, cat", [f"{vc} IS NOT NULL"]), "pos <= 1"
    if shape.op is ScopeOp.TOP:
        return numbered(rc, f"{rc} {order}, cat", [f"{rc} IS NOT NULL"]), "pos <= ?"
    if shape.op in (ScopeOp.FILTER, ScopeOp.EACH):  # EACH: a filter without bounds
        return numbered(vc, "cat", [f"{vc} IS NOT NULL", *bounds]), "pos >= 1"
    if shape.op is ScopeOp.FILTER_THEN_PICK:
        where = [f"{vc} IS NOT NULL", f"{rc} IS NOT NULL", *bounds]
        return numbered(rc, f"{rc} {order}, cat", where), "pos <= 1"
    assert shape.op is ScopeOp.TOP_THEN_PICK
    # Among the top N by the ranking metric (highest first), the highest / lowest value.
    top = (
        f"top_n AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY scope ORDER BY {rc} DESC, cat) "
        f"AS top_pos FROM {per_entity} WHERE {rc} IS NOT NULL), "
    )
    where = ["top_pos <= ?", f"{vc} IS NOT NULL"]
    return top + numbered(vc, f"{vc} {order}, cat", where, "top_n"), "pos <= 1"


@lru_cache(maxsize=64)
def _skeleton(shape: _Shape) -> exp.Query:
    cols = shape.cols
    cents = _cents(cols)
    vc, value, per_entity = cents[shape.metric], cols.value, f"per_{cols.entity_level}"
    keys = f"{cols.outer}, {cols.inner}, {cols.entity}"
    # One row per entity: its rounded mean value in cents (half up: the mean of whole
    # cents is exact, so FLOOR(x + 0.5) decides ties exactly), units sold, catalog order.
    per_entity_cte = (
        f"{per_entity} AS (SELECT scope, {keys}, "
        f"FLOOR(AVG(CASE WHEN {value} BETWEEN ? AND ? THEN ROUND({value} * 100) END) + 0.5) "
        f"AS {cents[Metric.VALUE]}, SUM(CAST({cols.summed_role} AS DOUBLE)) * 100 AS units_cents, "
        f'ROW_NUMBER() OVER (ORDER BY {cols.outer} COLLATE "C", {cols.inner} COLLATE "C", '
        f'{cols.entity} COLLATE "C") AS cat '
        f"FROM scope_rows GROUP BY scope, {keys})"
    )
    summary = (
        f"SELECT scope, 0 AS pos, CAST(NULL AS TEXT) AS {cols.outer}, "
        f"CAST(NULL AS TEXT) AS {cols.inner}, CAST(NULL AS TEXT) AS {cols.entity}, "
        f"{_SUMMARY_VALUE.get(shape.op, 'CAST(NULL AS DOUBLE)').format(vc=vc)} AS value, "
        f"COUNT({vc}) AS candidates FROM {per_entity} GROUP BY scope"
    )
    ctes = ["scope_rows AS (SELECT 1)", per_entity_cte]  # scope_rows: the per-table selects
    if shape.op in _SUMMARY_VALUE:
        body = summary
    else:
        picks, keep = _picks(shape)
        ctes.append(picks)
        body = (
            f"{summary} UNION ALL SELECT scope, pos, {keys}, value, "
            f"0 AS candidates FROM picks WHERE {keep}"
        )
    text = f"WITH {', '.join(ctes)} {body} ORDER BY scope, pos"
    parsed = sqlglot.parse_one(text, read="duckdb")
    assert isinstance(parsed, exp.Query)
    return parsed


def _placeholders(node: exp.Expression) -> int:
    return sum(1 for _ in node.find_all(exp.Placeholder))


def _as(column: exp.Expression, role: str) -> exp.Expression:
    """``column AS role``, or the column alone when it already has the role's name."""
    if isinstance(column, exp.Column) and column.name == role:
        return column
    return exp.alias_(column, role, copy=False)


def _rows(
    scopes: Sequence[ScopeRef],
    tables: Sequence[CatalogEntry],
    months: Sequence[Month],
) -> tuple[tuple[tuple[str, int], ...], list[object]]:
    """The year tables read for the scopes in ``months``, and their selects' parameters.

    Each read is ``(table name, months)``, ``months`` 0 for one run of months (a
    ``BETWEEN``), else how many an ``IN`` lists: with the columns, all the selects' text
    depends on (``_selects`` builds them).
    """
    reads: list[tuple[str, int]] = []
    params: list[object] = []
    for position, scope in enumerate(scopes):
        for table in tables:
            if table.outer != scope.outer or scope.inner not in (None, table.inner):
                continue
            inside = [m for m in months if m.year == table.year]
            if not inside:
                continue
            if inside[-1].minus(inside[0]) == len(inside) - 1:  # one run of months
                reads.append((table.table_name, 0))
                bound: list[object] = [inside[0].first_day, inside[-1].first_day]
            else:
                reads.append((table.table_name, len(inside)))
                bound = [m.first_day for m in inside]
            params += [position, table.outer, table.inner, *bound]
    return tuple(reads), params


def _selects(reads: Sequence[tuple[str, int]], cols: TableColumns) -> exp.Query:
    """Every row of the tables ``_rows`` chose, tagged with its scope (all of it bound).

    The fixed part reads the schema's own column names (``project_name``, ``price``,
    ``units_sold`` for real estate); a NULL stands in for units where the schema sums nothing.
    """
    # The builders' copy=False: these nodes are new, and copying sqlglot trees is slow.
    selects: list[exp.Select] = []
    for table_name, n_months in reads:
        summed = exp.column(cols.summed) if cols.summed else exp.cast(exp.null(), "int")
        if n_months == 0:
            when = exp.column(cols.month).between(exp.Placeholder(), exp.Placeholder())
        else:
            when = exp.column(cols.month).isin(*[exp.Placeholder() for _ in range(n_months)])
        selects.append(
            exp.select(
                exp.alias_(exp.cast(exp.Placeholder(), "int"), "scope"),
                exp.alias_(exp.cast(exp.Placeholder(), "text"), cols.outer),
                exp.alias_(exp.cast(exp.Placeholder(), "text"), cols.inner),
                exp.column(cols.entity),
                exp.column(cols.value),
                _as(summed, cols.summed_role),
                copy=False,
            )
            .from_(exp.to_table(table_name), copy=False)
            .where(when, copy=False)
        )
    query: exp.Query = selects[0]
    for select in selects[1:]:
        query = exp.union(query, select, distinct=False, copy=False)
    return query


def scope_answer_query(
    scopes: Sequence[ScopeRef],
    query: ScopeQuery,
    tables: Sequence[CatalogEntry],
    months: Sequence[Month],
    cols: TableColumns | None = None,
) -> HistoryQuery | None:
    """The answer query of ``query`` over ``scopes`` in ``months`` (None: no table applies).

    Its text is a function of the shape (the tables read, how each bounds its months, the
    ``_Shape``), so the AST is built only when that shape's text is not known yet.
    """
    cols = cols or default_columns()
    reads, params = _rows(scopes, tables, sorted(set(months)))
    if not reads:
        return None
    shape = _Shape(
        query.op, query.metric, query.rank_by, query.extreme,
        query.low is not None, query.high is not None, cols,
    )  # fmt: skip
    params += [-sys.float_info.max, sys.float_info.max]  # clean: finite prices only
    if shape.op in (ScopeOp.FILTER, ScopeOp.FILTER_THEN_PICK):
        params += [b for b in (query.low, query.high) if b is not None]
    if shape.op is ScopeOp.TOP_THEN_PICK or shape.op is ScopeOp.TOP:
        params.append(query.n)
    n_params = len(params)

    def build() -> exp.Query:
        return _spliced(shape, _selects(reads, cols), n_params)

    def compose(dialect: str) -> str | None:
        frame = _frame(shape, dialect)
        if frame is None:
            return None
        prefix, separator, suffix, placeholders = frame
        texts = []
        for name, n_months in reads:
            layout = _layout(n_months, cols, dialect)
            if layout is None:
                return None
            placeholders += layout.placeholders
            texts.append(layout.text(name, dialect, _table_text))
        if placeholders != n_params:  # as ``build`` checks
            raise AssertionError(f"{placeholders} placeholders for {n_params} parameters")
        return prefix + separator.join(texts) + suffix

    return HistoryQuery(build, tuple(params), ("scope-answer", shape, reads), compose)


def _spliced(shape: _Shape, selects: exp.Query, n_params: int | None) -> exp.Query:
    """The shape's statement with ``selects`` as its ``scope_rows``."""
    ast = _skeleton(shape).copy()
    cte = next(c for c in ast.find_all(exp.CTE) if c.alias == "scope_rows")
    cte.set("this", selects)
    if n_params is not None and _placeholders(ast) != n_params:
        # a shape and its parameters went out of step
        raise AssertionError(f"{_placeholders(ast)} placeholders for {n_params} parameters")
    return ast


@lru_cache(maxsize=4096)
def _table_text(name: str, dialect: str) -> str:
    """``name`` as ``exp.to_table`` renders it (``_selects``' tables)."""
    return exp.to_table(name).sql(dialect=dialect)


@lru_cache(maxsize=256)
def _layout(n_months: int, cols: TableColumns, dialect: str) -> SelectLayout | None:
    return select_layout(_selects([(SENTINEL_TABLE, n_months)], cols), dialect, _table_text)


@lru_cache(maxsize=256)
def _frame(shape: _Shape, dialect: str) -> tuple[str, str, str, int] | None:
    """The shape's text around its selects: prefix, separator, suffix, and its placeholders."""
    single = _layout(0, shape.cols, dialect)
    if single is None:
        return None
    one = _spliced(shape, _selects([(SENTINEL_TABLE, 0)], shape.cols), None)
    three = _spliced(shape, _selects([(SENTINEL_TABLE, 0)] * 3, shape.cols), None)
    found = joined_layout(
        one.sql(dialect=dialect), three.sql(dialect=dialect), single, dialect, _table_text
    )
    if found is None:
        return None
    return (*found, _placeholders(one) - single.placeholders)
