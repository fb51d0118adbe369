"""``foretab bench calibrate``: fit a store's probability calibration on a QA split."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import bench_app


@bench_app.command("calibrate")
@exit_on_error
def calibrate_cmd(
    db: DbOption,
    details: Annotated[
        Path,
        typer.Option(
            "--details",
            help="A `foretab bench run --details` file of the QA train split, run on this "
            "store with its current model.",
        ),
    ],
    method: Annotated[
        str, typer.Option(help="Per kind: 'isotonic' (monotone steps) or 'platt' (logistic).")
    ] = "isotonic",
    min_answers: Annotated[
        int,
        typer.Option("--min-answers", help="A kind with fewer answers keeps its scenario shares."),
    ] = 100,
) -> None:
    """Fit the map from scenario shares to stated probabilities, and save it with the store.

    One monotone map per kind of probability (reasoning, threshold, which-month, scope),
    fitted on the answers of DETAILS: how often an answer whose scenarios gave it a share
    p was right. Saved as numbers (JSON) next to the store's model and used by every
    answer while that model stays; `foretab train` makes it stale (refit it then).
    """
    from foretab.bench.qa.fit_calibration import calibrate_store
    from foretab.bench.qa.reliability import read_stated

    stated = read_stated(details)
    calibration = calibrate_store(db, stated, method, min_answers, fitted_on=details.name)
    grid = Table(title=f"bench calibrate: {len(stated):,} answers with a probability")
    for column in ("kind", "method", "answers", "breakpoints"):
        grid.add_column(column, justify="left" if column == "kind" else "right")
    for kind, curve in sorted(calibration.curves.items()):
        grid.add_row(kind.value, curve.method, f"{curve.n:,}", str(len(curve.x)))
    Console().print(grid)
    if not calibration.curves:
        Console(stderr=True).print(
            f"no kind has {min_answers} answers: the store states scenario shares as before"
        )
