"""Time as people type it (issue 31, docs/design.md §3): each expression with its window (R = 2021-12).

"between 2019 and 2021", "from Q2 to Q4 2021", "H1", "so far this year", "recently"
(R−2..R, stated in the plan), YoY / MoM (the month against the same month a year earlier /
the month before), Chinese numerals and their Chinese forms.
"""

from __future__ import annotations

import pytest

from foretab.core.months import Month
from foretab.errors import QuestionError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question
from foretab.parse.timexpr import find_time_expression
from foretab.parse.zh_time import find_zh_time

R = Month(2021, 12)

EN = {
    "between 2019 and 2021": ((2019, 1), (2021, 12)),
    "from 2019 to 2021": ((2019, 1), (2021, 12)),
    "from Q2 to Q4 2021": ((2021, 4), (2021, 12)),
    "between Q1 and Q3 of 2021": ((2021, 1), (2021, 9)),
    "Q2-Q4 2021": ((2021, 4), (2021, 12)),
    "in H1 2021": ((2021, 1), (2021, 6)),
    "H2 2022": ((2022, 7), (2022, 12)),
    "so far this year": ((2021, 1), (2021, 12)),
    "recently": ((2021, 10), (2021, 12)),
    "in recent months": ((2021, 10), (2021, 12)),
}
ZH = {
    "2019年到2021年之间": ((2019, 1), (2021, 12)),
    "2019年至2021年": ((2019, 1), (2021, 12)),
    "2021年第二季度到第四季度": ((2021, 4), (2021, 12)),
    "2021年Q2至Q4": ((2021, 4), (2021, 12)),
    "二〇二一年八月": ((2021, 8), (2021, 8)),
    "2021年十二月": ((2021, 12), (2021, 12)),
    "最近": ((2021, 10), (2021, 12)),
    "今年以来": ((2021, 1), (2021, 12)),
    "2021年上半年": ((2021, 1), (2021, 6)),
}


@pytest.mark.parametrize(("text", "span"), EN.items(), ids=list(EN))
def test_english(text: str, span: tuple[tuple[int, int], tuple[int, int]]) -> None:
    window = find_time_expression(f"What was the price of X {text}?", R)
    assert (window.first, window.last) == (Month(*span[0]), Month(*span[1]))


@pytest.mark.parametrize(("text", "span"), ZH.items(), ids=list(ZH))
def test_chinese(text: str, span: tuple[tuple[int, int], tuple[int, int]]) -> None:
    from foretab.parse.passes import zh_year_digits

    found = find_zh_time(zh_year_digits(f"某小区{text}的均价"), R)
    assert found is not None
    assert (found.window.first, found.window.last) == (Month(*span[0]), Month(*span[1]))


Q = "Greenland Lixiang City in Jiangning, Nanjing"


@pytest.mark.parametrize(
    ("question", "months"),
    [
        (f"What was the YoY change in the price of {Q} in December 2021?", [(2020, 12), (2021, 12)]),
        (f"What was the month-on-month change in the price of {Q} in November 2021?", [(2021, 10), (2021, 11)]),
        ("南京江宁区绿地理想城2021年12月均价同比变化多少", [(2020, 12), (2021, 12)]),
        ("南京江宁区绿地理想城2021年11月均价环比变化多少", [(2021, 10), (2021, 11)]),
        ("MoM change of the average price in Jiangning, Nanjing in November 2021?", [(2021, 10), (2021, 11)]),
    ],
)  # fmt: skip
def test_yoy_and_mom_compare_two_months(
    corpus_index: EntityIndex, question: str, months: list[tuple[int, int]]
) -> None:
    plan = parse_question(question, corpus_index, R)
    assert plan.window.months == [Month(*m) for m in months]
    assert plan.change is not None or plan.place is not None


def test_yoy_over_several_months_is_refused_naming_it(corpus_index: EntityIndex) -> None:
    with pytest.raises(QuestionError, match="YoY"):
        parse_question(f"What was the YoY change in the price of {Q} in 2021?", corpus_index, R)


def test_recently_is_stated(corpus_index: EntityIndex) -> None:
    plan = parse_question(f"What has the average price of {Q} been recently?", corpus_index, R)
    assert "last three months" in plan.assumption
    plan = parse_question("最近南京江宁区绿地理想城的均价是多少？", corpus_index, R)
    assert "最近三个月" in plan.assumption
