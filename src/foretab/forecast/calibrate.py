"""Split-conformal prediction intervals from a rolling backtest at the reference month.

In-sample residuals of a boosted model are far too small (it has seen those targets), so
a store model's intervals are calibrated on forecasts it could not have fitted:

1. a *calibration* copy of the model is fitted on the panel cut at ``R − 12`` (every
   training target at or before ``R − 12``);
2. it forecasts from every origin ``o = R−12 … R−1`` (reading, as a question does, the
   ``lookback`` months to ``o``) the months ``o+1 … min(o+12, R)``, all of which are still
   history, and are out of sample for the calibration copy;
3. per horizon ``h``, the quantiles of the log residuals ``log(actual / forecast)`` of
   those forecasts, on a 101-point grid, are what the store model's ``predict_quantiles``
   adds to its own log forecast.

This is split conformal per horizon (the calibration copy is fitted on less recent data
than the store model, so if anything the intervals are slightly conservative). Only series
eligible for questions (>= 6 observations in the 24 months to the origin) contribute, as
the corpus benchmark and the QA dataset filter. Nothing here is persisted but the grid.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from foretab.forecast.base import MAX_HORIZON, Forecaster, Place, check_panel

GRID = np.linspace(0.0, 1.0, 101)
#: Eligibility of a series at an origin (as the corpus benchmark / QA builder filter).
MIN_OBS = 6
WINDOW = 24
#: Fewer residuals than this at a horizon: pool the neighbouring horizons instead.
MIN_RESIDUALS = 200
#: Months the calibration copy fits on at least, and backtest origins at least.
MIN_TRAIN = 12
MIN_ORIGINS = 3


def can_backtest(months: int) -> bool:
    """Whether a panel of ``months`` columns is long enough for a backtest."""
    return months - MIN_TRAIN >= MIN_ORIGINS


class TooShort(ValueError):
    """The panel is too short for a backtest (the store model keeps in-sample residuals)."""


@dataclass(frozen=True, slots=True)
class Calibration:
    """Per-horizon log-residual quantiles ``[12, 101]`` and how many residuals each had."""

    residual_quantiles: np.ndarray
    counts: tuple[int, ...]
    origins: int
    method: str = "backtest"


def backtest_residuals(
    panel: np.ndarray,
    make_forecaster: Callable[[], Forecaster],
    lookback: int,
    n_origins: int = MAX_HORIZON,
    places: Sequence[Place] | None = None,
) -> list[np.ndarray]:
    """Log residuals per horizon (``[12]`` arrays) of a copy fitted on ``panel[:, :T−n]``.

    ``places`` (one per panel row) for a model that reads them; after fitting, the copy
    observes the whole panel's market signals, which at each origin are what was known
    then (they are causal), never the targets it is scored on.
    """
    values = check_panel(panel)
    t = values.shape[1]
    # A short panel gets fewer origins (its long horizons borrow from shorter ones); the
    # calibration copy needs at least MIN_TRAIN months to fit on.
    n_origins = min(n_origins, t - MIN_TRAIN)
    if not can_backtest(t):
        raise TooShort(f"a backtest needs at least {MIN_TRAIN + MIN_ORIGINS} months")
    cut = t - n_origins  # columns 0..cut-1 train the calibration copy
    model = make_forecaster()
    if model.uses_places:
        model.fit(values[:, :cut], places=places)  # type: ignore[call-arg]
        model.observe(values, places)
    else:
        model.fit(values[:, :cut])
    per_h: list[list[np.ndarray]] = [[] for _ in range(MAX_HORIZON)]
    for origin in range(cut - 1, t - 1):  # last history column the forecast reads
        h = min(MAX_HORIZON, t - 1 - origin)
        hist = values[:, : origin + 1]
        recent = np.isfinite(hist[:, -WINDOW:]).sum(axis=1)
        actual = values[:, origin + 1 : origin + 1 + h]
        rows = (recent >= MIN_OBS) & np.isfinite(actual).any(axis=1)
        if not rows.any():
            continue
        pred = model.predict(
            hist[rows], h, None if places is None else [places[i] for i in np.flatnonzero(rows)]
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            resid = np.log(actual[rows] / pred)
        for k in range(h):
            r = resid[:, k]
            per_h[k].append(r[np.isfinite(r)])
    return [np.concatenate(r) if r else np.empty(0) for r in per_h]


def calibrate(residuals: list[np.ndarray], origins: int = MAX_HORIZON) -> Calibration:
    """The quantile grid per horizon; sparse horizons borrow from their neighbours."""
    grid = np.zeros((MAX_HORIZON, GRID.size))
    counts = []
    for k in range(MAX_HORIZON):
        pool = residuals[k]
        span = 1
        while pool.size < MIN_RESIDUALS and span < MAX_HORIZON:
            lo, hi = max(0, k - span), min(MAX_HORIZON, k + span + 1)
            pool = np.concatenate(residuals[lo:hi])
            span += 1
        if pool.size == 0:
            raise ValueError("the backtest produced no residuals to calibrate intervals on")
        counts.append(int(residuals[k].size))
        # With thousands of residuals per horizon the (n+1)/n finite-sample correction
        # of split conformal is below a tenth of a grid step, so plain quantiles.
        grid[k] = np.quantile(pool, GRID)
    return Calibration(grid, tuple(counts), origins)


def conformal_quantiles(
    panel: np.ndarray,
    make_forecaster: Callable[[], Forecaster],
    lookback: int,
    n_origins: int = MAX_HORIZON,
    places: Sequence[Place] | None = None,
) -> Calibration:
    """Backtest, then calibrate: the residual grid a store model's intervals use."""
    residuals = backtest_residuals(panel, make_forecaster, lookback, n_origins, places)
    return calibrate(residuals, min(n_origins, panel.shape[1] - MIN_TRAIN))
