"""``foretab demo``: a synthetic corpus, ingested and shown, in a few seconds."""

from __future__ import annotations

from typing import Annotated

import typer

from foretab.cli.main import app
from foretab.core.months import Month
from foretab.demo.defaults import DEFAULT_DB, DEFAULT_SEED, default_reference_month


def _month(value: str | None) -> Month | None:
    if value is None:
        return None
    try:
        return Month.parse(value)
    except ValueError as exc:
        raise typer.BadParameter(f"{exc}; write it as YYYY-MM, e.g. 2023-12.") from exc


@app.command("demo")
def demo(
    db: Annotated[
        str,
        typer.Option(
            "--db",
            help=(
                "Store to create or replace: a DuckDB file (default "
                f"./{DEFAULT_DB} in the current directory; the future store is the "
                "sibling .future.duckdb) or a postgresql:// URL."
            ),
        ),
    ] = DEFAULT_DB,
    seed: Annotated[
        int, typer.Option("--seed", help="Random seed; the same seed gives the same corpus.")
    ] = DEFAULT_SEED,
    reference_month: Annotated[
        str | None,
        typer.Option(
            "--reference-month",
            help=(
                "YYYY-MM: 'now'; later months go to the future store. Default "
                f"{default_reference_month().iso}, which leaves 12 future months."
            ),
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Forecaster to train on the demo store (default lgbm)."),
    ] = None,
) -> None:
    """Generate a synthetic corpus (4 cities, 180 projects, 48 months), ingest it, show it."""
    from foretab.cli.demo.run import run_demo

    run_demo(db, seed=seed, reference_month=_month(reference_month), model=model)
