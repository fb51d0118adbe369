"""A Chinese answer about a place says its months in Chinese; the JSON keeps "January 2021"."""

from __future__ import annotations

from foretab.engine import Engine


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
