"""Gold SQL of the QA benchmark: history, future and answer queries (paper appendix A.2).

The dataset stores SQL *text* (like the paper's release), so literals are written into it —
always through sqlglot's literal rendering, never by hand. The answer SQL computes the
gold answer on its own: it reads the current price from the history store and the target
months from the future store, applies the rounding and comparison rules of docs/design.md §4 in SQL,
and returns rows already in the answer format. It never calls foretab's analyzer, so it is
an independent path to the same answer.

Dialect: DuckDB. ``answer_sql`` expects the history store attached as ``history`` and the
future store as ``future``; ``history_sql`` / ``future_sql`` use plain table names and run on
their own store.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp

from foretab.core.months import Month
from foretab.core.plan import Aggregate, ChangeMeasure, Comparison, Extreme, Metric, Task

HISTORY_ALIAS = "history"
FUTURE_ALIAS = "future"
_MONTH_LABEL = "'%B %Y'"  # "January 2022", the answer format of docs/design.md §4


def lit(text: str) -> str:
    """A SQL string literal, quoted by sqlglot."""
    return exp.Literal.string(text).sql(dialect="duckdb")


def date_lit(month: Month) -> str:
    """``DATE '2022-01-01'``: months are stored as their first day."""
    return f"DATE {lit(month.first_day.isoformat())}"


def _in_list(names: Sequence[str]) -> str:
    return "(" + ", ".join(lit(n) for n in names) + ")"


def rows_sql(
    tables: Sequence[str],
    projects: Sequence[str],
    first: Month,
    last: Month,
    *,
    catalog: str | None = None,
    column: str = "price",
    alias: bool = True,
) -> str:
    """``project_name, month, price`` of ``projects`` in ``first..last``, over year tables.

    ``column="units_sold"`` reads the units sold, still named ``price`` for the CTEs.
    """
    where = (
        f"project_name IN {_in_list(projects)} "
        f"AND month BETWEEN {date_lit(first)} AND {date_lit(last)}"
    )
    prefix = f"{catalog}." if catalog else ""
    return "\nUNION ALL\n".join(
        f"SELECT project_name, month, {column}{' AS price' if alias and column != 'price' else ''} "
        f"FROM {prefix}{table} WHERE {where}"
        for table in tables
    )


def history_sql(
    tables: Sequence[str],
    projects: Sequence[str],
    first: Month,
    last: Month,
    column: str = "price",
) -> str:
    """The golden history query: every observation of the projects in the history window."""
    rows = rows_sql(tables, projects, first, last, column=column, alias=False)
    return f"{rows}\nORDER BY project_name, month"


def future_sql(tables: Sequence[str], projects: Sequence[str], first: Month, last: Month) -> str:
    """The golden future query: the labels of the asked window (future store)."""
    return f"{rows_sql(tables, projects, first, last)}\nORDER BY project_name, month"


# The mean is taken in whole cents: the sum of cents is exact and a tie (x.xx5) is then an
# exactly representable .5 that ROUND sends away from zero — i.e. the exact decimal mean of
# the rounded prices, rounded half up. AVG(price) on doubles would make ties depend on
# binary representation and summation order.
_CENTS_MEAN = "ROUND(SUM(ROUND(price * 100)) / COUNT(*)) / 100"
_TARGET = {
    Aggregate.VALUE: _CENTS_MEAN,  # a one-month window: the month's own price
    Aggregate.MEAN: _CENTS_MEAN,
    Aggregate.MAX: "MAX(price)",
    Aggregate.MIN: "MIN(price)",
    Aggregate.EACH: _CENTS_MEAN,  # unused by the final SELECT; keeps the CTEs uniform
    Aggregate.SUM: "SUM(price)",  # units sold over the window
}


def answer_sql(
    *,
    task: Task,
    aggregate: Aggregate,
    comparison: Comparison,
    measure: ChangeMeasure,
    projects: Sequence[str],
    history_tables: Sequence[str],
    history_first: Month,
    reference: Month,
    target_tables: Sequence[str],
    window_first: Month,
    window_last: Month,
    metric: Metric = Metric.VALUE,
    change: ChangeMeasure | None = None,
    which_month: Extreme | None = None,
) -> str:
    """The gold answer query for one item; its rows are the answer in docs/design.md §4 format.

    ``change``: a numeric change — target − current (future), or the last month with a
    value − the first (a past window); RELATIVE is 100·change/base. ``which_month``: the
    window month with the highest / lowest value (ties: the earliest).
    """
    target_catalog = HISTORY_ALIAS if task is Task.HISTORY else FUTURE_ALIAS
    asked = ", ".join(f"({pos}, {lit(name)})" for pos, name in enumerate(projects, start=1))
    change_expr = (
        "(target - current) / current" if measure is ChangeMeasure.RELATIVE else "target - current"
    )
    ctes = [
        f"asked(pos, project_name) AS (VALUES {asked})",
        "history_rows AS (\n"
        + rows_sql(history_tables, projects, history_first, reference, catalog=HISTORY_ALIAS)
        + "\n)",
        # Current price: the price at R, else the latest observed month before R; rounded.
        "current_price AS (SELECT project_name, ROUND(arg_max(price, month), 2) AS current "
        "FROM history_rows GROUP BY project_name)",
        "target_rows AS (SELECT project_name, month, ROUND(price, 2) AS price FROM (\n"
        + rows_sql(
            target_tables,
            projects,
            window_first,
            window_last,
            catalog=target_catalog,
            column="units_sold" if metric is Metric.UNITS else "price",
        )
        + "\n))",
        f"target_value AS (SELECT project_name, ROUND({_TARGET[aggregate]}, 2) AS target "
        "FROM target_rows GROUP BY project_name)",
        "scored AS (SELECT a.pos, a.project_name, t.target, c.current, "
        f"{change_expr} AS change FROM asked a "
        "JOIN target_value t ON t.project_name = a.project_name "
        "JOIN current_price c ON c.project_name = a.project_name)",
    ]
    multi = len(projects) > 1
    final: str
    if which_month is not None:
        order = "DESC" if which_month is Extreme.HIGHEST else "ASC"
        return (
            "WITH " + ",\n".join(ctes) + f"\nSELECT strftime(month, {_MONTH_LABEL}) FROM "
            f"target_rows ORDER BY price {order}, month LIMIT 1"
        )
    if change is not None:
        if task is Task.HISTORY:
            ctes.append(
                "moved AS (SELECT arg_min(price, month) AS base, arg_max(price, month) - "
                "arg_min(price, month) AS change FROM target_rows)"
            )
        else:
            ctes.append("moved AS (SELECT current AS base, target - current AS change FROM scored)")
        value = "100 * change / base" if change is ChangeMeasure.RELATIVE else "change"
        return "WITH " + ",\n".join(ctes) + f"\nSELECT ROUND({value}, 2) FROM moved"
    if comparison is Comparison.NONE:
        if aggregate is Aggregate.EACH:
            label = f"strftime(r.month, {_MONTH_LABEL})"
            cols = f"r.project_name, {label}, r.price" if multi else f"{label}, r.price"
            final = (
                f"SELECT {cols} FROM target_rows r JOIN asked a "
                "ON a.project_name = r.project_name ORDER BY a.pos, r.month"
            )
        else:
            cols = "project_name, target" if multi else "target"
            final = f"SELECT {cols} FROM scored ORDER BY pos"
    elif comparison is Comparison.VS_CURRENT:
        final = (
            "SELECT CASE WHEN target > current THEN 'Increase' "
            "WHEN target < current THEN 'Decrease' ELSE 'No change' END FROM scored"
        )
    else:
        hits = {
            Comparison.WHICH_RISE: "SELECT pos, project_name FROM scored WHERE target > current",
            Comparison.WHICH_FALL: "SELECT pos, project_name FROM scored WHERE target < current",
            Comparison.RISES_MOST: "SELECT pos, project_name FROM scored WHERE change > 0 "
            "ORDER BY change DESC, pos LIMIT 1",
            Comparison.FALLS_MOST: "SELECT pos, project_name FROM scored WHERE change < 0 "
            "ORDER BY change ASC, pos LIMIT 1",
            Comparison.HIGHEST: "SELECT pos, project_name FROM scored "
            "ORDER BY target DESC, pos LIMIT 1",
            Comparison.LOWEST: "SELECT pos, project_name FROM scored "
            "ORDER BY target ASC, pos LIMIT 1",
        }[comparison]
        ctes.append(f"hits AS ({hits})")
        final = (
            "SELECT project_name FROM (SELECT pos, project_name FROM hits UNION ALL "
            "SELECT 0, 'None' WHERE NOT EXISTS (SELECT 1 FROM hits)) ORDER BY pos"
        )
    return "WITH " + ",\n".join(ctes) + "\n" + final
