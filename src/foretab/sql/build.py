"""The history query of a plan, built as a sqlglot AST with bound ``?`` parameters.

One ``SELECT`` per year table, joined with ``UNION ALL``::

    SELECT CAST(? AS TEXT) AS district, project_name, month, price
    FROM project_price_table_jiangning_district_nanjing_2021
    WHERE project_name IN (?, ?) AND month BETWEEN ? AND ?
    UNION ALL ...
    ORDER BY district, project_name, month

The district column tells rows of same-named projects in different districts apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlglot import exp

from foretab.months import Month
from foretab.parse.plan import ProjectRef
from foretab.store.catalog import CatalogEntry


@dataclass(frozen=True, slots=True)
class HistoryQuery:
    """A query AST and its parameters, in placeholder order."""

    ast: exp.Query
    params: tuple[object, ...]

    def sql(self, dialect: str = "duckdb") -> str:
        return self.ast.sql(dialect=dialect)


def history_query(
    tables: Sequence[CatalogEntry], projects: Sequence[ProjectRef], first: Month, last: Month
) -> HistoryQuery | None:
    """The query for ``projects``' prices from ``first`` to ``last`` (None if no table applies)."""
    selects: list[exp.Select] = []
    params: list[object] = []
    for table in tables:
        names = sorted(
            {p.project for p in projects if (p.city, p.district) == (table.city, table.district)}
        )
        lo, hi = max(first, Month(table.year, 1)), min(last, Month(table.year, 12))
        if not names or hi < lo:
            continue
        select = (
            exp.select(
                exp.alias_(exp.cast(exp.Placeholder(), "text"), "district"),
                "project_name",
                "month",
                "price",
            )
            .from_(exp.to_table(table.table_name))
            .where(
                exp.and_(
                    exp.column("project_name").isin(*[exp.Placeholder() for _ in names]),
                    exp.column("month").between(exp.Placeholder(), exp.Placeholder()),
                )
            )
        )
        selects.append(select)
        params += [table.district, *names, lo.first_day, hi.first_day]
    if not selects:
        return None
    query: exp.Query = selects[0]
    for select in selects[1:]:
        query = exp.union(query, select, distinct=False)
    query = query.order_by("district", "project_name", "month")
    return HistoryQuery(query, tuple(params))
