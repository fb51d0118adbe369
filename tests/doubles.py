"""Stage doubles shared by tests: real components in a cheaper configuration."""

from __future__ import annotations

import numpy as np

from foretab.forecast.registry import get_forecaster


class NaiveStoreModel:
    """The naive forecaster as a store model (forecast = last observed value).

    For tests that exercise the model stage without training LightGBM.
    """

    model = "naive"
    lookback = 24

    def __init__(self) -> None:
        self._forecaster = get_forecaster("naive")

    def predict(self, history: np.ndarray, h: int) -> np.ndarray:
        return self._forecaster.predict(history, h)

    def predict_quantiles(
        self, history: np.ndarray, h: int, quantiles: tuple[float, ...]
    ) -> np.ndarray:
        return self._forecaster.predict_quantiles(history, h, quantiles)


class SpreadStoreModel(NaiveStoreModel):
    """The naive forecast with a log-normal spread of ``sigma × √h`` around it.

    For tests of answers that need a forecast distribution (probabilities) without
    training LightGBM: the spread is a stated model, not a fitted one.
    """

    model = "naive-spread"

    def __init__(self, sigma: float = 0.03) -> None:
        super().__init__()
        self.sigma = sigma

    def predict_quantiles(
        self, history: np.ndarray, h: int, quantiles: tuple[float, ...]
    ) -> np.ndarray:
        from scipy.special import ndtri

        point = self.predict(history, h)  # [n, h]
        width = self.sigma * np.sqrt(np.arange(1, h + 1))  # [h]
        z = ndtri(np.asarray(quantiles, dtype=float))  # [q]
        return point[:, :, None] * np.exp(width[None, :, None] * z[None, None, :])
