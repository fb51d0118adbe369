"""Demo defaults, importable without pandas (the CLI reads them to build ``--help``)."""

from __future__ import annotations

from foretab.core.months import Month

DEFAULT_DB = "foretab-demo.duckdb"
DEFAULT_SEED = 0
DEFAULT_START = Month(2021, 1)
DEFAULT_MONTHS = 48
DEFAULT_PROJECTS = 180
FUTURE_MONTHS = 12  # the question engine forecasts up to 12 months past the reference month


def default_reference_month(start: Month = DEFAULT_START, months: int = DEFAULT_MONTHS) -> Month:
    """The last generated month minus 12: leaves a year of future to forecast."""
    return start + (months - 1 - FUTURE_MONTHS)
