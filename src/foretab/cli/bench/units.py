"""``foretab bench units``: the units-sold count model on the corpus hold-out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import exit_on_error
from foretab.cli.main import bench_app

if TYPE_CHECKING:
    from foretab.core.months import Month


@bench_app.command("units")
@exit_on_error
def units_cmd(
    data: Annotated[
        Path,
        typer.Option(
            "--data", help="A corpus CSV with city, district, project, month, units_sold."
        ),
    ],
    reference_month: Annotated[
        str, typer.Option("--reference-month", help="R: fit on months up to it, score R+1..R+12.")
    ],
    seed: Annotated[int, typer.Option(help="LightGBM's seed.")] = 0,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the scores here.")
    ] = None,
    totals: Annotated[
        bool,
        typer.Option(
            "--totals",
            help="Score instead the store's model (with its activity booster) on 1-, 3- and "
            "12-month totals per project and 12-month district totals, as questions ask them.",
        ),
    ] = False,
) -> None:
    """Score the units-sold model (LightGBM Poisson, 80% quantile interval) on the hold-out.

    Fitted on the months up to R; every project with a row in R-11..R is forecast for
    R+1..R+12 and scored on the months that have a row. Against carrying each project's
    mean of R-11..R forward: both MAEs and their difference with a 95% interval that
    resamples whole projects, and the interval's coverage.
    """
    from foretab.bench.forecast.units import bench_units
    from foretab.core.months import Month

    if totals:
        _totals(data, Month.parse(reference_month), seed, json_out)
        return

    with Console(stderr=True).status("fitting the units model (three boosters)"):
        result = bench_units(data, Month.parse(reference_month), seed)
    grid = Table(title=f"bench units: {result.projects:,} projects, {result.cells:,} cells")
    grid.add_column("")
    grid.add_column("value", justify="right")
    change, low, high = result.mae_change
    grid.add_row("model MAE (LightGBM Poisson)", f"{result.model_mae:,.3f}")
    grid.add_row("baseline MAE (last 12 months' mean)", f"{result.baseline_mae:,.3f}")
    grid.add_row(
        f"model − baseline ({result.level:.0%} interval)",
        f"{change:+.3f} ({low:+.3f} to {high:+.3f})",
    )
    grid.add_row("80% interval coverage", f"{100 * result.coverage:.1f}%")
    grid.add_row("mean interval width", f"{result.mean_width:,.2f}")
    grid.add_row("fit + forecast seconds", f"{result.seconds:.1f}")
    Console().print(grid)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")


def _totals(data: Path, reference: Month, seed: int, json_out: Path | None) -> None:
    from foretab.bench.forecast.units import bench_units_totals

    with Console(stderr=True).status("fitting the units model (four boosters)"):
        result = bench_units_totals(data, reference, seed)
    grid = Table(title="bench units --totals: recorded units (a month without a row: 0)")
    for name in ("window", "projects", "model MAE", "baseline MAE", "row-mean MAE", "coverage"):
        grid.add_column(name, justify="right")
    for row in result.rows:
        grid.add_row(
            f"{row.months} months",
            f"{row.projects:,}",
            f"{row.model_mae:,.2f}",
            f"{row.baseline_mae:,.2f}",
            f"{row.row_mean_mae:,.2f}",
            f"{100 * row.coverage:.1f}%",
        )
    Console().print(grid)
    Console().print(
        f"{result.districts} district totals over 12 months, median relative error: model "
        f"{100 * result.district_model_error:.1f}%, baseline "
        f"{100 * result.district_baseline_error:.1f}%; ends added up cover "
        f"{100 * result.district_coverage:.1f}%  (fit + forecast {result.seconds:.1f} s)"
    )
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
