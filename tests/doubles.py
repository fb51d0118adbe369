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
