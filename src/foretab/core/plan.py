"""The typed ``Plan`` a question is parsed into (DESIGN §2–4).

It is the contract between the parser, the retriever / SQL builder, the forecaster glue,
the analyzer and the benchmark: every downstream stage reads only this.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from foretab.months import Month, month_range


class Task(StrEnum):
    """What kind of question: numeric forecast, forecast-based reasoning, or history."""

    FORECAST = "forecast"
    REASONING = "reasoning"
    HISTORY = "history"


class Aggregate(StrEnum):
    """How the window's monthly prices become the target value(s)."""

    VALUE = "value"  # the single month of a one-month window
    MEAN = "mean"
    MAX = "max"
    MIN = "min"
    EACH = "each"  # every month of the window, listed


class Comparison(StrEnum):
    """The reasoning asked for; ``NONE`` for numeric questions."""

    NONE = "none"
    VS_CURRENT = "vs_current"  # one project: Increase / Decrease / No change
    WHICH_RISE = "which_rise"  # several: every project whose target > current
    WHICH_FALL = "which_fall"
    RISES_MOST = "rises_most"  # several: the one with the largest rise (None if none rises)
    FALLS_MOST = "falls_most"
    HIGHEST = "highest"  # several: the one with the highest target
    LOWEST = "lowest"


class ChangeMeasure(StrEnum):
    """Change vs current: absolute (target − current) or relative ((t − c) / c)."""

    ABSOLUTE = "absolute"
    RELATIVE = "relative"


@dataclass(frozen=True, slots=True, order=True)
class ProjectRef:
    """A project resolved against the catalog."""

    city: str
    district: str
    project: str


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """The months a question asks about, inclusive, and the text that named them."""

    first: Month
    last: Month
    expression: str = ""

    @property
    def months(self) -> list[Month]:
        return month_range(self.first, self.last)


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything the engine needs to answer one question."""

    question: str
    reference_month: Month
    projects: tuple[ProjectRef, ...]
    window: TimeWindow
    aggregate: Aggregate
    task: Task
    comparison: Comparison = Comparison.NONE
    measure: ChangeMeasure = ChangeMeasure.ABSOLUTE

    @property
    def needs_forecast(self) -> bool:
        """True when the window reaches past the reference month."""
        return self.window.last > self.reference_month
