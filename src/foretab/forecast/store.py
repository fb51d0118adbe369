"""The store-level forecaster: trained at the store's reference month R, persisted with it.

Training sees only the history store (windows whose targets end at or before R), never
the future store. After fitting, the forecasts for R+1..R+12 of every project are computed
once and saved with the store, so answering a question loads a small table and looks
numbers up: no retraining, no model import.
"""

from __future__ import annotations

import io
import pickle
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from foretab.core.plan import ProjectRef
from foretab.errors import ForecastError
from foretab.forecast.base import MAX_HORIZON
from foretab.months import Month, month_range

if TYPE_CHECKING:
    import pandas as pd

ARTIFACT_NAME = "forecaster.pkl"
ARTIFACT_VERSION = 1
#: The benchmark's default (``registry.DEFAULT_FORECASTER``; spelled out so that loading a
#: stored forecaster does not import LightGBM). Its calendar feature (the column a window
#: ends at) lies past every training window at R, yet it scored slightly better on the
#: corpus than ``lgbm_nocal`` (MAE 2,941 vs 2,966), so the store uses it too.
STORE_DEFAULT_FORECASTER = "lgbm"
_TRAIN_HINT = "run `foretab train --db DB` to fit and store the forecaster"


@dataclass(frozen=True, slots=True)
class StorePanel:
    """The history store as arrays: one row per project, one column per month to R."""

    projects: tuple[ProjectRef, ...]
    months: tuple[Month, ...]
    values: np.ndarray  # [n_projects, n_months], NaN = no sale that month


def panel_arrays(frame: pd.DataFrame, last: Month, first: Month | None = None) -> StorePanel:
    """Pivot ``open_*(db).panel()`` rows into a ``[project, month]`` array up to ``last``.

    Months after ``last`` are dropped, so a caller cannot leak the future by accident.
    """
    if frame.empty:
        return StorePanel((), (), np.empty((0, 0)))
    months_all = frame["month"].map(Month.parse)
    start = first if first is not None else min(months_all)
    months = tuple(month_range(start, last))
    keep = (months_all >= start) & (months_all <= last)
    sub = frame.loc[keep]
    keys = list(zip(frame["city"], frame["district"], frame["project"], strict=True))
    refs = sorted({ProjectRef(*k) for k in keys})
    row_of = {r: i for i, r in enumerate(refs)}
    values = np.full((len(refs), len(months)), np.nan)
    col = np.array([m.minus(start) for m in months_all[keep]], dtype=int)
    row = np.array(
        [
            row_of[ProjectRef(c, d, p)]
            for c, d, p in zip(sub["city"], sub["district"], sub["project"], strict=True)
        ],
        dtype=int,
    )
    values[row, col] = sub["price"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        values[~(values > 0)] = np.nan
    return StorePanel(tuple(refs), months, values)


@dataclass(frozen=True, slots=True)
class StoreForecaster:
    """Forecasts of every project for the 12 months after the reference month."""

    model: str
    reference_month: Month
    projects: tuple[ProjectRef, ...]
    values: np.ndarray  # [n_projects, 12]: months R+1..R+12
    trained_seconds: float

    @property
    def months(self) -> list[Month]:
        return [self.reference_month + k for k in range(1, MAX_HORIZON + 1)]

    def forecast(
        self, projects: Sequence[ProjectRef], months: Sequence[Month]
    ) -> dict[ProjectRef, dict[Month, float]]:
        """``{project: {month: price}}`` for months in R+1..R+12."""
        row_of = {p: i for i, p in enumerate(self.projects)}
        out: dict[ProjectRef, dict[Month, float]] = {}
        for m in months:
            k = m.minus(self.reference_month)
            if not 1 <= k <= MAX_HORIZON:
                raise ForecastError(
                    f"cannot forecast {m.label}: the forecaster covers "
                    f"{(self.reference_month + 1).label} to {(self.reference_month + MAX_HORIZON).label}",
                    suggestions=(
                        "months up to the reference month are history: query the store",
                        f"ask about at most {MAX_HORIZON} months after the reference month",
                    ),
                )
        for p in projects:
            if p not in row_of:
                raise ForecastError(
                    f"no forecast for project {p.project!r} ({p.district}, {p.city}): it has "
                    "no history at the reference month",
                    suggestions=(_TRAIN_HINT + " after ingesting its data",),
                )
            row = self.values[row_of[p]]
            out[p] = {m: float(row[m.minus(self.reference_month) - 1]) for m in months}
        return out

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        pickle.dump((ARTIFACT_VERSION, self), buf, protocol=pickle.HIGHEST_PROTOCOL)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> StoreForecaster:
        try:
            version, obj = pickle.loads(data)
        except Exception as exc:
            raise ForecastError(
                f"the stored forecaster is unreadable ({exc})", suggestions=(_TRAIN_HINT,)
            ) from exc
        if version != ARTIFACT_VERSION or not isinstance(obj, cls):
            raise ForecastError(
                "the stored forecaster has an old format", suggestions=(_TRAIN_HINT,)
            )
        return obj


def fit_store_forecaster(
    panel: StorePanel,
    reference_month: Month,
    model: str | None = None,
    seed: int = 0,
    progress: Callable[[str], None] = lambda _: None,
) -> StoreForecaster:
    """Fit ``model`` on windows of ``panel``, then forecast R+1..R+12.

    Every training target lies at or before R; every project with an observation gets a
    forecast.
    """
    if not panel.months or panel.months[-1] != reference_month:
        raise ForecastError(
            f"the panel must end at the reference month {reference_month.iso}",
            suggestions=("build it with panel_arrays(frame, reference_month)",),
        )
    from foretab.forecast.registry import get_forecaster  # heavy: LightGBM, torch glue

    name = model or STORE_DEFAULT_FORECASTER
    start = time.perf_counter()
    forecaster = get_forecaster(name, seed)
    progress(f"fitting {name} on {len(panel.projects)} projects × {len(panel.months)} months")
    forecaster.fit(panel.values)
    has = np.isfinite(panel.values).any(axis=1)
    progress("forecasting R+1..R+12")
    values = forecaster.predict(panel.values[has], MAX_HORIZON)
    projects = tuple(p for p, ok in zip(panel.projects, has, strict=True) if ok)
    return StoreForecaster(name, reference_month, projects, values, time.perf_counter() - start)


def _reference(store: object) -> Month:
    ref = getattr(store, "reference_month", None)
    if ref is None:
        raise ForecastError(
            "the store has no reference month, so there is no future to forecast",
            suggestions=("re-ingest with `foretab ingest PATH --db DB --reference-month YYYY-MM`",),
        )
    return ref


def train_store_forecaster(
    db: str,
    model: str | None = None,
    seed: int = 0,
    progress: Callable[[str], None] = lambda _: None,
) -> StoreForecaster:
    """Fit on the history store at ``db``, save it there, and return it."""
    from foretab.store import open_history

    store = open_history(db)
    try:
        ref = _reference(store)
        progress("reading the history store")
        panel = panel_arrays(store.panel(), ref)
        fitted = fit_store_forecaster(panel, ref, model, seed, progress)
        store.save_artifact(ARTIFACT_NAME, fitted.to_bytes())
    finally:
        store.close()
    return fitted


def load_store_forecaster(history_store: object, model: str | None = None) -> StoreForecaster:
    """The forecaster saved with ``history_store`` (a ``HistoryStore``); never retrains.

    ``model`` (if given) must match the stored one.
    """
    data = history_store.load_artifact(ARTIFACT_NAME)  # type: ignore[attr-defined]
    if data is None:
        raise ForecastError("no forecaster is stored with this store", suggestions=(_TRAIN_HINT,))
    fitted = StoreForecaster.from_bytes(data)
    ref = _reference(history_store)
    if fitted.reference_month != ref:
        raise ForecastError(
            f"the stored forecaster was trained at {fitted.reference_month.iso}, but the "
            f"store's reference month is {ref.iso}",
            suggestions=(_TRAIN_HINT,),
        )
    if model is not None and fitted.model != model:
        raise ForecastError(
            f"the stored forecaster is {fitted.model!r}, not {model!r}",
            suggestions=(f"run `foretab train --db DB --model {model}`",),
        )
    return fitted
