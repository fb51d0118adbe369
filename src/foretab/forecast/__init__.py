"""Imputation and forecasting of monthly price series (docs/design.md §6).

Models see numpy arrays only (``[n_series, n_months]``, NaN = no data) and are looked up
by name; :mod:`foretab.forecast.store` fits and persists one for a store. The registry
(and with it LightGBM) is imported on first use, so loading a stored forecaster stays
fast.
"""

from __future__ import annotations

from typing import Any

from foretab.forecast.base import MAX_HORIZON, Forecaster, Imputer, ValidationSplit

_REGISTRY_NAMES = frozenset(
    {
        "DEFAULT_FORECASTER",
        "DEFAULT_IMPUTER",
        "FORECASTERS",
        "IMPUTERS",
        "NEURAL",
        "get_forecaster",
        "get_imputer",
    }
)


def __getattr__(name: str) -> Any:
    if name in _REGISTRY_NAMES:
        from foretab.forecast import registry

        return getattr(registry, name)
    raise AttributeError(f"module 'foretab.forecast' has no attribute {name!r}")


# The registry names are listed once, above; the contracts are imported eagerly.
__all__ = ["MAX_HORIZON", "Forecaster", "Imputer", "ValidationSplit", *sorted(_REGISTRY_NAMES)]
