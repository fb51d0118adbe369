"""Imputation and forecasting of monthly price series (DESIGN §6).

Models see numpy arrays only (``[n_series, n_months]``, NaN = no data) and are looked up
by name; :mod:`foretab.forecast.store` fits and persists one for a store.
"""

from foretab.forecast.base import MAX_HORIZON, Forecaster, Imputer, ValidationSplit
from foretab.forecast.registry import (
    DEFAULT_FORECASTER,
    DEFAULT_IMPUTER,
    FORECASTERS,
    IMPUTERS,
    NEURAL,
    get_forecaster,
    get_imputer,
)

__all__ = [
    "DEFAULT_FORECASTER",
    "DEFAULT_IMPUTER",
    "FORECASTERS",
    "IMPUTERS",
    "MAX_HORIZON",
    "NEURAL",
    "Forecaster",
    "Imputer",
    "ValidationSplit",
    "get_forecaster",
    "get_imputer",
]
