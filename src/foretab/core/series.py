"""What flows between the read, forecast and analyze stages: series of monthly values.

``History`` is what came back through the SQL guard, keyed by the exact catalog entity
(city, district, project) — never rebuilt from a name. ``Forecast`` is what a future source
made of it: a point value per month with room for a prediction interval, plus a note per
project of what the forecast was built from (for the trace and the text answer).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from foretab.core.months import Month
from foretab.core.plan import EntityRef

#: One entity's observed values by month (finite floats only).
Values = Mapping[Month, float]


def _frozen(mapping: Mapping[EntityRef, Mapping[Month, object]]) -> Mapping:
    return MappingProxyType({ref: MappingProxyType(dict(v)) for ref, v in mapping.items()})


@dataclass(frozen=True, slots=True)
class ScopeOutcome:
    """One scope's answer over its candidates, as the reader's SQL computed it (docs/design.md §4).

    ``candidates`` counts the scope's projects with a value for the question's metric in
    the window (0: nothing to rank, which the analyzer reports); ``picked`` holds the
    projects chosen (PICK, TOP, FILTER, …) in answer order with the value they were chosen
    by; ``value`` the scope's MEAN / TOTAL / COUNT.
    """

    candidates: int
    picked: tuple[tuple[EntityRef, float], ...] = ()
    value: float | None = None


@dataclass(frozen=True, slots=True)
class History:
    """Observed values per plan entity, as read through the SQL guard.

    Every plan entity has a (possibly empty) series — except for a past scope question
    answered in SQL, whose rows stay in the database (``scopes`` holds its outcomes).
    Values are finite (a row with a NULL or non-finite value is not an observation and is
    dropped by the reader, which counts it in ``dropped_rows``).
    """

    series: Mapping[EntityRef, Values]
    measure: str = "value"  # the measure's column, for messages
    dropped_rows: int = 0
    # Units sold per entity and month, when the query returned them: scope questions rank
    # by units ("among the five best-selling ...") while answering with prices.
    units: Mapping[EntityRef, Values] = field(default_factory=lambda: MappingProxyType({}))
    # A past scope question ranked, filtered and aggregated in SQL: one outcome per plan
    # scope, in order (the series are then empty: the rows never left the database).
    scopes: tuple[ScopeOutcome, ...] = ()

    def __post_init__(self) -> None:
        for ref, values in self.series.items():
            for month, value in values.items():
                if not math.isfinite(value):
                    raise ValueError(f"non-finite {self.measure} for {ref.name} in {month}")
        object.__setattr__(self, "series", _frozen(self.series))
        object.__setattr__(self, "units", _frozen(self.units))

    def __getitem__(self, ref: EntityRef) -> Values:
        return self.series.get(ref, MappingProxyType({}))

    def __iter__(self) -> Iterator[EntityRef]:
        return iter(self.series)

    def last_month(self, ref: EntityRef) -> Month | None:
        """The latest month with a value for ``ref``, or None."""
        values = self.series.get(ref)
        return max(values) if values else None

    @classmethod
    def empty(cls, refs: tuple[EntityRef, ...], measure: str = "value") -> History:
        return cls({ref: {} for ref in refs}, measure)


@dataclass(frozen=True, slots=True)
class ForecastPoint:
    """One forecast value; ``lo``/``hi`` bound the central interval at ``Forecast.level``."""

    value: float
    lo: float | None = None
    hi: float | None = None
    #: the predictive distribution: values at ``Forecast.grid`` levels (empty: none)
    quantiles: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        for name in ("value", "lo", "hi"):
            v = getattr(self, name)
            if v is not None and not math.isfinite(v):
                raise ValueError(f"a forecast {name} must be finite, got {v}")


@dataclass(frozen=True, slots=True)
class ForecastBasis:
    """What one entity's forecast was computed from, in words a user can check."""

    months_used: int  # observed months the model read
    last_observed: Month | None
    imputed_months: int = 0
    note: str = ""


@dataclass(frozen=True, slots=True)
class Forecast:
    """Future values per entity for the months a plan asks about after R.

    ``source`` names the implementation (``model:lgbm``, ``oracle``, ``none``);
    ``level`` is the interval level of ``lo``/``hi`` (None when the source gives none).
    """

    source: str
    points: Mapping[EntityRef, Mapping[Month, ForecastPoint]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    level: float | None = None
    basis: Mapping[EntityRef, ForecastBasis] = field(default_factory=lambda: MappingProxyType({}))
    #: increasing probability levels of every point's ``quantiles`` (empty: no distribution)
    grid: tuple[float, ...] = ()
    #: how the intervals were calibrated (``backtest``, ``in-sample``; empty: no intervals)
    interval_method: str = ""
    #: the recent drift (log change a month) the model moved its forecasts by: horizon
    #: ``h`` is moved by ``h`` times it (``foretab.forecast.calibrate.recent_drift``)
    drift_per_month: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "points", _frozen(self.points))
        object.__setattr__(self, "basis", MappingProxyType(dict(self.basis)))

    def values(self) -> Mapping[EntityRef, Values]:
        """Point values only: what the analyzer computes answers from."""
        return {ref: {m: p.value for m, p in pts.items()} for ref, pts in self.points.items()}

    @classmethod
    def nothing_needed(cls) -> Forecast:
        return cls("none needed")
