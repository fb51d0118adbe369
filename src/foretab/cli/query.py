"""``foretab sql``: run one read-only SELECT through the guard and print the rows."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import app
from foretab.cli.safe_text import cell
from foretab.sql.forecast_rows import run_query
from foretab.sql.guard import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, QueryResult
from foretab.sql.jsonable import json_value, result_json


@app.command()
@exit_on_error
def sql(
    query: Annotated[str, typer.Argument(help="One SELECT over the history catalog tables.")],
    db: DbOption,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help='Print {"columns": [...], "rows": [[...]], "truncated": bool}.'
        ),
    ] = False,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=1, help="Row cap; the result says if it was hit.")
    ] = DEFAULT_MAX_ROWS,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=0.001, help="Seconds before the query is interrupted."),
    ] = DEFAULT_TIMEOUT_S,
) -> None:
    """Run a read-only SELECT on the history store through the SQL guard.

    Only one SELECT (CTEs, UNION, subqueries allowed) over tables listed by `foretab
    tables` (and foretab_catalog) is accepted; anything else is refused with the rule it
    broke, exit code 2. `forecast('TABLE' [, horizon => N] [, level => P] [, entities =>
    ['NAME', ...]])` is a relation of the store model's forecasts (project_name, month,
    value, lo, hi; docs/forecast-sql.md).
    """
    result = run_query(db, query, max_rows=max_rows, timeout_s=timeout)
    if as_json:
        from foretab.core.schema import dumps_plain

        typer.echo(dumps_plain(result_json(result), ensure_ascii=False))
        return
    _print_table(result, max_rows)


def _print_table(result: QueryResult, max_rows: int) -> None:
    title = f"{len(result.rows)} row{'s' if len(result.rows) != 1 else ''}"
    if result.truncated_by == "bytes":
        title += " (truncated: the result reached the guard's size cap; narrow the query)"
    elif result.truncated:
        title += f" (truncated at {max_rows}; raise --max-rows to see more)"
    table = Table(title=title)
    for name in result.columns:
        table.add_column(cell(name), overflow="fold")
    for row in result.rows:
        table.add_row(*(cell("NULL" if v is None else json_value(v)) for v in row))
    Console().print(table)
