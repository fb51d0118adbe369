"""A place month by month: a Chinese answer says its months in Chinese (the JSON keeps
"January 2021"), two places keep "each month", one place is named once."""

from __future__ import annotations

import pytest

from foretab.engine import Engine
from foretab.errors import QuestionError


def test_a_place_month_by_month_names_its_months_in_chinese(mini_duckdb: str) -> None:
    with Engine.open(mini_duckdb) as engine:
        each = engine.ask("2021年1月到3月上海浦东新区每个月的均价是多少？")
        peak = engine.ask("2021年上海浦东新区哪个月均价最高？")
    assert [row[0] for row in each.answer] == ["January 2021", "February 2021", "March 2021"]
    assert "2021年1月" in each.text and "2021年3月" in each.text
    assert "January" not in each.text and "March" not in each.text
    (month,) = peak.answer[0]
    year, number = month.split()[1], ["January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December"].index(month.split()[0]) + 1  # fmt: skip
    assert f"{year}年{number}月" in peak.text and month not in peak.text


def test_two_places_month_by_month_keep_each_month(mini_duckdb: str) -> None:
    # "A and B each month" was answered with each place's mean over the window
    with Engine.open(mini_duckdb) as engine:
        both = engine.ask(
            "What was the average price in Huangpu and Pudong in Shanghai each month from "
            "January to February 2021?"
        )
        one = engine.ask(
            "What was the average price in Pudong, Shanghai each month from January to "
            "February 2021?"
        )
        with pytest.raises(QuestionError, match="each month"):  # was the window's total
            engine.ask("How many units did Pudong, Shanghai sell each month in 2021?")
    months = [row[1] for row in both.answer]
    assert months == ["January 2021", "February 2021"] * 2
    assert [row[1:] for row in both.answer[2:]] == one.answer
    assert "January 2021 " in one.text and "Pudong New Area January" not in one.text
