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
   adds to its own log forecast. By default each residual is first divided by its
   series' error scale (``foretab.forecast.spread``), and a forecast multiplies the
   quantiles back by its own series' scale: intervals follow each series' noise.

This is split conformal per horizon (the calibration copy is fitted on less recent data
than the store model, so if anything the intervals are slightly conservative). Only series
eligible for questions (>= 6 observations in the 24 months to the origin) contribute, as
the corpus benchmark and the QA dataset filter. Nothing here is persisted but the grid
and the scale model's three numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from foretab.forecast.base import MAX_HORIZON, Forecaster, Place, check_panel
from foretab.forecast.spread import Spread, fit_spread

GRID = np.linspace(0.0, 1.0, 101)
#: Eligibility of a series at an origin (as the corpus benchmark / QA builder filter).
MIN_OBS = 6
WINDOW = 24
#: Fewer residuals than this at a horizon: pool the neighbouring horizons instead.
MIN_RESIDUALS = 200
#: ``Calibration.method`` of normalised residuals (a model file's ``interval_method``).
PER_SERIES = "backtest-per-series"
#: Normalised residual quantiles are widened by this factor. The backtest's residuals
#: (origins in the 18 months to R) understate the next year's: unwidened, the corpus's
#: 80% intervals covered 75.7% of the QA val split's forecast values (72.7% of the whole
#: 2022 hold-out), about 70% in each volatility fifth but the calmest. 1.25 was chosen on
#: QA val (80.9%; hold-out 78.8%), README "Per-series intervals".
WIDENING = 1.25
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
    #: the error scale residuals were normalised by (None: pooled, one width for all)
    spread: Spread | None = None


@dataclass(frozen=True, slots=True)
class Backtest:
    """A rolling backtest's residuals, and per origin what each forecast read."""

    #: per horizon, every log residual ``log(actual / forecast)`` at that horizon
    residuals: list[np.ndarray]
    #: per origin, the ``[rows, lookback]`` histories forecast from ...
    windows: list[np.ndarray]
    #: ... and their ``[rows, h]`` log residuals (NaN where the month was unobserved)
    errors: list[np.ndarray]


def backtest_residuals(
    panel: np.ndarray,
    make_forecaster: Callable[[], Forecaster],
    lookback: int,
    n_origins: int = MAX_HORIZON,
    places: Sequence[Place] | None = None,
) -> list[np.ndarray]:
    """Log residuals per horizon (``[12]`` arrays) of a copy fitted on ``panel[:, :T−n]``."""
    return run_backtest(panel, make_forecaster, lookback, n_origins, places).residuals


def run_backtest(
    panel: np.ndarray,
    make_forecaster: Callable[[], Forecaster],
    lookback: int,
    n_origins: int = MAX_HORIZON,
    places: Sequence[Place] | None = None,
) -> Backtest:
    """Fit a copy on ``panel[:, :T−n]`` and forecast from each of the last ``n`` origins.

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
    windows: list[np.ndarray] = []
    errors: list[np.ndarray] = []
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
        windows.append(hist[rows][:, -lookback:])
        errors.append(resid)
        for k in range(h):
            r = resid[:, k]
            per_h[k].append(r[np.isfinite(r)])
    residuals = [np.concatenate(r) if r else np.empty(0) for r in per_h]
    return Backtest(residuals, windows, errors)


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
    adaptive: bool = True,
) -> Calibration:
    """Backtest, then calibrate: the residual grid a store model's intervals use.

    ``adaptive``: residuals are normalised by each series' error scale
    (``foretab.forecast.spread``) first, so intervals widen with a series' own noise.
    """
    backtest = run_backtest(panel, make_forecaster, lookback, n_origins, places)
    origins = min(n_origins, panel.shape[1] - MIN_TRAIN)
    if not adaptive:
        return calibrate(backtest.residuals, origins)
    return calibrate_adaptive(backtest, origins)


def calibrate_adaptive(backtest: Backtest, origins: int = MAX_HORIZON) -> Calibration:
    """Quantiles of residuals divided by their series' scale, and the scale model."""
    spread = fit_spread(backtest.windows, backtest.errors)
    per_h: list[list[np.ndarray]] = [[] for _ in range(MAX_HORIZON)]
    for window, error in zip(backtest.windows, backtest.errors, strict=True):
        normalised = error / spread.scale(window)[:, None]
        for k in range(error.shape[1]):
            z = normalised[:, k]
            per_h[k].append(z[np.isfinite(z)])
    residuals = [np.concatenate(z) if z else np.empty(0) for z in per_h]
    cal = calibrate(residuals, origins)
    return replace(
        cal,
        residual_quantiles=cal.residual_quantiles * WIDENING,
        method=PER_SERIES,
        spread=spread,
    )
