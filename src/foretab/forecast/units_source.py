"""``UnitsSource``: the forecast stage of a units-sold question (issue 30).

A plan whose metric is units sold reads each project's units (``History`` holds them);
this source forecasts the window's months after R with the store's units model
(``forecast.units_store``): per project and month, the expected units as recorded (a
month without a row counts 0 sold, as in a past total) and an 80% interval
(``expected_units``). It has no forecast distribution, so answers built on one (a
probability) are not given for units.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from foretab.core.months import Month
from foretab.core.plan import EntityRef, Metric, Plan
from foretab.core.series import Forecast, ForecastBasis, ForecastPoint, History
from foretab.errors import ForecastError
from foretab.forecast.source import history_array, require_within_horizon
from foretab.forecast.units import UnitsForecast
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
        horizon = require_within_horizon(months, reference, "the units model")
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
        value, lo, hi = expected_units(self.model.predict(arr, horizon))
        points: dict[EntityRef, dict[Month, ForecastPoint]] = {}
        basis: dict[EntityRef, ForecastBasis] = {}
        for i, ref in enumerate(refs):
            row: dict[Month, ForecastPoint] = {}
            for m in months:
                k = m.minus(reference) - 1
                point, low, high = float(value[i, k]), float(lo[i, k]), float(hi[i, k])
                if not all(np.isfinite((point, low, high))):
                    raise ForecastError(
                        f"the units model gave no finite value for {ref.name} in {m.label}",
                        suggestions=("retrain with `foretab train --db DB`",),
                    )
                row[m] = ForecastPoint(point, low, high)
            points[ref] = row
            observed = int(np.isfinite(arr[i]).sum())
            basis[ref] = ForecastBasis(
                months_used=observed,
                last_observed=history.last_month(ref),
                note=f"{observed} of the {lookback} months up to {reference.label} with a row",
            )
        return Forecast(self.name, points, self.model.level, basis, interval_method=UNITS_INTERVALS)


#: The activity probability at or above which a month's 10% end is the count model's own
#: (below it, at least 10% of the mass is "no row": 0 sold).
ROW_LIKELY = 0.9


def expected_units(forecast: UnitsForecast) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Units as recorded: ``(expected, lo, hi)``, a month without a row counting 0 sold.

    The count model forecasts a month that has a row; the activity booster gives the
    probability ``p`` that it has one. The expected count is ``p × value``. The 80%
    interval of the mixture (0 with probability ``1 − p``, else the count model): its 10%
    end is 0 when ``1 − p ≥ 10%``, else (approximately) the count model's 10% end; its 90%
    end is 0 when ``p ≤ 10%``, else at most the count model's 90% end, which is used
    (errs wide). Without an activity booster, every month is taken to have a row.
    """
    p = forecast.active if forecast.active is not None else np.ones_like(forecast.value)
    value = p * forecast.value
    lo = np.where(p >= ROW_LIKELY, forecast.lo, 0.0)
    hi = np.where(p > 1 - ROW_LIKELY, forecast.hi, 0.0)
    return value, np.minimum(lo, value), np.maximum(hi, value)
