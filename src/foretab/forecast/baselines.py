"""Reference forecasters: the last observed value, and that level times a learned drift."""

from __future__ import annotations

from typing import Self

import numpy as np

from foretab.forecast.base import MAX_HORIZON, Forecaster, ValidationSplit, last_observed
from foretab.forecast.windows import cut_windows


class NaiveForecaster(Forecaster):
    """Persistence: every future month equals the last observed price."""

    alias = "naive"

    def _predict(self, history: np.ndarray, h: int) -> np.ndarray:
        level, _ = last_observed(history)
        return np.repeat(level[:, None], h, axis=1)


def robust_level(history: np.ndarray, k: int = 3) -> np.ndarray:
    """Median of the last ``k`` observations: one odd month should not set the level."""
    n = history.shape[0]
    out = np.full(n, np.nan)
    observed = np.isfinite(history)
    for i in range(n):
        vals = history[i, observed[i]]
        if vals.size:
            out[i] = np.median(vals[-k:])
    return out


class DriftForecaster(Forecaster):
    """Level (median of the last 3 observations) × a learned per-horizon drift.

    The drift is the median ratio target / level over the training windows.
    """

    alias = "drift"

    def __init__(self, seed: int = 0, lookback: int = 24) -> None:
        super().__init__(seed)
        self.lookback = lookback
        self.drift = np.ones(MAX_HORIZON)

    def fit(self, panel: np.ndarray, val: ValidationSplit | None = None) -> Self:
        del val
        win = cut_windows(np.asarray(panel, dtype=float), self.lookback)
        level = robust_level(win.history)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = win.target / level[:, None]
        for h in range(MAX_HORIZON):
            col = ratio[:, h]
            col = col[np.isfinite(col)]
            self.drift[h] = float(np.median(col)) if col.size else 1.0
        return self

    def _predict(self, history: np.ndarray, h: int) -> np.ndarray:
        return robust_level(history)[:, None] * self.drift[None, :h]
