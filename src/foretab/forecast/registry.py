"""Every forecaster and imputer by name; the benchmark and the store look models up here."""

from __future__ import annotations

from collections.abc import Callable

from foretab.errors import ForecastError
from foretab.forecast.base import Forecaster, Imputer
from foretab.forecast.baselines import DriftForecaster, NaiveForecaster
from foretab.forecast.gbm import LightGBMForecaster
from foretab.forecast.impute import LightGBMImputer, LinearImputer
from foretab.forecast.neural import (
    NHITSForecaster,
    PatchTSTForecaster,
    TiDEForecaster,
    TimesNetForecaster,
    TimeXerForecaster,
)
from foretab.forecast.stats import AutoETSForecaster, AutoThetaForecaster

FORECASTERS: dict[str, Callable[[int], Forecaster]] = {
    "naive": lambda seed: NaiveForecaster(seed),
    "drift": lambda seed: DriftForecaster(seed),
    "autoets": lambda seed: AutoETSForecaster(seed),
    "autotheta": lambda seed: AutoThetaForecaster(seed),
    "lgbm": lambda seed: LightGBMForecaster(seed),
    # Without the window-end (calendar) feature: for forecasting past the last training
    # window, as the store forecaster does at its reference month.
    "lgbm_nocal": lambda seed: LightGBMForecaster(seed, calendar=False),
    # Reads each series' place: district, city and corpus trend, season and the
    # project's level against its district (``foretab.forecast.market``).
    # `foretab train` (no validation split) fits it on half the (window, horizon) rows.
    "lgbm_market": lambda seed: LightGBMForecaster(seed, market=True, fixed_row_fraction=0.5),
    "timesnet": lambda seed: TimesNetForecaster(seed),
    "timexer": lambda seed: TimeXerForecaster(seed),
    "nhits": lambda seed: NHITSForecaster(seed),
    "patchtst": lambda seed: PatchTSTForecaster(seed),
    "tide": lambda seed: TiDEForecaster(seed),
}
#: the models that need the ``[neural]`` extra
NEURAL = frozenset({"timesnet", "timexer", "nhits", "patchtst", "tide"})
IMPUTERS: dict[str, Callable[[int], Imputer]] = {
    "linear": lambda seed: LinearImputer(seed),
    "lgbm_impute": lambda seed: LightGBMImputer(seed),
}
DEFAULT_FORECASTER = "lgbm_market"
DEFAULT_IMPUTER = "lgbm_impute"


def get_forecaster(name: str | None = None, seed: int = 0) -> Forecaster:
    """A fresh, unfitted forecaster; ``None`` gives the default."""
    key = DEFAULT_FORECASTER if name is None else name
    if key not in FORECASTERS:
        raise ForecastError(
            f"unknown forecaster {key!r}",
            suggestions=tuple(f"--model {n}" for n in FORECASTERS),
        )
    return FORECASTERS[key](seed)


def get_imputer(name: str | None = None, seed: int = 0) -> Imputer:
    """A fresh, unfitted imputer; ``None`` gives the default."""
    key = DEFAULT_IMPUTER if name is None else name
    if key not in IMPUTERS:
        raise ForecastError(
            f"unknown imputer {key!r}", suggestions=tuple(f"--model {n}" for n in IMPUTERS)
        )
    return IMPUTERS[key](seed)
