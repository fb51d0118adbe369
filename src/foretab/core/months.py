"""Calendar months as a small ordered value type shared by every stage."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_ISO = re.compile(r"^\s*(\d{4})-(\d{1,2})(?:-\d{1,2})?\s*$")


@dataclass(frozen=True, order=True, slots=True)
class Month:
    """A calendar month; ``Month(2021, 12) + 1 == Month(2022, 1)``."""

    year: int
    month: int

    def __post_init__(self) -> None:
        if not 1 <= self.month <= 12:
            raise ValueError(f"month must be 1..12, got {self.month}")

    @classmethod
    def parse(cls, text: str) -> Month:
        """Parse ``YYYY-MM`` (a trailing ``-DD`` is accepted and ignored)."""
        match = _ISO.match(str(text))
        if not match:
            raise ValueError(f"not a YYYY-MM month: {text!r}")
        return cls(int(match.group(1)), int(match.group(2)))

    @classmethod
    def from_date(cls, value: dt.date) -> Month:
        return cls(value.year, value.month)

    @classmethod
    def from_index(cls, index: int) -> Month:
        return cls(index // 12, index % 12 + 1)

    @property
    def index(self) -> int:
        """Months since year 0: differences of indices are month distances."""
        return self.year * 12 + self.month - 1

    def __add__(self, months: int) -> Month:
        return Month.from_index(self.index + months)

    def __sub__(self, other: int) -> Month:
        return Month.from_index(self.index - other)

    def minus(self, other: Month) -> int:
        """Number of months from ``other`` to ``self``."""
        return self.index - other.index

    @property
    def first_day(self) -> dt.date:
        return dt.date(self.year, self.month, 1)

    @property
    def iso(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"

    @property
    def label(self) -> str:
        """The answer format: ``"January 2022"``."""
        return f"{MONTH_NAMES[self.month - 1]} {self.year}"

    def __str__(self) -> str:
        return self.iso


def month_range(first: Month, last: Month) -> list[Month]:
    """Every month from ``first`` to ``last`` inclusive (empty when ``last < first``)."""
    return [Month.from_index(i) for i in range(first.index, last.index + 1)]
