"""``UnitsSource``: the forecast stage of a units-sold question (issue 30).

A plan whose metric is units sold reads each project's units (``History`` holds them);
this source forecasts the window's months after R with the store's units model
(``forecast.units_store``): a point (the Poisson booster's mean) and the 80% interval of
the quantile boosters, per project and month. It has no forecast distribution, so
answers built on one (a probability) are not given for units.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from foretab.core.months import Month
from foretab.core.plan import EntityRef, Metric, Plan
from foretab.core.series import Forecast, ForecastBasis, ForecastPoint, History
from foretab.errors import ForecastError
from foretab.forecast.base import MAX_HORIZON
from foretab.forecast.source import history_array
from foretab.forecast.units_store import UnitsStoreModel

#: ``Forecast.interval_method`` of units intervals: the quantile boosters' 10% and 90%.
UNITS_INTERVALS = "quantile-boosters"


class UnitsSource:
    """Forecasts units sold with the store's units model."""

    def __init__(self, model: UnitsStoreModel) -> None:
        self.model = model
        self.name = f"model:{model.name}"

    def forecast(self, plan: Plan, history: History) -> Forecast:
        if plan.metric is not Metric.UNITS:
            raise ForecastError(
                f"the units model forecasts units sold, not {plan.wording.value}s",
                suggestions=("ask about units sold",),
            )
        return self.forecast_series(
            plan.entities, plan.reference_month, plan.future_months, history
        )

    def forecast_series(
        self,
        refs: Sequence[EntityRef],
        reference: Month,
        months: Sequence[Month],
        history: History,
    ) -> Forecast:
        """``refs``' units for ``months`` (after ``reference``) from their units in ``history``."""
        if not months:
            return Forecast(self.name)
        if reference != self.model.reference_month:
            raise ForecastError(
                f"the units model was trained at {self.model.reference_month.iso}, but the "
                f"question's reference month is {reference.iso}",
                suggestions=("run `foretab train --db DB` to refit it",),
            )
        horizon = months[-1].minus(reference)
        if horizon > MAX_HORIZON:
            raise ForecastError(
                f"cannot forecast {months[-1].label}: the units model covers "
                f"{(reference + 1).label} to {(reference + MAX_HORIZON).label}",
                suggestions=(f"ask about at most {MAX_HORIZON} months after {reference.label}",),
            )
        lookback = self.model.lookback
        arr = history_array(history, refs, reference, lookback)
        for i, ref in enumerate(refs):
            # The model learnt only from projects with a row in the window: refuse, not guess.
            if not np.isfinite(arr[i]).any():
                last = history.last_month(ref)
                since = f"its last row is {last.label}" if last else "it has none"
                raise ForecastError(
                    f"cannot forecast the units sold of {ref.name} ({ref.inner}, {ref.outer}): "
                    f"the units model reads the {lookback} months up to {reference.label} "
                    f"and {since}",
                    suggestions=("ask about the months it has sales for (a history question)",),
                )
        predicted = self.model.predict(arr, horizon)
        points: dict[EntityRef, dict[Month, ForecastPoint]] = {}
        basis: dict[EntityRef, ForecastBasis] = {}
        for i, ref in enumerate(refs):
            row: dict[Month, ForecastPoint] = {}
            for m in months:
                k = m.minus(reference) - 1
                value = float(predicted.value[i, k])
                lo, hi = float(predicted.lo[i, k]), float(predicted.hi[i, k])
                if not all(np.isfinite((value, lo, hi))):
                    raise ForecastError(
                        f"the units model gave no finite value for {ref.name} in {m.label}",
                        suggestions=("retrain with `foretab train --db DB`",),
                    )
                row[m] = ForecastPoint(value, lo, hi)
            points[ref] = row
            observed = int(np.isfinite(arr[i]).sum())
            basis[ref] = ForecastBasis(
                months_used=observed,
                last_observed=history.last_month(ref),
                note=f"{observed} of the {lookback} months up to {reference.label} with a row",
            )
        return Forecast(self.name, points, self.model.level, basis, interval_method=UNITS_INTERVALS)


def store_units_source(load: Callable[[], UnitsStoreModel]) -> Callable[[], UnitsSource]:
    """A loader of the units source (the model is read on the first units question)."""
    return lambda: UnitsSource(load())
