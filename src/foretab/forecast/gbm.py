"""A global LightGBM forecaster on scale-free windows (foretab's default).

One model for all horizons: each training row is (window features, horizon) and the
target is ``log(y[t+h] / level)``; the L1 objective on that log ratio is close to the MRE
the benchmark reports.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Self

# OpenMP threads that spin while waiting burn the cores other work needs: on the shared
# 2-core machine a busy-waiting fit took 95 s of CPU against 17 s passive (same trees).
# Set before LightGBM loads the OpenMP runtime; an explicit setting wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import lightgbm as lgb
import numpy as np

from foretab.errors import ForecastError
from foretab.forecast.base import (
    MAX_HORIZON,
    Forecaster,
    Place,
    ValidationSplit,
    check_panel,
)
from foretab.forecast.cluster import active_trainer
from foretab.forecast.features import window_features
from foretab.forecast.market import Market, market_features
from foretab.forecast.spread import Spread
from foretab.forecast.windows import cut_windows, history_ends, sample_series

if TYPE_CHECKING:
    from foretab.forecast.calibrate import Tails


def _rows(
    history: np.ndarray,
    target: np.ndarray | None,
    horizon: int,
    end: np.ndarray | None = None,
    market: tuple[Market, np.ndarray, np.ndarray] | None = None,
    share: tuple[float, int] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Expand windows to one row per horizon: ``(X, y_log_ratio, level, row_window)``.

    ``end`` (the calendar column a window ends at) becomes a feature when given;
    ``market`` = ``(market, members [m, 3], end [m])`` adds the windows' district, city
    and corpus signals (``foretab.forecast.market``). The horizon is the last column.
    With ``target``, only rows with an observed target are kept, and ``share`` =
    ``(fraction, seed)`` keeps a random share of those; rows are chosen before the
    matrix is built (on the corpus it has ~1M rows, most of them dropped).
    """
    feats, level, _ = window_features(history)
    if end is not None:
        feats = np.concatenate([feats, np.asarray(end, dtype=float)[:, None]], axis=1)
    n = feats.shape[0]
    seasonal = np.empty((n * horizon, 0))
    if market is not None:
        static, path, _ = market_features(market[0], market[1], market[2], level, horizon)
        feats = np.concatenate([feats, static], axis=1)
        seasonal = path.reshape(n * horizon, -1)
    win = np.repeat(np.arange(n), horizon)
    lev = np.repeat(level, horizon)
    hs = np.tile(np.arange(1, horizon + 1, dtype=float), n)
    y = np.full(len(win), np.nan)
    if target is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            y = np.log(target[:, :horizon].reshape(-1) / lev)
        rows = np.flatnonzero(np.isfinite(y) & np.isfinite(lev))
        if share is not None and share[0] < 1.0:
            rows = rows[np.random.default_rng(share[1]).random(len(rows)) < share[0]]
        win, lev, hs, y, seasonal = win[rows], lev[rows], hs[rows], y[rows], seasonal[rows]
    x = np.concatenate([feats[win], seasonal, hs[:, None]], axis=1)
    return x, y, lev, win


def calendar_column(lookback: int) -> int:
    """The index of the window-end (calendar) column in ``_rows``' feature matrix."""
    return window_features(np.ones((1, lookback)))[0].shape[1]


def _trained(
    params: dict[str, object],
    train: lgb.Dataset,
    rounds: int,
    valid_sets: list[lgb.Dataset],
    callbacks: list[Callable[..., None]],
    early_stopping: bool,
) -> lgb.Booster:
    """``lgb.train``; after early stopping, the booster cut at its best iteration."""
    on_cluster = active_trainer()
    if on_cluster is not None and not valid_sets:  # `foretab train --cluster`
        return on_cluster(params, train, rounds)
    booster = lgb.train(
        params, train, num_boost_round=rounds, valid_sets=valid_sets, callbacks=callbacks
    )
    if early_stopping:
        best = booster.best_iteration or booster.num_trees()
        booster = lgb.Booster(model_str=booster.model_to_string(num_iteration=best))
    return booster


#: Forecasts of at most this many series are remembered for the next call (a question's).
MEMO_ROWS = 64
#: Below this many feature rows, predict on one thread.
SMALL_BATCH_ROWS = 2_000


class LightGBMForecaster(Forecaster):
    """Global gradient-boosted trees over every window of the training panel."""

    alias = "lgbm"
    supports_quantiles = True

    def __init__(
        self,
        seed: int = 0,
        lookback: int = 24,
        n_estimators: int = 3000,
        learning_rate: float = 0.05,
        num_leaves: int = 63,
        objective: str = "l1",
        calendar: bool = True,
        min_end: int = 5,
        recency_halflife: float | None = None,
        level_weight: float = 0.0,
        n_jobs: int = 2,
        verbose: bool = False,
        n_seeds: int = 1,
        fast_seeds: int | None = None,
        fixed_rounds: int = 250,
        fixed_learning_rate: float = 0.1,
        market: bool = False,
        row_fraction: float = 1.0,
        fixed_row_fraction: float = 1.0,
        calendar_free_weight: float = 0.0,
    ) -> None:
        super().__init__(seed)
        self.lookback = lookback
        self.calendar = calendar
        # District / city / corpus signals (``foretab.forecast.market``), from the panel
        # fitted on (or ``observe``d since): the model then reads each series' place.
        self.uses_places = market
        # Rows of one window at neighbouring horizons are nearly copies of each other: a
        # random share of the (window, horizon) rows trains almost the same trees faster.
        self.row_fraction = row_fraction
        # Without a validation split (the store forecaster), at most this share: half the
        # rows score the same on the corpus hold-out for a quarter less CPU in
        # `foretab train` (docs/experiments.md).
        self.fixed_row_fraction = fixed_row_fraction
        self.market: Market | None = None
        self.min_end = min_end
        self.recency_halflife = recency_halflife
        # Rows weighted by level ** level_weight: with 1, the L1 loss on the log ratio
        # approximates the absolute error in yuan/m² (the benchmarks' MAE), which the
        # expensive projects dominate; 0 weights every row alike (close to the MRE).
        self.level_weight = level_weight
        self.params = {
            "objective": objective,
            "learning_rate": learning_rate,
            "num_leaves": num_leaves,
            "min_data_in_leaf": 100,
            "feature_fraction": 0.8,
            "bagging_fraction": 0.8,
            "bagging_freq": 1,
            "lambda_l2": 1.0,
            "max_bin": 127,
            "seed": seed,
            "deterministic": True,
            # Row-wise and column-wise histograms build the same trees here; row-wise
            # took less CPU on the store's 552k rows x 55 features on 2 cores.
            "force_row_wise": True,
            "num_threads": n_jobs,
            "verbose": -1,
        }
        self.n_estimators = n_estimators
        # Without a validation split (the store forecaster): a fixed budget at a faster
        # rate, near what early stopping picks on val at 0.1, so `foretab train` stays
        # as fast as before. With val, 0.05 + early stopping scored better on an inner
        # split of the train series (docs/experiments.md).
        self.default_rounds = fixed_rounds
        self.default_learning_rate = fixed_learning_rate
        self.verbose = verbose
        # Several boosters that differ only in their bagging / feature-sampling seeds,
        # averaged on the log-ratio scale: variance reduction without new information.
        self.n_seeds = max(1, n_seeds)
        # Without a validation split (the store forecaster) fewer members keep
        # `foretab train` fast; ``None`` means the same count as with one.
        self.fast_seeds = self.n_seeds if fast_seeds is None else max(1, fast_seeds)
        self.boosters: list[lgb.Booster] = []
        # A second member fitted on the same rows with the calendar column blanked, its
        # log ratio blended in with this weight (0: none; needs ``calendar``). With the
        # calendar the trees carry the latest windows' market move at each horizon
        # forward (for horizon h they read the windows that ended h months before R);
        # a member without it leans on the market signals and the series' own shape, a
        # different bias: docs/benchmarks/selection.md, "A calendar-free member".
        self.calendar_free_weight = calendar_free_weight if calendar else 0.0
        self.free_boosters: list[lgb.Booster] = []
        self._last: tuple[object, np.ndarray, np.ndarray] | None = None
        self.residual_quantiles = np.zeros((MAX_HORIZON, 101))
        # Set by a normalised backtest calibration: ``residual_quantiles`` are then in
        # units of each series' error scale (``foretab.forecast.spread``).
        self.spread: Spread | None = None
        # Per-month log location of the forecast distribution (``calibrate.recent_drift``):
        # horizon h's point forecast and quantiles move by h x this; 0 with an uncentred
        # (plain) grid, and for a model fitted with a validation split.
        self.location_drift = 0.0
        # The factors the grid's lower and upper halves were multiplied by
        # (``calibrate.fit_tails``; already in ``residual_quantiles``), kept for the record.
        self.tails: Tails | None = None
        # Without a validation split, ``fit`` measures residuals on its own training rows
        # (100k rows through the trees); the store turns that off when a backtest will
        # replace them (``foretab.forecast.calibrate``), and for the backtest's own copy.
        self.in_sample_residuals = True
        # At most this many series (a seeded sample) give training windows; the market
        # signals still come from every series. None: all (the store sets
        # ``windows.MAX_FIT_SERIES``, which bounds a fit's memory at 100x the corpus).
        self.max_series: int | None = None
        self.fit_seconds = 0.0

    def restore(
        self,
        boosters: list[lgb.Booster],
        residual_quantiles: np.ndarray,
        market: Market | None = None,
        spread: Spread | None = None,
        location_drift: float = 0.0,
        free_boosters: Sequence[lgb.Booster] = (),
        tails: Tails | None = None,
    ) -> Self:
        """Set the fitted state read back from a data-only model file."""
        self.boosters = list(boosters)
        self.free_boosters = list(free_boosters)
        self.residual_quantiles = np.asarray(residual_quantiles, dtype=float)
        self.spread = spread
        self.location_drift = float(location_drift)
        self.tails = tails
        self.market = market
        self._last = None
        return self

    def observe(self, panel: np.ndarray, places: Sequence[Place] | None = None) -> None:
        if self.uses_places:
            self.market = Market.build(check_panel(panel), places)
            self._last = None

    def _market_rows(
        self, n: int, end: np.ndarray, places: Sequence[Place] | None
    ) -> tuple[Market, np.ndarray, np.ndarray] | None:
        """The ``market`` argument of ``_rows`` for ``n`` series ending at ``end``."""
        if self.market is None:
            return None
        return self.market, self.market.members(places, n), end

    def _fit_history(self, history: np.ndarray) -> np.ndarray:
        """Left-pad or trim to the model's lookback."""
        n, t = history.shape
        if t >= self.lookback:
            return history[:, t - self.lookback :]
        return np.concatenate([np.full((n, self.lookback - t), np.nan), history], axis=1)

    def _end(self, history: np.ndarray) -> np.ndarray | None:
        """The calendar feature's column for each history (None without the calendar)."""
        return history_ends(history) if self.calendar else None

    def fit(
        self,
        panel: np.ndarray,
        val: ValidationSplit | None = None,
        places: Sequence[Place] | None = None,
    ) -> Self:
        """Fit on every window of ``panel``; ``places`` (one per row) for the market signals."""
        start = time.perf_counter()
        panel = np.asarray(panel, dtype=float)
        # Sampled before any window is cut: the windows and their feature rows are most
        # of a fit's memory.
        picked = sample_series(panel.shape[0], self.max_series, self.seed)
        fit_panel = panel if picked is None else panel[picked]
        win = cut_windows(fit_panel, self.lookback, min_end=self.min_end)
        self.market = None
        self._last = None
        market = None
        if self.uses_places:
            self.market = Market.build(check_panel(panel), places)
            members = self.market.members(places, panel.shape[0])
            if picked is not None:
                members = members[picked]
            market = (self.market, members[win.row], win.end)
        fraction = (
            self.row_fraction
            if val is not None
            else min(self.row_fraction, self.fixed_row_fraction)
        )
        x, y, lev, rw = _rows(
            win.history,
            win.target,
            MAX_HORIZON,
            win.end if self.calendar else None,
            market,
            (fraction, self.seed),
        )
        self.rows_seconds = time.perf_counter() - start
        self.n_rows = len(y)
        weight = None
        if self.recency_halflife:
            last_end = panel.shape[1] - 2
            weight = 0.5 ** ((last_end - win.end[rw]) / self.recency_halflife)
        if self.level_weight:
            by_level = (lev / np.median(lev)) ** self.level_weight
            weight = by_level if weight is None else weight * by_level
        train = lgb.Dataset(x, y, weight=weight, free_raw_data=False)
        valid_sets = []
        callbacks = []
        vx = vy = None
        # Without a validation split, a fixed budget near what early stopping picks on val.
        rounds = self.n_estimators if val is not None else self.default_rounds
        if val is not None:
            vh = self._fit_history(val.history)
            vend = self._end(val.history)
            n_val = val.history.shape[0]
            vmarket = self._market_rows(n_val, history_ends(val.history), None)
            vx, vy, vlev, _ = _rows(vh, val.target, val.target.shape[1], vend, vmarket)
            vweight = None
            if self.level_weight:
                vweight = (vlev / np.median(lev)) ** self.level_weight
            valid_sets = [lgb.Dataset(vx, vy, weight=vweight, reference=train)]
            callbacks = [lgb.early_stopping(50, verbose=False)]
        members = self.n_seeds if val is not None else self.fast_seeds
        if self.on_progress is not None:
            report = self.on_progress
            total = rounds * members
            callbacks = [
                *callbacks,
                lambda env: report(len(self.boosters) * rounds + env.iteration + 1, total),
            ]
        self.boosters = []
        for k in range(members):
            params = self._member_params(val is not None, k)
            self.boosters.append(
                _trained(params, train, rounds, valid_sets, callbacks, val is not None)
            )
        self.free_boosters = []
        if self.calendar_free_weight > 0:
            self.free_boosters = [
                self._fit_calendar_free(x, y, weight, vx, vy, rounds, val is not None)
            ]
        if val is not None or self.in_sample_residuals:
            self._fit_residuals(vx, vy, x, y, val is not None)
        self.fit_seconds = time.perf_counter() - start
        return self

    def _fit_calendar_free(
        self,
        x: np.ndarray,
        y: np.ndarray,
        weight: np.ndarray | None,
        vx: np.ndarray | None,
        vy: np.ndarray | None,
        rounds: int,
        early_stopping: bool,
    ) -> lgb.Booster:
        """The calendar-free member: the same rows, the window-end column all missing.

        A column that is missing everywhere is never split on, so the member reads the
        same feature rows as the others at prediction time and ignores the calendar.
        The column is blanked in place and put back (the matrix is the largest object
        of a fit; a copy would double it).
        """
        col = calendar_column(self.lookback)
        saved = x[:, col].copy()
        vsaved = None if vx is None else vx[:, col].copy()
        try:
            x[:, col] = np.nan
            train = lgb.Dataset(x, y, weight=weight)
            valid_sets = []
            if vx is not None and vy is not None:
                vx[:, col] = np.nan
                valid_sets = [lgb.Dataset(vx, vy, reference=train)]
            stop = [lgb.early_stopping(50, verbose=False)] if early_stopping else []
            params = self._member_params(early_stopping)
            return _trained(params, train, rounds, valid_sets, stop, early_stopping)
        finally:
            x[:, col] = saved
            if vx is not None and vsaved is not None:
                vx[:, col] = vsaved

    def _member_params(self, validated: bool, member: int = 0) -> dict[str, object]:
        """One booster's parameters: without a validation split, the fixed-budget rate."""
        params = dict(self.params)
        if not validated:
            params["learning_rate"] = self.default_learning_rate
        if member:  # member 0 is the single-model forecaster, seeds untouched
            params["bagging_seed"] = self.seed * 1000 + member
            params["feature_fraction_seed"] = self.seed * 1000 + member
        return params

    def _fit_residuals(
        self,
        vx: np.ndarray | None,
        vy: np.ndarray | None,
        x: np.ndarray,
        y: np.ndarray,
        held_out: bool,
    ) -> None:
        """Per-horizon quantiles of log residuals, for prediction intervals.

        Held-out (validation) residuals when there are some; otherwise in-sample ones on
        a subsample, which makes the intervals somewhat too narrow.
        """
        if held_out and vx is not None and vy is not None:
            rx, ry = vx, vy
        else:
            pick = np.random.default_rng(self.seed).permutation(len(y))[:100_000]
            rx, ry = x[pick], y[pick]
        resid = ry - self._raw(rx)
        horizon = rx[:, -1].astype(int)
        grid = np.linspace(0.0, 1.0, 101)
        self.residual_quantiles = np.zeros((MAX_HORIZON, grid.size))
        self.spread = None  # pooled residuals: one width for every series
        self.location_drift = 0.0  # the residuals' own median is the location
        self.tails = None
        for h in range(1, MAX_HORIZON + 1):
            r = resid[horizon == h]
            if r.size == 0:
                r = resid
            self.residual_quantiles[h - 1] = np.quantile(r, grid)

    def _raw(self, x: np.ndarray) -> np.ndarray:
        """The members' mean predicted log ratio for feature rows ``x``."""
        # A question forecasts a handful of rows: starting OpenMP threads then costs more
        # than the trees (16 ms vs 0.3 ms per call on a busy 2-core machine).
        threads = 1 if len(x) < SMALL_BATCH_ROWS else self.params["num_threads"]
        main = np.mean([b.predict(x, num_threads=threads) for b in self.boosters], axis=0)
        if not self.free_boosters:
            return main
        free = np.mean([b.predict(x, num_threads=threads) for b in self.free_boosters], axis=0)
        w = self.calendar_free_weight
        return (1.0 - w) * main + w * free

    def _log_ratio(
        self, history: np.ndarray, h: int, places: Sequence[Place] | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        if not self.boosters:
            raise ForecastError(
                "the LightGBM forecaster is not fitted", suggestions=("call fit(panel) first",)
            )
        # A question asks for the point forecast, then the quantiles, of the same series:
        # the second call reuses the first's features and trees (one entry, one tuple
        # assignment, so engines sharing a model at worst recompute).
        key = (history.shape, history.tobytes(), h, None if places is None else tuple(places))
        last = self._last
        if last is not None and last[0] == key:
            return last[1], last[2]
        hist = self._fit_history(history)
        n = history.shape[0]
        market = self._market_rows(n, history_ends(history), places)
        x, _, lev, _ = _rows(hist, None, h, self._end(history), market)
        pred = self._raw(x).reshape(-1, h)
        level = lev.reshape(-1, h)
        if n <= MEMO_ROWS:
            self._last = (key, pred, level)
        return pred, level

    def _predict(self, history: np.ndarray, h: int) -> np.ndarray:
        return self._predict_placed(history, h, None)

    def _predict_placed(
        self, history: np.ndarray, h: int, places: Sequence[Place] | None
    ) -> np.ndarray:
        pred, lev = self._log_ratio(history, h, places)
        # The recent drift moves the point with its distribution (it stays the median):
        # lower errors on the corpus hold-out and QA val (docs/experiments.md).
        return lev * np.exp(pred + self._drift_path(h)[None, :])

    def _drift_path(self, h: int) -> np.ndarray:
        """``[h]``: the log location of horizons 1..h, ``h × location_drift``."""
        return self.location_drift * np.arange(1, h + 1, dtype=float)

    def predict_quantiles(
        self,
        history: np.ndarray,
        h: int,
        quantiles: tuple[float, ...],
        places: Sequence[Place] | None = None,
    ) -> np.ndarray:
        """``[n, h, q]``: the point forecast shifted by residual quantiles per horizon.

        With a ``spread`` the quantiles are normalised: each series' shift is scaled by
        its own error scale (from the lookback window it is forecast from).
        """
        q = np.asarray(quantiles, dtype=float)
        if np.any((q <= 0) | (q >= 1)):
            raise ForecastError(
                f"quantiles must lie strictly between 0 and 1, got {quantiles}",
                suggestions=("e.g. quantiles=(0.1, 0.5, 0.9)",),
            )
        pred, lev = self._log_ratio(check_panel(history), h, places)
        grid = np.linspace(0.0, 1.0, 101)
        shift = np.stack(
            [np.interp(q, grid, self.residual_quantiles[k]) for k in range(h)]
        )  # [h, q]
        shifts = shift[None, :, :]
        if self.spread is not None:
            window = check_panel(history)[:, -self.lookback :]
            shifts = shifts * self.spread.scale(window)[:, None, None]
        location = self._drift_path(h)[None, :, None]
        return lev[:, :, None] * np.exp(pred[:, :, None] + location + shifts)
