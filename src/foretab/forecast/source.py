"""``ModelSource``: the forecast stage — forecast the series the question read.

For each question the reader's history (what came back through the SQL guard) becomes a
``[n_projects, lookback]`` array ending at R, and the model fitted for the store forecasts
it. Change the history and the forecast changes: that is what the golden-history ablation
measures, and what the TimeFore Forecaster tool calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from foretab.core.months import Month
from foretab.core.plan import EntityRef, Metric, Plan
from foretab.core.series import Forecast, ForecastBasis, ForecastPoint, History
from foretab.errors import ForecastError
from foretab.forecast.base import MAX_HORIZON

if TYPE_CHECKING:
    from foretab.core.stages import FutureSource
    from foretab.store import HistoryStore

DEFAULT_LEVEL = 0.8
#: Levels at which each forecast value's predictive distribution is kept (for the
#: probabilities of reasoning answers, ``foretab.analyze.probability``).
DISTRIBUTION_GRID = tuple(round(0.01 * k, 2) for k in range(1, 100))


class SeriesModel(Protocol):
    """A fitted model that forecasts arrays (``foretab.forecast.store.StoreModel``)."""

    model: str
    lookback: int

    def predict(self, history: np.ndarray, h: int) -> np.ndarray: ...

    def predict_quantiles(
        self, history: np.ndarray, h: int, quantiles: tuple[float, ...]
    ) -> np.ndarray: ...


def require_within_horizon(months: Sequence[Month], reference: Month, model: str) -> int:
    """The horizon ``months`` need; months past the models' reach are refused by name."""
    horizon = months[-1].minus(reference)
    if horizon > MAX_HORIZON:
        raise ForecastError(
            f"cannot forecast {months[-1].label}: {model} covers "
            f"{(reference + 1).label} to {(reference + MAX_HORIZON).label}",
            suggestions=(f"ask about at most {MAX_HORIZON} months after {reference.label}",),
        )
    return horizon


def history_array(
    history: History, refs: Sequence[EntityRef], reference: Month, lookback: int
) -> np.ndarray:
    """``[len(refs), lookback]``: months R−lookback+1..R, NaN where nothing was observed."""
    first = reference - (lookback - 1)
    out = np.full((len(refs), lookback), np.nan)
    for i, ref in enumerate(refs):
        for month, value in history[ref].items():
            k = month.minus(first)
            if 0 <= k < lookback:
                out[i, k] = value
    return out


class _StoreLastSeen(Mapping[EntityRef, Month]):
    """Each project's last month in ``store``, read when an error message needs one.

    Not read up front: at 100x the corpus that is 563,400 projects at every cold start.
    """

    def __init__(self, store: HistoryStore) -> None:
        self._store = store

    def __getitem__(self, ref: EntityRef) -> Month:
        last = self._store.last_month(ref.outer, ref.inner, ref.name)
        if last is None:
            raise KeyError(ref)
        return last

    def __iter__(self) -> Iterator[EntityRef]:
        return (EntityRef(p.outer, p.inner, p.name) for p in self._store.entities())

    def __len__(self) -> int:
        return len(self._store.entities())


class ModelSource:
    """Forecasts with the store's fitted model; intervals at ``level`` when it has them."""

    def __init__(
        self,
        model: SeriesModel,
        *,
        level: float = DEFAULT_LEVEL,
        last_seen: Mapping[EntityRef, Month] | None = None,
        units: Callable[[], FutureSource] | None = None,
    ) -> None:
        if not 0 < level < 1:
            raise ForecastError(
                f"the interval level must lie between 0 and 1, got {level}",
                suggestions=("e.g. --level 0.8 for an 80% interval",),
            )
        self.model = model
        self.level = level
        # Each project's last month in the whole store, to say why a stale one has no
        # forecast (the question reads only the lookback window).
        self.last_seen: Mapping[EntityRef, Month] = {} if last_seen is None else last_seen
        self.name = f"model:{model.model}"
        # Units-sold questions go to the store's units model (``forecast.units_source``),
        # loaded on the first one: price questions never read it.
        self._load_units = units
        self._units: FutureSource | None = None

    @classmethod
    def for_store(
        cls, store: HistoryStore, model: str | None = None, *, level: float = DEFAULT_LEVEL
    ) -> ModelSource:
        from foretab.forecast.store import load_store_model

        return cls.with_store_dates(load_store_model(store, model), store, level=level)

    @classmethod
    def with_store_dates(
        cls,
        model: SeriesModel,
        store: HistoryStore,
        *,
        level: float = DEFAULT_LEVEL,
        units: Callable[[], FutureSource] | None = None,
    ) -> ModelSource:
        """``model`` with the store's last month per project, for clear stale errors.

        ``units``: the units-sold source (default: the store's units model, on first use).
        """
        from foretab.forecast.units_source import UnitsSource
        from foretab.forecast.units_store import load_units_model

        return cls(
            model,
            level=level,
            last_seen=_StoreLastSeen(store),
            units=units or (lambda: UnitsSource(load_units_model(store))),
        )

    def forecast(self, plan: Plan, history: History) -> Forecast:
        if plan.metric is Metric.UNITS:
            return self.units_source().forecast(plan, history)
        return self.forecast_series(
            plan.entities, plan.reference_month, plan.future_months, history
        )

    def units_source(self) -> FutureSource:
        """The source of units-sold forecasts, loaded now if not yet."""
        if self._units is None:
            if self._load_units is None:
                raise ForecastError(
                    f"this forecast source ({self.name}) has no units model",
                    suggestions=("run `foretab train --db DB` and open the store's engine",),
                )
            self._units = self._load_units()
        return self._units

    def forecast_series(
        self,
        refs: Sequence[EntityRef],
        reference: Month,
        months: Sequence[Month],
        history: History,
    ) -> Forecast:
        """``refs``' forecasts for ``months`` (after ``reference``) from ``history``.

        What a question's forecast stage runs, and what the SQL ``forecast()`` relation
        runs for a table's entities (``foretab.sql.forecast_rows``).
        """
        if not months:
            return Forecast(self.name)
        horizon = require_within_horizon(months, reference, "the forecaster")
        lookback = self.model.lookback
        arr = history_array(history, refs, reference, lookback)
        for i, ref in enumerate(refs):
            if not np.isfinite(arr[i]).any():
                last = history.last_month(ref) or self.last_seen.get(ref)
                since = f"its last observation is {last.label}" if last else "it has none"
                raise ForecastError(
                    f"cannot forecast {ref.name} ({ref.inner}, {ref.outer}): the "
                    f"forecaster reads the {lookback} months up to {reference.label} and {since}",
                    suggestions=("ask about the months it has data for (a history question)",),
                )
        # A model that reads places (district / city signals) is told whose series these are.
        placed = {"refs": refs} if getattr(self.model, "reads_places", False) else {}
        values = self.model.predict(arr, horizon, **placed)
        grid, dist = self._distribution(arr, horizon, placed)
        points: dict[EntityRef, dict[Month, ForecastPoint]] = {}
        basis: dict[EntityRef, ForecastBasis] = {}
        for i, ref in enumerate(refs):
            row: dict[Month, ForecastPoint] = {}
            for m in months:
                k = m.minus(reference) - 1
                value = float(values[i, k])
                if not np.isfinite(value):
                    raise ForecastError(
                        f"the forecaster gave no finite value for {ref.name} in {m.label}",
                        suggestions=("retrain with `foretab train --db DB`",),
                    )
                lo = hi = None
                quantiles: tuple[float, ...] = ()
                if dist is not None:
                    lo, hi = float(dist[i, k, 0]), float(dist[i, k, -1])
                    lo, hi = min(lo, value), max(hi, value)
                    quantiles = tuple(dist[i, k, 1:-1].tolist())
                row[m] = ForecastPoint(value, lo, hi, quantiles)
            points[ref] = row
            observed = int(np.isfinite(arr[i]).sum())
            basis[ref] = ForecastBasis(
                months_used=observed,
                last_observed=history.last_month(ref),
                note=f"{observed} of the {lookback} months up to {reference.label} observed",
            )
        level = self.level if dist is not None else None
        method = getattr(self.model, "interval_method", "") if dist is not None else ""
        drift = float(getattr(self.model, "location_drift", 0.0))
        return Forecast(
            self.name, points, level, basis, grid if dist is not None else (), method, drift
        )

    def _distribution(
        self, arr: np.ndarray, horizon: int, placed: Mapping[str, Sequence[EntityRef]]
    ) -> tuple[tuple[float, ...], np.ndarray | None]:
        """``[n, h, 2 + len(grid)]``: the interval's two bounds around the grid's quantiles.

        One call (one pass of the boosters) gives both the interval and the distribution.
        """
        tail = (1 - self.level) / 2
        levels = (tail, *DISTRIBUTION_GRID, 1 - tail)
        try:
            q = self.model.predict_quantiles(arr, horizon, levels, **placed)
        except ForecastError:  # a model without intervals: points only, and the trace says so
            return DISTRIBUTION_GRID, None
        return DISTRIBUTION_GRID, (q if np.isfinite(q).all() else None)
