"""A sample SQL query over the demo store, run through the SQL guard when it exists."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from foretab.cli.demo.overview import StoreOverview
from foretab.store.naming import table_name


@dataclass(frozen=True, slots=True)
class SampleQuery:
    """The statement shown to the user and, when the guard ran it, its result."""

    sql: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[object, ...], ...] = ()
    ran: bool = False


def sample_sql(overview: StoreOverview) -> str | None:
    """The last months of the project with the longest history, from its latest table."""
    project = overview.busiest_project
    if project is None:
        return None
    table = table_name(project.inner, project.outer, project.last_month.year)
    # A literal, not a bound value: this is the statement printed for `foretab sql`.
    name = project.name.replace("'", "''")
    return (
        f"SELECT project_name, month, price, units_sold FROM {table} "
        f"WHERE project_name = '{name}' ORDER BY month DESC LIMIT 6"
    )


def run_sample_query(db: str, overview: StoreOverview, console: Console) -> SampleQuery | None:
    """Run the sample statement through the guard and print it; None when there is none."""
    sql = sample_sql(overview)
    if sql is None:
        return None
    console.print("\n[bold]Sample query[/bold] (read-only, through the SQL guard)")
    console.print(f"  {sql}", markup=False, highlight=False, soft_wrap=True)
    try:
        from foretab.sql.guard import GuardedExecutor
    except ImportError:
        console.print("  (the SQL guard is not available in this build; not run)")
        return SampleQuery(sql)
    with GuardedExecutor(db) as guard:
        result = guard.execute(sql)
    table = Table(*(escape(c) for c in result.columns))
    for row in result.rows:
        table.add_row(*(escape(_cell(v)) for v in row))
    console.print(table)
    return SampleQuery(sql, tuple(result.columns), tuple(tuple(r) for r in result.rows), True)


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def shell_quote(sql: str) -> str:
    """Quote a statement for a POSIX shell, readably: double quotes unless it needs more."""
    if not any(ch in sql for ch in '"$`\\!'):
        return f'"{sql}"'
    return shlex.quote(sql)
