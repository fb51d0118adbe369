"""statsforecast's AutoETS / AutoTheta, fitted per series on linearly imputed input."""

from __future__ import annotations

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
    """Shared loop: short series (fewer than ``min_obs`` observations) fall back to naive."""

    min_obs = 4

    def _model(self) -> object:
        raise NotImplementedError

    def _predict(self, history: np.ndarray, h: int) -> np.ndarray:
        level, _ = last_observed(history)
        out = np.repeat(level[:, None], h, axis=1)
        counts = np.isfinite(history).sum(axis=1)
        for i in np.flatnonzero(counts >= self.min_obs):
            y = _trimmed(history[i])
            try:
                # Flat stretches make statsforecast divide by zero inside its fit; the
                # result is then non-finite and replaced by the naive row below.
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore", RuntimeWarning)
                    fc = self._model().forecast(y=y, h=h)["mean"]  # type: ignore[attr-defined]
            except (ValueError, np.linalg.LinAlgError, ZeroDivisionError, NotImplementedError):
                # statsforecast refuses short or degenerate series ("tiny datasets"):
                # keep the naive row.
                continue
            if np.all(np.isfinite(fc)):
                out[i] = fc
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
