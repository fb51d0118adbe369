"""``foretab bench forecast|impute|corpus`` and ``foretab train``: thin wrappers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from foretab.cli.common import DbOption, exit_on_error
from foretab.cli.main import app, bench_app
from foretab.forecast.store import STORE_DEFAULT_FORECASTER

if TYPE_CHECKING:
    from foretab.bench.forecast.models import BenchRow

# The benchmark modules import LightGBM, statsforecast and torch: they are imported inside
# the commands so that `foretab ask` does not pay for them at start-up.

SeedOption = Annotated[int, typer.Option(help="Random seed for every model.")]
JsonOutOption = Annotated[
    Path | None, typer.Option("--json", help="Write the scores as a JSON list here.")
]
CellDetailsOption = Annotated[
    Path | None,
    typer.Option(
        "--details",
        help="Also write every scored cell of every model here (JSON Lines), for "
        "`foretab bench compare`.",
    ),
]

console = Console(stderr=True)
out = Console(width=160)


def _table(title: str, rows: Sequence[BenchRow]) -> Table:
    table = Table(title=title)
    intervals = any(r.coverage is not None for r in rows)
    sure = any(r.mae_interval is not None for r in rows)
    cols = ["model", "MSE", "MAE", "MRE", "series", "points", "fit s", "predict s"]
    if sure:  # how far another sample of series could move the MAE / MRE
        cols[4:4] = ["MAE 95%", "MRE 95%"]
    if intervals:
        level = next(r.interval_level for r in rows if r.interval_level is not None)
        cols += [f"{level:.0%} coverage", "mean width"]
    for col in cols:
        table.add_column(col, justify="left" if col == "model" else "right")
    for r in rows:
        name = f"{r.model} (default)" if r.default else r.model
        extra = []
        if intervals:
            extra = (
                [f"{r.coverage:.1%}", f"{r.mean_width:,.0f}"]
                if r.coverage is not None and r.mean_width is not None
                else ["-", "-"]
            )
        spans = []
        if sure:
            spans = [
                "-" if r.mae_interval is None else "{:,.0f}–{:,.0f}".format(*r.mae_interval),
                "-" if r.mre_interval is None else "{:.4f}–{:.4f}".format(*r.mre_interval),
            ]
        table.add_row(
            name,
            f"{r.mse:.4g}",
            f"{r.mae:,.2f}",
            f"{r.mre:.4f}",
            *spans,
            str(r.n_series),
            str(r.n_points),
            f"{r.fit_seconds:.1f}",
            f"{r.predict_seconds:.2f}",
            *extra,
        )
    return table


def _write(path: Path | None, rows: Sequence[BenchRow]) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([r.to_dict() for r in rows], indent=2) + "\n")
        console.print(f"wrote {path}")


def _progress(name: str, stage: str) -> None:
    console.print(f"[dim]{name}: {stage}[/dim]")


@bench_app.command("forecast")
@exit_on_error
def forecast_cmd(
    train: Annotated[
        Path, typer.Option(help="Training CSV (series_id, 24 history + 12 target months).")
    ],
    test: Annotated[Path, typer.Option(help="CSV to score, same format as --train.")],
    val: Annotated[
        Path | None, typer.Option(help="Validation CSV: model selection / early stopping only.")
    ] = None,
    model: Annotated[str, typer.Option(help="A forecaster name, a comma list, or 'all'.")] = "all",
    seed: SeedOption = 0,
    json_out: JsonOutOption = None,
    details: CellDetailsOption = None,
) -> None:
    """Fit forecasters on --train and score 12-month forecasts on --test."""
    from foretab.bench.forecast.models import bench_forecast

    result = bench_forecast(train, test, val, model, seed, _progress, details)
    out.print(_table(f"Forecasting: {test.name}", result.rows))
    if result.default_predict_3000_s is not None:
        out.print(
            f"default model: 12-month forecasts for 3,000 series in "
            f"{result.default_predict_3000_s:.2f} s after fitting"
        )
    _write(json_out, result.rows)


@bench_app.command("impute")
@exit_on_error
def impute_cmd(
    train: Annotated[
        Path, typer.Option(help="Training CSV (series_id, 24 values, 24 mask_ columns).")
    ],
    test: Annotated[
        Path | None, typer.Option(help="CSV to score: cells with mask 1 are hidden and scored.")
    ] = None,
    model: Annotated[str, typer.Option(help="An imputer name, a comma list, or 'all'.")] = "all",
    seed: SeedOption = 0,
    json_out: JsonOutOption = None,
    select_split: Annotated[
        int | None,
        typer.Option(
            help="Instead of --test, score a quarter of --train's series held out by this "
            "seed (their own masks): the split to choose settings on."
        ),
    ] = None,
    transductive: Annotated[
        bool,
        typer.Option(
            help="Also fit on the scored series' visible cells (their masked cells stay "
            "hidden): a protocol of its own, not the paper's."
        ),
    ] = False,
    details: CellDetailsOption = None,
) -> None:
    """Fit imputers on --train and score the masked cells of --test."""
    from foretab.bench.forecast.models import bench_impute

    rows = bench_impute(
        train,
        test,
        model,
        seed,
        _progress,
        split_seed=select_split,
        transductive=transductive,
        details=details,
    )
    title = test.name if test is not None else f"{train.name}, held-out split {select_split}"
    out.print(_table(f"Imputation: {title}", rows))
    _write(json_out, rows)


@bench_app.command("corpus")
@exit_on_error
def corpus_cmd(
    db: DbOption,
    model: Annotated[
        str, typer.Option(help="Forecaster names (comma list) or 'all'.")
    ] = f"naive,{STORE_DEFAULT_FORECASTER}",
    seed: SeedOption = 0,
    json_out: JsonOutOption = None,
    stored: Annotated[
        bool,
        typer.Option(
            help="Score the model saved with the store (fitted by `foretab train` exactly as "
            "this command fits it) instead of refitting it."
        ),
    ] = False,
    level: Annotated[float, typer.Option(help="Level of the scored intervals.")] = 0.8,
    details: CellDetailsOption = None,
    answers: Annotated[
        bool,
        typer.Option(
            "--answers",
            help="Instead, score the intervals the engine states for a project's window "
            "maximum and a district's or city's mean (one month, a window) against the "
            "future store, per kind (docs/calibration.md).",
        ),
    ] = False,
    month_correlation: Annotated[
        str | None,
        typer.Option(
            help="With --answers: the scenarios' correlation between two months (a comma "
            "list scores each; every combination of the three lists is scored)."
        ),
    ] = None,
    shared_correlation: Annotated[
        str | None,
        typer.Option(help="With --answers: the scenarios' district shock (a comma list)."),
    ] = None,
    outer_correlation: Annotated[
        str | None,
        typer.Option(
            help="With --answers: the scenarios' shock of an outer place, a city (a comma list)."
        ),
    ] = None,
    fleeting_share: Annotated[
        str | None,
        typer.Option(
            help="With --answers: the share of each shock drawn afresh every month (a comma list)."
        ),
    ] = None,
    shock_growth: Annotated[
        str | None,
        typer.Option(
            help="With --answers: per month after R, the shocks' variance grows by this share "
            "of itself (a comma list)."
        ),
    ] = None,
    shock_shift: Annotated[
        str | None,
        typer.Option(
            help="With --answers: per month after R, this share of the district shock's "
            "variance passes to a random walk of its city (a comma list)."
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(help="With --answers: only the first N projects, districts and cities."),
    ] = None,
) -> None:
    """Forecast R+1..R+12 from the history store; score against the future store.

    Models with intervals also get their empirical coverage and mean width at --level,
    and the coverage in each fifth of the series by their own volatility (calmest first).
    With --answers, the stated intervals of window maxima and place means instead.
    """
    if answers:
        correlations = (
            month_correlation,
            shared_correlation,
            outer_correlation,
            fleeting_share,
            shock_growth,
            shock_shift,
        )
        _answers(db, level, json_out, limit, correlations)
        return
    from foretab.bench.forecast.corpus import bench_corpus

    rows = bench_corpus(db, model, seed, _progress, level=level, stored=stored, details=details)
    out.print(_table("Corpus forecasts R+1..R+12 vs the future store", rows))
    for r in rows:
        if r.coverage_by_volatility is not None:
            fifths = " ".join(f"{c:.1%}" for c in r.coverage_by_volatility)
            out.print(
                f"{r.model}: {level:.0%} coverage by volatility fifth, calmest first: {fifths}"
            )
    _write(json_out, rows)


def _answers(
    db: str,
    level: float,
    json_out: Path | None,
    limit: int | None,
    correlations: tuple[str | None, ...],
) -> None:
    from itertools import product

    from foretab.analyze.scenarios import Copula
    from foretab.bench.forecast.answers import bench_answers

    default = Copula()
    lists = [
        [default_value] if given is None else [float(v) for v in given.split(",")]
        for given, default_value in zip(
            correlations,
            (
                default.months,
                default.shared,
                default.outer,
                default.fleeting,
                default.growth,
                default.shift,
            ),
            strict=True,
        )
    ]
    copulas = [Copula(*chosen) for chosen in product(*lists)]
    results = bench_answers(
        db,
        level=level,
        copulas=copulas,
        limit=limit,
        progress=lambda kind, done, total: _progress(kind, f"{done:,} of {total:,}"),
    )
    for result in results:
        title = f"Stated {level:.0%} intervals at R = {result.reference} ({result.copula})"
        table = Table(title=title)
        for col in ("kind", "answers", "coverage", "mean width", "below", "above", "skipped"):
            table.add_column(col, justify="left" if col == "kind" else "right")
        for k in result.kinds:
            table.add_row(
                k.kind,
                f"{k.n:,}",
                f"{k.coverage:.1%}",
                f"{k.mean_width:,.0f}",
                f"{k.below:.1%}",
                f"{k.above:.1%}",
                f"{k.skipped:,}",
            )
        out.print(table)
    out.print(f"{results[0].seconds:.0f} s")
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps([r.to_dict() for r in results], indent=2) + "\n")
        console.print(f"wrote {json_out}")


@app.command("train")
@exit_on_error
def train_cmd(
    db: DbOption,
    model: Annotated[
        str | None, typer.Option(help=f"Forecaster name (default {STORE_DEFAULT_FORECASTER}).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Random seed.")] = 0,
    intervals: Annotated[
        str,
        typer.Option(
            help="How intervals are calibrated on the backtest: 'per-series' (residuals "
            "scaled by each series' own volatility), 'pooled' (one relative width for "
            "every series, as before) or 'per-series-tails' (per series, the upper and "
            "lower tails each scaled by a factor fitted on the backtest's later origins)."
        ),
    ] = "per-series",
    cluster: Annotated[
        str | None,
        typer.Option(
            "--cluster",
            help="Train the LightGBM boosters on a running Dask cluster: "
            "dask://HOST:PORT of its scheduler (needs the [cluster] extra). The saved "
            "model has the same format; features and intervals are computed here.",
        ),
    ] = None,
) -> None:
    """Refit the store's forecaster on its history (to the reference month) and save it."""
    from foretab.cli.training import train_with_bar, trained_line

    fitted = train_with_bar(db, model, seed, console, intervals=intervals, cluster=cluster)
    out.print(trained_line(fitted, db))
