"""The two model contracts: every imputer and forecaster sees numpy arrays only.

An orchestrator (the benchmark, the store forecaster) owns frames and calendars; models
receive ``[n_series, T]`` float arrays where ``NaN`` marks a month without data, in the
statsforecast spirit (``fit -> self``, ``predict -> array``, an ``alias``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Self

import numpy as np

from foretab.errors import ForecastError

MAX_HORIZON = 12
#: Where a series sits: ``(district key, city key)`` (``foretab.forecast.market``), or
#: ``None`` when unknown.
Place = tuple[str, str] | None


@dataclass(frozen=True, slots=True)
class ValidationSplit:
    """History and targets of held-out series, used only for selection / early stopping."""

    history: np.ndarray  # [n, T] with NaN gaps
    target: np.ndarray  # [n, h] with NaN where unobserved


class Forecaster(ABC):
    """Learns from a panel of monthly series, then forecasts the next ``h`` months.

    ``fit(panel)`` learns whatever the model shares across series (global models) or
    nothing (local models). ``predict(history, h)`` forecasts months ``T+1..T+h`` for
    each row of ``history`` (which need not be the training series): ``[n, h]``, finite.
    """

    alias: str = "forecaster"
    #: whether ``predict_quantiles`` returns real quantiles
    supports_quantiles: bool = False
    #: whether the model reads where each series sits (``places``: its district and
    #: city); ``fit(panel, places=...)`` then takes one per panel row
    uses_places: bool = False
    #: optional ``(done, total)`` hook called while an iterative model trains (a progress bar)
    on_progress: Callable[[int, int], None] | None = None

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def fit(self, panel: np.ndarray, val: ValidationSplit | None = None) -> Self:
        """Learn from ``panel`` (``[n, T]``, NaN gaps); local models keep the default."""
        del panel, val
        return self

    @abstractmethod
    def _predict(self, history: np.ndarray, h: int) -> np.ndarray: ...

    def observe(self, panel: np.ndarray, places: Sequence[Place] | None = None) -> None:
        """Learn what is known of the market up to ``panel``'s last month, without refitting.

        A model fitted on an earlier cut of the panel (the calibration backtest) forecasts
        from later origins after this; models that read no market keep the default.
        """
        del panel, places

    def predict(
        self, history: np.ndarray, h: int = MAX_HORIZON, places: Sequence[Place] | None = None
    ) -> np.ndarray:
        """Point forecasts ``[n, h]`` for months after the last column of ``history``.

        ``places`` (one per row) matter only to models that ``uses_places``.
        """
        history = check_panel(history)
        if not 1 <= h <= MAX_HORIZON:
            raise ForecastError(
                f"horizon must be 1..{MAX_HORIZON} months, got {h}",
                suggestions=(f"ask for at most {MAX_HORIZON} months ahead",),
            )
        out = np.asarray(self._predict_placed(history, h, places), dtype=float)
        # A series with no observation at all has no level to forecast from.
        out[~np.isfinite(out)] = np.nan
        return out

    def _predict_placed(
        self, history: np.ndarray, h: int, places: Sequence[Place] | None
    ) -> np.ndarray:
        del places
        return self._predict(history, h)

    def predict_quantiles(
        self,
        history: np.ndarray,
        h: int,
        quantiles: tuple[float, ...],
        places: Sequence[Place] | None = None,
    ) -> np.ndarray:
        """``[n, h, len(quantiles)]``; models without intervals raise ``ForecastError``."""
        del history, h, quantiles, places
        raise ForecastError(
            f"model {self.alias!r} has no prediction intervals",
            suggestions=("use model 'lgbm' for quantiles",),
        )


class Imputer(ABC):
    """Fills the ``NaN`` cells of a ``[n, T]`` panel; observed cells pass through."""

    alias: str = "imputer"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def fit(self, panel: np.ndarray) -> Self:
        """Learn from ``panel`` (its observed cells); non-learning imputers keep this."""
        del panel
        return self

    @abstractmethod
    def _impute(self, panel: np.ndarray) -> np.ndarray: ...

    def impute(self, panel: np.ndarray) -> np.ndarray:
        """A copy of ``panel`` with gaps filled (all-NaN rows stay NaN)."""
        panel = check_panel(panel)
        out = np.asarray(self._impute(panel), dtype=float)
        observed = np.isfinite(panel)
        out[observed] = panel[observed]
        return out


def check_panel(panel: np.ndarray) -> np.ndarray:
    """A float ``[n, T]`` copy with non-finite and non-positive values as NaN."""
    arr = np.array(panel, dtype=float, copy=True)
    if arr.ndim != 2:
        raise ForecastError(
            f"expected a [n_series, n_months] array, got shape {arr.shape}",
            suggestions=("reshape a single series with series[None, :]",),
        )
    with np.errstate(invalid="ignore"):
        arr[~(arr > 0)] = np.nan  # prices are positive; 0 or negative means "no data"
    return arr


def last_observed(panel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row: the last observed value and how many months ago it was (0 = last column).

    Rows with no observation get ``NaN`` and age ``T``.
    """
    n, t = panel.shape
    observed = np.isfinite(panel)
    has = observed.any(axis=1)
    last_idx = t - 1 - np.argmax(observed[:, ::-1], axis=1)
    value = np.where(has, panel[np.arange(n), last_idx], np.nan)
    age = np.where(has, t - 1 - last_idx, t)
    return value, age
