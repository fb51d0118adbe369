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
the corpus benchmark and the QA dataset filter. Nothing here is persisted but the grid,
the scale model's three (with staleness, four) numbers and the drift (and, with
``tails``, the two tail factors of ``fit_tails``, already applied to the grid).

The grid gives the *spread*; its *location* is not the calibration copy's. That copy was
fitted on an older stretch of the market, and its median residual is that stretch's bias
(on the real-estate corpus, +0.01% at one month to +0.96% at twelve: it missed the
2020–21 rise, which the store model has seen), so with a drift copy each horizon's
quantiles are centred on their median and the forecast's distribution is moved by a
*recent drift* instead: an intercept correction, as in forecasting under structural
breaks. A second, cheaper copy fitted on the months before ``R − DRIFT_ORIGINS``
forecasts the last ``DRIFT_ORIGINS`` months of history; the slope through the origin of
its median log residual against the horizon is a per-month bias (on the corpus about
−0.1%: models that learned 2019–21 over-forecast late 2021), and horizon ``h`` moves by
``h`` times it (``recent_drift``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from foretab.forecast.base import MAX_HORIZON, Forecaster, Place, check_panel
from foretab.forecast.spread import Spread, fit_spread
from foretab.forecast.windows import sample_series

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
#: QA val (80.9%; hold-out 78.8%; docs/benchmarks/uncertainty.md, "Per-series
#: intervals") — before the grid was centred and moved by the recent drift, after which
#: the same 1.25 covers 83.1% of val and 80.4% of the hold-out; it was not chosen again
#: (the test split had been seen).
WIDENING = 1.25
#: Months the calibration copy fits on at least, and backtest origins at least.
MIN_TRAIN = 12
MIN_ORIGINS = 3
#: Origins of the drift backtest (the months whose forecasts measure the recent bias).
DRIFT_ORIGINS = 6
#: A per-month drift beyond ±this is not a bias but a broken backtest: it is clipped.
MAX_DRIFT = 0.01
#: ``fit_tails``: the earlier share of the backtest's origins fits a provisional grid,
#: the later ones score it (set before the fit was scored: docs/calibration.md, "Upper
#: and lower tails fitted apart"; not tuned).
TAIL_FIT_SHARE = 0.5
#: A tail factor is looked for in this range (a bound reached says the fit is poor).
TAIL_RANGE = (0.25, 4.0)


def can_backtest(months: int) -> bool:
    """Whether a panel of ``months`` columns is long enough for a backtest."""
    return months - MIN_TRAIN >= MIN_ORIGINS


class TooShort(ValueError):
    """The panel is too short for a backtest (the store model keeps in-sample residuals)."""


@dataclass(frozen=True, slots=True)
class Tails:
    """Factors on a centred grid's lower and upper halves, fitted on held-out origins."""

    lower: float
    upper: float

    def __post_init__(self) -> None:
        if not (TAIL_RANGE[0] <= self.lower <= TAIL_RANGE[1]):
            raise ValueError(f"a lower tail factor lies in {TAIL_RANGE}, got {self.lower}")
        if not (TAIL_RANGE[0] <= self.upper <= TAIL_RANGE[1]):
            raise ValueError(f"an upper tail factor lies in {TAIL_RANGE}, got {self.upper}")

    def apply(self, grid: np.ndarray) -> np.ndarray:
        """``grid`` (centred: its median column 0) with each half multiplied by its factor."""
        return np.where(grid > 0, grid * self.upper, grid * self.lower)


@dataclass(frozen=True, slots=True)
class Calibration:
    """Per-horizon log-residual quantiles ``[12, 101]`` and how many residuals each had."""

    residual_quantiles: np.ndarray
    counts: tuple[int, ...]
    origins: int
    method: str = "backtest"
    #: the error scale residuals were normalised by (None: pooled, one width for all)
    spread: Spread | None = None
    #: per-month log location of the forecast distribution (horizon ``h``: ``h × drift``);
    #: with a drift the grid is centred on 0, without one it keeps its own median
    drift: float = 0.0
    #: the factors the grid's lower and upper halves were multiplied by (``fit_tails``);
    #: None: one widening for both
    tails: Tails | None = None


@dataclass(frozen=True, slots=True)
class Backtest:
    """A rolling backtest: per origin what each forecast read, and its residuals."""

    #: per origin, the ``[rows, lookback]`` histories forecast from ...
    windows: list[np.ndarray]
    #: ... and their ``[rows, h]`` log residuals (NaN where the month was unobserved)
    errors: list[np.ndarray]

    @property
    def residuals(self) -> list[np.ndarray]:
        """Per horizon (``[12]`` arrays), every finite log residual ``log(actual / forecast)``."""
        return by_horizon(self.errors)


def by_horizon(errors: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The finite entries of each ``[rows, h]`` matrix's column k, pooled per horizon k."""
    per_h: list[list[np.ndarray]] = [[] for _ in range(MAX_HORIZON)]
    for error in errors:
        for k in range(error.shape[1]):
            column = error[:, k]
            per_h[k].append(column[np.isfinite(column)])
    return [np.concatenate(r) if r else np.empty(0) for r in per_h]


def run_backtest(
    panel: np.ndarray,
    make_forecaster: Callable[[], Forecaster],
    lookback: int,
    n_origins: int = MAX_HORIZON,
    places: Sequence[Place] | None = None,
    max_series: int | None = None,
    seed: int = 0,
) -> Backtest:
    """Fit a copy on ``panel[:, :T−n]`` and forecast from each of the last ``n`` origins.

    ``places`` (one per panel row) for a model that reads them; after fitting, the copy
    observes the whole panel's market signals, which at each origin are what was known
    then (they are causal), never the targets it is scored on. ``max_series``: past it,
    only a seeded sample of that many series is forecast and scored (the copy's own fit
    is capped by its ``max_series``), so the residuals' memory and time stay bounded.
    """
    values = check_panel(panel)
    t = values.shape[1]
    picked = sample_series(values.shape[0], max_series, seed)
    scored = np.ones(values.shape[0], dtype=bool)
    if picked is not None:
        scored[:] = False
        scored[picked] = True
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
    windows: list[np.ndarray] = []
    errors: list[np.ndarray] = []
    for origin in range(cut - 1, t - 1):  # last history column the forecast reads
        h = min(MAX_HORIZON, t - 1 - origin)
        hist = values[:, : origin + 1]
        recent = np.isfinite(hist[:, -WINDOW:]).sum(axis=1)
        actual = values[:, origin + 1 : origin + 1 + h]
        rows = scored & (recent >= MIN_OBS) & np.isfinite(actual).any(axis=1)
        if not rows.any():
            continue
        pred = model.predict(
            hist[rows], h, None if places is None else [places[i] for i in np.flatnonzero(rows)]
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            resid = np.log(actual[rows] / pred)
        windows.append(hist[rows][:, -lookback:])
        errors.append(resid)
    return Backtest(windows, errors)


def recent_drift(residuals: list[np.ndarray]) -> float:
    """Per-month bias: least-squares slope through 0 of median residual vs horizon.

    ``residuals`` per horizon from a short backtest (``DRIFT_ORIGINS`` origins); horizons
    with fewer than ``MIN_RESIDUALS`` are skipped, and none left means no drift.
    """
    kept = [(k + 1, np.median(r)) for k, r in enumerate(residuals) if r.size >= MIN_RESIDUALS]
    if not kept:
        return 0.0
    h, med = (np.array(v, dtype=float) for v in zip(*kept, strict=True))
    return float(np.clip((h * med).sum() / (h * h).sum(), -MAX_DRIFT, MAX_DRIFT))


def calibrate(
    residuals: list[np.ndarray], origins: int = MAX_HORIZON, centre: bool = False
) -> Calibration:
    """The quantile grid per horizon; sparse horizons borrow from their neighbours.

    ``centre``: each horizon's quantiles minus their median (the location is set apart).
    """
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
        if centre:
            grid[k] -= np.median(pool)
    return Calibration(grid, tuple(counts), origins)


def conformal_quantiles(
    panel: np.ndarray,
    make_forecaster: Callable[[], Forecaster],
    lookback: int,
    n_origins: int = MAX_HORIZON,
    places: Sequence[Place] | None = None,
    adaptive: bool = True,
    make_drift_copy: Callable[[], Forecaster] | None = None,
    max_series: int | None = None,
    seed: int = 0,
    tails: bool = False,
) -> Calibration:
    """Backtest, then calibrate: the residual grid a store model's intervals use.

    ``adaptive``: residuals are normalised by each series' error scale
    (``foretab.forecast.spread``) first, so intervals widen with a series' own noise.
    ``make_drift_copy``: a second backtest over the last ``DRIFT_ORIGINS`` months sets
    the location (``recent_drift``) and the grid is centred; without it the grid keeps
    its own median (plain split conformal). ``max_series``, ``seed``: ``run_backtest``'s.
    ``tails`` (with ``adaptive`` and a drift copy): the grid's lower and upper halves are
    multiplied by factors fitted on the later origins (``fit_tails``).
    """
    backtest = run_backtest(panel, make_forecaster, lookback, n_origins, places, max_series, seed)
    origins = min(n_origins, panel.shape[1] - MIN_TRAIN)
    centre = make_drift_copy is not None
    if not adaptive:
        cal = calibrate(backtest.residuals, origins, centre)
    else:
        cal = calibrate_adaptive(backtest, origins, centre, tails)
    if make_drift_copy is None:
        return cal
    recent = run_backtest(panel, make_drift_copy, lookback, DRIFT_ORIGINS, places, max_series, seed)
    return replace(cal, drift=recent_drift(recent.residuals))


def calibrate_adaptive(
    backtest: Backtest, origins: int = MAX_HORIZON, centre: bool = False, tails: bool = False
) -> Calibration:
    """Quantiles of residuals divided by their series' scale, and the scale model.

    ``tails`` (a centred grid only): each half of the grid is multiplied by its factor
    from ``fit_tails``; too few origins or residuals to fit them leave the grid as it is.
    """
    if tails and not centre:
        raise ValueError("tail factors are fitted about a centred grid (one with a drift copy)")
    spread = fit_spread(backtest.windows, backtest.errors)
    normalised = [
        error / spread.scale(window)[:, None]
        for window, error in zip(backtest.windows, backtest.errors, strict=True)
    ]
    cal = calibrate(by_horizon(normalised), origins, centre)
    cal = replace(
        cal,
        residual_quantiles=cal.residual_quantiles * WIDENING,
        method=PER_SERIES,
        spread=spread,
    )
    fitted = fit_tails(backtest) if tails else None
    if fitted is None:
        return cal
    return replace(cal, residual_quantiles=fitted.apply(cal.residual_quantiles), tails=fitted)


def fit_tails(backtest: Backtest) -> Tails | None:
    """Factors on the lower and upper halves of the grid, scored on held-out origins.

    The earlier ``TAIL_FIT_SHARE`` of the origins fit a provisional grid as the store's
    is fitted (``calibrate_adaptive``, centred and widened); the later origins' residuals,
    normalised by that fit's scale and each horizon centred on its own median (the
    location is the drift's, not a tail's), score it. Each factor minimises their quantile
    loss summed over the grid's levels on its side of the median (that half of the CRPS),
    so a side whose held-out residuals fall inside its quantiles too often is pulled in.
    None when a part has no origin or the later one has fewer than ``MIN_RESIDUALS``.
    """
    n = len(backtest.windows)
    split = round(n * TAIL_FIT_SHARE)
    if not 1 <= split < n:
        return None
    early = Backtest(backtest.windows[:split], backtest.errors[:split])
    provisional = calibrate_adaptive(early, split, centre=True)
    assert provisional.spread is not None
    late = by_horizon(
        [
            error / provisional.spread.scale(window)[:, None]
            for window, error in zip(backtest.windows[split:], backtest.errors[split:], strict=True)
        ]
    )
    scored = [
        (np.sort(z - np.median(z)), provisional.residual_quantiles[k])
        for k, z in enumerate(late)
        if z.size
    ]
    if sum(z.size for z, _ in scored) < MIN_RESIDUALS:
        return None
    middle = GRID.size // 2
    upper = _tail_factor(scored, np.arange(middle + 1, GRID.size - 1))
    lower = _tail_factor(scored, np.arange(1, middle))
    return Tails(lower, upper)


def _tail_factor(scored: list[tuple[np.ndarray, np.ndarray]], levels: np.ndarray) -> float:
    """The ``k`` minimising ``Σ ρ_p(z − k·q_p)`` over horizons, residuals and ``levels``.

    ``scored``: per horizon the sorted held-out residuals ``z`` and the grid ``q``. The
    loss is convex in ``k``; its slope ``Σ q_p (F(k·q_p) − p)`` (``F`` the residuals'
    empirical distribution) rises with ``k``, so bisection finds where it crosses 0.
    """
    p = GRID[levels]
    if not any(np.any(q[levels] != 0) for _, q in scored):
        return 1.0  # a flat half: nothing to scale

    def slope(k: float) -> float:
        total = 0.0
        for z, q in scored:
            ends = k * q[levels]
            below = np.searchsorted(z, ends, side="right") / z.size
            total += z.size * float(np.sum(q[levels] * (below - p)))
        return total

    lo, hi = TAIL_RANGE
    for _ in range(40):  # (4 − 0.25) / 2^40: far below any difference that shows
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if slope(mid) > 0 else (mid, hi)
    return round(0.5 * (lo + hi), 4)
