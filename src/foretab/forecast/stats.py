"""statsforecast's AutoETS / AutoTheta, on linearly imputed input.

Fitted per series, in statsforecast's batch mode on all cores.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np

from foretab.forecast.base import Forecaster, last_observed
from foretab.forecast.impute import interpolate_linear


def _trimmed(row: np.ndarray) -> np.ndarray:
    """The series from its first observation on, gaps filled, flat after the last one."""
    ok = np.flatnonzero(np.isfinite(row))
    filled = interpolate_linear(row[None, ok[0] :])[0]
    return filled


class _StatsForecaster(Forecaster):
    """statsforecast in batch mode; short series (fewer than ``min_obs``) stay naive."""

    min_obs = 4
    #: Below this many series one process forecasts them: a pool costs more than it saves.
    MIN_SERIES_PER_POOL = 200

    def __init__(self, seed: int = 0, n_jobs: int = -1) -> None:
        super().__init__(seed)
        #: statsforecast's worker processes (-1: one per core)
        self.n_jobs = n_jobs

    def _model(self) -> object:
        raise NotImplementedError

    def _pool_pays(self, n_series: int) -> bool:
        """Whether statsforecast may fork worker processes for ``n_series`` series.

        Only for enough series to pay for the pool, and only from a process with no
        other thread: statsforecast's pool forks, and a fork copies any lock another
        thread holds (a server's engine threads, a progress bar's refresh), held forever
        in the child.
        """
        return (
            self.n_jobs != 1
            and n_series >= self.MIN_SERIES_PER_POOL
            and threading.active_count() == 1
        )

    def _predict(self, history: np.ndarray, h: int) -> np.ndarray:
        import pandas as pd
        from statsforecast import StatsForecast
        from statsforecast.models import Naive

        level, _ = last_observed(history)
        out = np.repeat(level[:, None], h, axis=1)
        rows = np.flatnonzero(np.isfinite(history).sum(axis=1) >= self.min_obs)
        if not len(rows):
            return out
        series = [_trimmed(history[i]) for i in rows]
        frame = pd.DataFrame(
            {
                "unique_id": np.repeat(np.arange(len(rows)), [len(y) for y in series]),
                "ds": np.concatenate([np.arange(len(y)) for y in series]),
                "y": np.concatenate(series),
            }
        )
        batch = StatsForecast(
            models=[self._model()],
            freq=1,
            n_jobs=self.n_jobs if self._pool_pays(len(rows)) else 1,
            # statsforecast refuses short or degenerate series ("tiny datasets"): those
            # get the last value, as the rows it never sees.
            fallback_model=Naive(),
        )
        # Flat stretches make statsforecast divide by zero inside its fit; such a row's
        # forecast is then non-finite and stays naive below. Worker processes are forked
        # inside this context, so they ignore the warnings too.
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            forecast = batch.forecast(df=frame, h=h)
        forecast = forecast.sort_values(["unique_id", "ds"])
        values = forecast.drop(columns=["unique_id", "ds"]).to_numpy()[:, 0].reshape(-1, h)
        ok = np.isfinite(values).all(axis=1)
        out[rows[ok]] = values[ok]
        return out


class AutoETSForecaster(_StatsForecaster):
    """Exponential smoothing with automatic model selection (no seasonality: 24 months)."""

    alias = "autoets"

    def _model(self) -> object:
        from statsforecast.models import AutoETS

        return AutoETS(season_length=1)


class AutoThetaForecaster(_StatsForecaster):
    """The Theta method with automatic variant selection."""

    alias = "autotheta"

    def _model(self) -> object:
        from statsforecast.models import AutoTheta

        return AutoTheta(season_length=1)
