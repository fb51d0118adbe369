"""``foretab ingest`` and ``foretab tables``: build a store and see what the engine can see."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import DbOption, exit_on_error, parse_month_option
from foretab.cli.main import app
from foretab.cli.progress import stage_bar
from foretab.cli.safe_text import cell
from foretab.forecast.store import STORE_DEFAULT_FORECASTER
from foretab.store import open_history

if TYPE_CHECKING:
    from foretab.corpus.schema import CorpusSchema
    from foretab.store.ingest import IngestSummary

console = Console(stderr=True)


@app.command()
@exit_on_error
def ingest(
    path: Annotated[Path, typer.Argument(help="Long-format CSV (gzip allowed) or Parquet file.")],
    db: DbOption,
    reference_month: Annotated[
        str | None,
        typer.Option(
            "--reference-month",
            help="'Now' (YYYY-MM): months up to it form the history store, later months the "
            "separate future store. Default: the last month in the data.",
        ),
    ] = None,
    train: Annotated[
        bool,
        typer.Option(
            "--train/--no-train",
            help="Fit and save the forecaster after ingesting, so the store answers "
            "forecasting questions at once (`foretab train` refits).",
        ),
    ] = True,
    model: Annotated[
        str | None, typer.Option(help=f"Forecaster to fit (default {STORE_DEFAULT_FORECASTER}).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Random seed for the forecaster.")] = 0,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema",
            help="Corpus schema: a TOML file, or a packaged one (realestate, the default; "
            "stocks). It names the entity levels, time column, measures and table templates, "
            "and is stored with the store.",
        ),
    ] = None,
    entity: Annotated[
        str | None,
        typer.Option(
            "--entity",
            help="Instead of --schema: the entity columns, outermost first (e.g. region,store).",
        ),
    ] = None,
    time_column: Annotated[
        str | None, typer.Option("--time", help="With --entity: the monthly time column.")
    ] = None,
    time_format: Annotated[
        str | None,
        typer.Option(
            "--time-format",
            help="With --time: its strftime format when not YYYY-MM or YYYY-MM-DD "
            "(e.g. '%b %d %Y').",
        ),
    ] = None,
    measure: Annotated[
        str | None,
        typer.Option(
            "--measure",
            help="With --entity: the measure column, or two (the second summed over a "
            "window), e.g. price or sales,units.",
        ),
    ] = None,
) -> None:
    """Build the history store, the future store and the catalog from PATH.

    PATH has one row per entity-month. With the default (real-estate) schema: city,
    district, project, month (YYYY-MM), avg_price, optionally units_sold and any extra
    columns (kept). Other corpora: --schema FILE, or --entity/--time/--measure. Bad input is
    reported with file, row and column, and nothing is written. Re-ingesting replaces the
    store atomically. The forecaster is then fitted on the history store and saved with it
    (--no-train skips this; `foretab train --db DB` fits it later).
    """
    from foretab.store.ingest import ingest_path  # pandas: imported only when ingesting

    reference = parse_month_option(reference_month, "--reference-month")
    corpus_schema = _corpus_schema(schema, entity, time_column, time_format, measure)
    if train:  # refuse an unusable --model before the store is replaced
        from foretab.forecast.persist import require_persistable

        require_persistable(model or STORE_DEFAULT_FORECASTER)
    with stage_bar("ingest", console) as progress:
        summary = ingest_path(path, db, reference, schema=corpus_schema, progress=progress)
    print_summary(summary, Console())
    if train:
        from foretab.cli.training import train_with_bar, trained_line
        from foretab.forecast.store import HistoryTooShortError

        try:
            fitted = train_with_bar(db, model, seed, console)
        except HistoryTooShortError as exc:  # the store is written and answers the past
            from foretab.cli.safe_text import clean

            console.print(f"[yellow]not trained:[/yellow] {clean(exc.message)}", markup=True)
            return
        Console().print(trained_line(fitted, db))


def _corpus_schema(
    schema: str | None,
    entity: str | None,
    time_column: str | None,
    time_format: str | None,
    measure: str | None,
) -> CorpusSchema | None:
    """``--schema`` or the mapping flags (not both), or None for the default schema."""
    from foretab.corpus.schema import load_schema, schema_from_mapping

    mapping = (entity, time_column, measure)
    if schema is not None:
        if any(v is not None for v in (*mapping, time_format)):
            raise typer.BadParameter("give --schema or --entity/--time/--measure, not both")
        return load_schema(schema)
    if all(v is None for v in mapping):
        if time_format is not None:
            raise typer.BadParameter("--time-format goes with --entity, --time and --measure")
        return None
    if any(v is None for v in mapping):
        raise typer.BadParameter("--entity, --time and --measure go together; give all three")
    return schema_from_mapping(
        _columns(entity), str(time_column), _columns(measure), time_format=time_format
    )


def _columns(text: str | None) -> list[str]:
    return [c.strip() for c in str(text).split(",") if c.strip()]


def print_summary(summary: IngestSummary, out: Console) -> None:
    """The ingest summary: tables, projects, months, rows and seconds."""
    ref = summary.reference_month.iso if summary.reference_month else "none (all history)"
    grid = Table(title=cell(f"Ingested into {summary.location.describe()}"), show_header=False)
    grid.add_row("reference month", ref)
    grid.add_row("history tables", str(summary.history_tables))
    grid.add_row("future tables", str(summary.future_tables))
    grid.add_row(summary.entity_plural, str(summary.projects))
    grid.add_row("months (history / future)", f"{summary.history_months} / {summary.future_months}")
    grid.add_row("rows (history / future)", f"{summary.history_rows} / {summary.future_rows}")
    if summary.duplicates_dropped:
        grid.add_row("identical duplicate rows dropped", str(summary.duplicates_dropped))
    grid.add_row("seconds", f"{summary.seconds:.2f}")
    out.print(grid)


@app.command()
@exit_on_error
def tables(
    db: DbOption,
    city: Annotated[str | None, typer.Option(help="Only this city (case-insensitive).")] = None,
    district: Annotated[
        str | None, typer.Option(help="Only this district (case-insensitive).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list.")] = False,
) -> None:
    """List the history catalog: the tables the question engine can see."""
    from foretab.cli.projects import place_filter
    from foretab.parse.entities import EntityIndex

    with open_history(db) as store:
        # Same short forms as questions: "Jiangning", "Baoan", "江宁区".
        keep = place_filter(EntityIndex(store.entities()), city, district)
        entries = [e for e in store.catalog() if keep(e.outer, e.inner)]
        schema = store.schema
    # Columns for the schema's outer levels only, under its names ("city", "district").
    levels = schema.group_slots
    if as_json:
        rows = [
            {
                "name": e.table_name,
                "caption": e.caption,
                "city": e.outer,
                "district": e.inner,
                "year": e.year,
                "rows": e.rows,
            }
            for e in entries
        ]
        from foretab.core.schema import dumps_plain

        typer.echo(dumps_plain(rows, ensure_ascii=False))
        return
    table = Table(title=f"{len(entries)} history tables")
    for column in ("name", "caption", *(name for _, name in levels), "year", "rows"):
        table.add_column(
            column,
            justify="right" if column in {"year", "rows"} else "left",
            overflow="fold",
        )
    for e in entries:
        places = [getattr(e, slot) for slot, _ in levels]
        values = (e.table_name, e.caption, *places, e.year, e.rows)
        table.add_row(*(cell(v) for v in values))  # store data: never markup
    Console().print(table)
