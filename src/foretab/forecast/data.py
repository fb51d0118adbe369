"""Readers for the ODTQA-FoRe CSV formats (blank = missing)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from foretab.errors import ForecastError

_MONTH_COL = re.compile(r"^\d{4}-\d{2}$")
_MASK_COL = re.compile(r"^mask_(\d{4}-\d{2})$")
HISTORY_MONTHS = 24


@dataclass(frozen=True, slots=True)
class ForecastSplit:
    """A forecasting file: history ``[n, 24]`` and targets ``[n, 12]``."""

    series_id: tuple[str, ...]
    months: tuple[str, ...]
    history: np.ndarray
    target: np.ndarray

    @property
    def full(self) -> np.ndarray:
        """History and targets side by side: the whole ``[n, 36]`` panel."""
        return np.concatenate([self.history, self.target], axis=1)


@dataclass(frozen=True, slots=True)
class ImputeSplit:
    """An imputation file: values ``[n, 24]`` and the mask of cells to hide and score."""

    series_id: tuple[str, ...]
    months: tuple[str, ...]
    values: np.ndarray
    mask: np.ndarray  # bool; True = observed value to hide, then score

    @property
    def masked(self) -> np.ndarray:
        """The values with the scored cells hidden (the imputer's input)."""
        out = self.values.copy()
        out[self.mask] = np.nan
        return out


def _read(path: str | Path) -> pd.DataFrame:
    p = Path(path)
    if not p.exists():
        raise ForecastError(
            f"benchmark file not found: {p}",
            suggestions=("pass a path like ../shared/data/odtqa_fore/forecast_val.csv",),
        )
    return pd.read_csv(p, dtype={"series_id": str})


def read_forecast_csv(path: str | Path, history_months: int = HISTORY_MONTHS) -> ForecastSplit:
    """Read ``series_id`` + month columns; the first ``history_months`` are history."""
    df = _read(path)
    months = [c for c in df.columns if _MONTH_COL.match(str(c))]
    if len(months) <= history_months or "series_id" not in df.columns:
        raise ForecastError(
            f"{path}: expected series_id and more than {history_months} YYYY-MM columns, "
            f"found {len(months)}",
            suggestions=("use the format of forecast_val.csv",),
        )
    values = df[months].to_numpy(dtype=float)
    return ForecastSplit(
        series_id=tuple(df["series_id"].astype(str)),
        months=tuple(months),
        history=values[:, :history_months],
        target=values[:, history_months:],
    )


def read_impute_csv(path: str | Path) -> ImputeSplit:
    """Read ``series_id``, value columns and their ``mask_`` columns."""
    df = _read(path)
    months = [c for c in df.columns if _MONTH_COL.match(str(c))]
    masks = [f"mask_{m}" for m in months]
    missing = [m for m in masks if m not in df.columns]
    if not months or missing:
        raise ForecastError(
            f"{path}: expected YYYY-MM value columns each with a mask_ column; "
            f"missing {missing[:3]}",
            suggestions=("use the format of imputation_val.csv",),
        )
    values = df[months].to_numpy(dtype=float)
    mask = df[masks].fillna(0).to_numpy(dtype=float) > 0
    return ImputeSplit(
        series_id=tuple(df["series_id"].astype(str)),
        months=tuple(months),
        values=values,
        mask=mask & np.isfinite(values),
    )
