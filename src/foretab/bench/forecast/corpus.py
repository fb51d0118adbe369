"""``foretab bench corpus``: the store forecaster scored against the future store.

Each model is fitted exactly as ``foretab train`` fits it (history store only, targets at
or before R), forecasts R+1..R+12 for every eligible project from its last ``lookback``
months (what a question reads), and is scored over the months the future store observed.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from foretab.bench.bootstrap import series_error_intervals
from foretab.bench.forecast.cell_compare import cell_rows, write_cell_details
from foretab.bench.forecast.models import BenchRow, resolve_models
from foretab.core.months import Month
from foretab.core.plan import EntityRef
from foretab.errors import ForecastError
from foretab.forecast import registry
from foretab.forecast.base import MAX_HORIZON
from foretab.forecast.metrics import score
from foretab.forecast.neural import neural_installed
from foretab.forecast.store import (
    STORE_DEFAULT_FORECASTER,
    StoreModel,
    StorePanel,
    fit_store_model,
    load_store_model,
    panel_arrays,
    store_reference,
)

#: Eligibility, as the dataset builder filters questions (docs/design.md §5).
MIN_HISTORY_OBS = 6
HISTORY_WINDOW = 24


def eligible_rows(history: StorePanel, future: np.ndarray) -> np.ndarray:
    """Projects with >= 6 observations in the 24 months to R and >= 1 in R+1..R+12."""
    recent = np.isfinite(history.values[:, -HISTORY_WINDOW:]).sum(axis=1)
    return (recent >= MIN_HISTORY_OBS) & np.isfinite(future).any(axis=1)


def future_rows(db: str, generation: str | None, history: StorePanel, ref: Month) -> np.ndarray:
    """``[projects, 12]``: the future store's R+1..R+12 in the rows of ``history``.

    NaN where the month was not observed, or the future store lacks the project.
    """
    from foretab.store import open_future

    with open_future(db, generation) as store:
        ahead = panel_arrays(store.panel(), ref + MAX_HORIZON, first=ref + 1)
    row_of = {p: i for i, p in enumerate(ahead.entities)}
    future = np.full((len(history.entities), MAX_HORIZON), np.nan)
    for i, p in enumerate(history.entities):
        if p in row_of:
            future[i] = ahead.values[row_of[p]]
    return future


@dataclasses.dataclass(frozen=True, slots=True)
class StoredYear:
    """A store's saved model and the future year it forecasts, for diagnostics.

    The projects ``bench corpus`` scores (``eligible_rows``), their last ``lookback``
    months to R (what a question reads) and the future store's R+1..R+12 of each.
    """

    model: StoreModel
    refs: list[EntityRef]
    window: np.ndarray
    truth: np.ndarray

    def forecast(self) -> np.ndarray:
        """The saved model's point forecasts ``[len(refs), 12]``."""
        return self.model.predict(self.window, MAX_HORIZON, self.refs)


def stored_year(db: str) -> StoredYear:
    """``StoredYear`` of the store at ``db`` (reads the future store: diagnostics only)."""
    from foretab.store import open_history

    with open_history(db) as store:
        ref = store_reference(store)
        history = panel_arrays(store.panel(), ref)
        model = load_store_model(store)
        generation = store.generation
    future = future_rows(db, generation, history, ref)
    keep = eligible_rows(history, future)
    refs = [p for p, k in zip(history.entities, keep, strict=True) if k]
    return StoredYear(model, refs, history.window(model.lookback)[keep], future[keep])


def bench_corpus(
    db: str,
    model: str = f"naive,{STORE_DEFAULT_FORECASTER}",
    seed: int = 0,
    progress: Callable[[str, str], None] = lambda _n, _s: None,
    level: float = 0.8,
    stored: bool = False,
    details: Path | None = None,
) -> list[BenchRow]:
    """Score each model's R+1..R+12 forecasts against ``open_future(db)``.

    Models with intervals are also scored on their central ``level`` interval: the
    empirical coverage of the observed cells and the mean width (yuan/m²). ``stored``
    scores the model saved with the store (``foretab train`` fits it exactly as this
    function would) instead of refitting it; other models are refitted. ``details``:
    also write every scored cell of every model there (``bench compare``; a project's
    series id is "outer / inner / name").
    """
    from foretab.store import open_history

    with open_history(db) as hist_store:
        ref = store_reference(hist_store)
        history = panel_arrays(hist_store.panel(), ref)
        saved = load_store_model(hist_store) if stored else None
        generation = hist_store.generation
    future = future_rows(db, generation, history, ref)
    keep = eligible_rows(history, future)
    truth = future[keep]
    rows = []
    cells: list[dict[str, object]] = []
    series_ids = [
        f"{p.outer} / {p.inner} / {p.name}"
        for p, k in zip(history.entities, keep, strict=True)
        if k
    ]
    months = [(ref + k).iso for k in range(1, MAX_HORIZON + 1)]
    for name in resolve_models(model, list(registry.FORECASTERS), "forecaster"):
        if name in registry.NEURAL and not neural_installed():
            progress(name, "skipped: torch / neuralforecast not installed (the [neural] extra)")
            continue
        progress(name, "fit")
        start = time.perf_counter()
        if saved is not None and saved.model == name:
            fitted, fit_s = saved, saved.trained_seconds
        else:
            fitted = fit_store_model(history, ref, name, seed)
            fit_s = time.perf_counter() - start
        # As a question does: the last `lookback` months of each series, to R.
        start = time.perf_counter()
        window = history.window(fitted.lookback)[keep]
        refs = [p for p, k in zip(history.entities, keep, strict=True) if k]
        pred = fitted.predict(window, MAX_HORIZON, refs)
        pred_s = time.perf_counter() - start
        s = score(pred, truth)
        row = BenchRow.scored(
            name,
            s,
            n_series=int(keep.sum()),
            fit_seconds=fit_s,
            predict_seconds=pred_s,
            default=name == STORE_DEFAULT_FORECASTER,
            intervals=series_error_intervals(pred, truth),
        )
        if details is not None:
            cells += cell_rows(name, series_ids, months, pred, truth)
        try:
            tail = (1 - level) / 2
            bounds = fitted.predict_quantiles(window, MAX_HORIZON, (tail, 1 - tail), refs)
        except ForecastError:  # a model without intervals
            bounds = None
        if bounds is not None:
            cov, width = interval_scores(bounds[..., 0], bounds[..., 1], truth)
            fifths = coverage_by_volatility(bounds[..., 0], bounds[..., 1], truth, window)
            row = dataclasses.replace(
                row,
                interval_level=level,
                coverage=cov,
                mean_width=width,
                coverage_by_volatility=fifths,
            )
        rows.append(row)
    if details is not None:
        write_cell_details(details, iter(cells))
    return rows


def coverage_by_volatility(
    lo: np.ndarray, hi: np.ndarray, truth: np.ndarray, window: np.ndarray
) -> tuple[float, ...] | None:
    """Coverage per fifth of the series by the volatility of their ``window`` (calm first).

    Series without two observations in a row have no volatility and are left out; None
    when too few series are left to cut into fifths.
    """
    from foretab.forecast.spread import own_volatility

    vol = own_volatility(window)
    known = np.isfinite(vol)
    if known.sum() < 25:
        return None
    edges = np.quantile(vol[known], [0.2, 0.4, 0.6, 0.8])
    fifth = np.where(known, np.searchsorted(edges, vol, side="right"), -1)
    return tuple(
        round(interval_scores(lo[fifth == k], hi[fifth == k], truth[fifth == k])[0], 4)
        for k in range(5)
    )


def interval_scores(lo: np.ndarray, hi: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    """Empirical coverage and mean width of ``[lo, hi]`` over the observed cells."""
    cells = np.isfinite(truth) & np.isfinite(lo) & np.isfinite(hi)
    y = truth[cells]
    inside = (lo[cells] <= y) & (y <= hi[cells])
    return float(inside.mean()), float(np.mean(hi[cells] - lo[cells]))
