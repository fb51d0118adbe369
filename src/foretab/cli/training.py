"""Fitting the store's model from the CLI (``foretab ingest`` and ``foretab train``)."""

from __future__ import annotations

from rich.console import Console

from foretab.cli.progress import stage_bar
from foretab.forecast.store import INTERVALS_PER_SERIES, StoreModel, train_store_model


def train_with_bar(
    db: str,
    model: str | None,
    seed: int,
    console: Console,
    *,
    intervals: str = INTERVALS_PER_SERIES,
    cluster: str | None = None,
) -> StoreModel:
    """Fit and save the store's model, with a progress bar over the boosting rounds.

    ``cluster`` (``dask://HOST:PORT``): the boosters are trained on that Dask cluster
    (the bar then shows the stages, not the rounds).
    """
    if cluster is None:
        with stage_bar("train", console) as progress:
            return train_store_model(db, model, seed, progress, intervals=intervals)
    from foretab.forecast.cluster import on_cluster

    with on_cluster(cluster) as workers:
        console.print(f"training on {workers} Dask workers at {cluster}")
        with stage_bar("train", console) as progress:
            return train_store_model(db, model, seed, progress, intervals=intervals)


def trained_line(fitted: StoreModel, db: str) -> str:
    """One line saying what was fitted, on what, how fast (and whether units are forecast)."""
    from foretab.forecast.units_store import UNITS_ARTIFACT
    from foretab.store import open_history

    months = f"{(fitted.reference_month + 1).iso}..{(fitted.reference_month + 12).iso}"
    with open_history(db) as store:
        units = store.load_artifact(UNITS_ARTIFACT) is not None
    beside = "; a units-sold model beside it forecasts the same months" if units else ""
    return (
        f"trained {fitted.model} at {fitted.reference_month.iso} on {fitted.n_series} "
        f"series in {fitted.trained_seconds:.1f} s; saved with the store, it forecasts "
        f"{months} from each question's last {fitted.lookback} months{beside}"
    )
