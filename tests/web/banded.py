"""A future source with prediction intervals, for tests of the page's band.

Last observed value carried forward, with an interval that widens with the horizon, like
a real forecaster's. It only stands in for the model stage; the page and the API treat its
output exactly as any other ``Forecast``.
"""

from __future__ import annotations

from foretab.core.plan import Plan
from foretab.core.series import Forecast, ForecastPoint, History
from foretab.forecast.sources import Persistence


class BandedPersistence:
    """Persistence with a ±2%·√h interval at level 0.8."""

    name = "banded-persistence"

    def forecast(self, plan: Plan, history: History) -> Forecast:
        base = Persistence().forecast(plan, history)
        points = {}
        for ref, values in base.points.items():
            points[ref] = {}
            for month, point in values.items():
                h = month.minus(plan.reference_month)
                spread = 0.02 * abs(point.value) * h**0.5
                points[ref][month] = ForecastPoint(
                    point.value, point.value - spread, point.value + spread
                )
        return Forecast(self.name, points, 0.8, base.basis)
