"""Relative single-month expressions and "current price" with no other time named."""

from __future__ import annotations

import pytest

from foretab.core.months import Month
from foretab.parse.timexpr import find_time_expression

R = Month(2021, 12)


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("What will it cost three months from now?", R + 3, R + 3),
        ("the price in 6 months' time", R + 6, R + 6),
        ("the price in six months time", R + 6, R + 6),
        ("a year from now", R + 12, R + 12),
        # "a year ago" inside "half a year ago" was read as R - 12
        ("the price half a year ago", R - 6, R - 6),
        ("What will it cost in half a year?", R + 6, R + 6),
        ("half a year from now", R + 6, R + 6),
        # a quarter without its year ("in Q4" was answered for now)
        ("What will the price be in Q2?", Month(2022, 4), Month(2022, 6)),
        ("What was the price in Q4?", Month(2021, 10), Month(2021, 12)),
        ("two months later", R + 2, R + 2),
        ("What is the current average price of X?", R, R),
        ("What is the latest price of X?", R, R),
        (
            "Compared with the current price, will X rise in June 2022?",
            Month(2022, 6),
            Month(2022, 6),
        ),
        ("Will X be above its current price next quarter?", Month(2022, 1), Month(2022, 3)),
    ],
)
def test_relative_expressions(text: str, first: Month, last: Month) -> None:
    window = find_time_expression(text, R)
    assert (window.first, window.last) == (first, last)
