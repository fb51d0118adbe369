"""``foretab tableqa``: answer a question over one table with LLM-written pandas (sandboxed)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from foretab.cli.common import exit_on_error
from foretab.cli.main import app
from foretab.cli.options import TableQAChoice, llm_options, tableqa_options
from foretab.cli.safe_text import cell
from foretab.errors import ForetabError
from foretab.llm.settings import LLMSettings


@app.command()
@exit_on_error
@tableqa_options
@llm_options
def tableqa(
    question: Annotated[str, typer.Argument(help="The question about the table.")],
    table: Annotated[
        Path | None, typer.Option("--table", help="A .csv (.csv.gz) or .parquet file.")
    ] = None,
    db: Annotated[
        str | None,
        typer.Option("--db", help="Instead of --table: a store (with --table-name)."),
    ] = None,
    table_name: Annotated[
        str | None,
        typer.Option("--table-name", help="A history table of --db (see `foretab tables`)."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print {"answer", "type", "code", "columns", "attempts", "timings", ...}.',
        ),
    ] = False,
    *,
    tableqa: TableQAChoice,
    llm: LLMSettings,
) -> None:
    """Answer a question over one table: an LLM writes pandas code, a sandbox runs it.

    The LyS PRESTA pipeline: column selector, answer generator, execution in a separate
    process without network or file access, code fixer. The answer is typed: boolean,
    category, number, list of categories or list of numbers. A failure exits with code 2;
    with --json it is printed as {"error": {...}}.
    """
    from foretab.tableqa.tables import load_store_table, load_table

    if (table is None) == (db is None):
        raise ForetabError(
            "give the table either as --table PATH.csv|.parquet or as --db DB --table-name NAME"
        )
    if db is not None and not table_name:
        raise ForetabError("--db needs --table-name NAME (list them with `foretab tables --db DB`)")
    df = load_table(table) if table is not None else load_store_table(db or "", table_name or "")
    provider = llm.provider()
    with provider:
        result = tableqa.build(provider).ask(df, question)
    if as_json:
        from foretab.core.schema import dumps_plain

        typer.echo(dumps_plain(result.to_dict(), ensure_ascii=False, default=str))
        return
    out = Console()
    assert result.answer is not None
    out.print(cell(f"{result.answer.text}  ({result.answer.type.value})", "bold"))
    out.print(cell(f"columns: {', '.join(result.columns)}"))
    if result.code:
        from rich.syntax import Syntax

        out.print(Syntax(result.code, "python", theme="ansi_dark"))
    t = result.timings
    out.print(
        f"{len(result.attempts)} attempt(s), {len(result.calls)} LLM call(s), "
        f"{result.tokens} tokens, {t.total_s:.2f} s (LLM {t.select_s + t.generate_s:.2f} s, "
        f"sandbox {t.execute_s:.2f} s)"
    )
