"""Districts' direction and change rankings (issue 30): read as asked, never as a price ranking.

Before, "which district of Nanjing rose the most in 2021" was planned as "the district
of Nanjing with the highest mean price" (a wrong answer that looked right), and "will
A and B rise next year" as "which of A or B rises most".
"""

from __future__ import annotations

import pytest

from foretab.core.canonical import canonical
from foretab.core.months import Month
from foretab.core.plan import ChangeMeasure, Extreme, PlaceOp
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question

R = Month(2021, 12)


@pytest.mark.parametrize(
    ("question", "op", "extreme", "n"),
    [
        ("Which district of Nanjing rose the most in 2021?", PlaceOp.COMPARE, Extreme.HIGHEST, 1),
        ("Which district of Nanjing will see the largest increase next month?",
         PlaceOp.COMPARE, Extreme.HIGHEST, 1),
        ("Which district of Nanjing will fall the most next year?",
         PlaceOp.COMPARE, Extreme.LOWEST, 1),
        ("Which 3 districts of Nanjing will rise the most next year?",
         PlaceOp.RANK, Extreme.HIGHEST, 3),
        ("南京哪个区明年涨得最多？", PlaceOp.COMPARE, Extreme.HIGHEST, 1),
        ("南京哪个区下个月跌得最多？", PlaceOp.COMPARE, Extreme.LOWEST, 1),
    ],
)  # fmt: skip
def test_a_change_ranking_of_a_citys_districts(
    corpus_index: EntityIndex, question: str, op: PlaceOp, extreme: Extreme, n: int
) -> None:
    plan = parse_question(question, corpus_index, R)
    assert plan.place is not None
    assert (plan.place.op, plan.place.extreme, plan.place.n) == (op, extreme, n)
    assert plan.place.change is ChangeMeasure.ABSOLUTE
    assert {s.outer for s in plan.scopes} == {"Nanjing"} and len(plan.scopes) == 12
    said = canonical(plan)
    assert any(word in said for word in ("rises most", "falls most", "涨幅最大", "跌幅最大")), said


def test_a_price_ranking_of_districts_is_still_one(corpus_index: EntityIndex) -> None:
    plan = parse_question("Which district of Nanjing is the most expensive?", corpus_index, R)
    assert plan.place is not None
    assert (plan.place.op, plan.place.change) == (PlaceOp.RANK, None)


@pytest.mark.parametrize(
    "question",
    [
        "Will the average prices of Jiangning and Gulou in Nanjing rise next year?",
        "江宁区和鼓楼区的均价明年会涨吗？",
    ],
)
def test_will_several_places_rise_asks_each(corpus_index: EntityIndex, question: str) -> None:
    plan = parse_question(question, corpus_index, R)
    assert plan.place is not None and plan.place.op is PlaceOp.DIRECTION
    assert [s.inner for s in plan.scopes] == ["Jiangning District", "Gulou District"]


def test_which_of_several_places_rises_more_is_still_a_ranking(corpus_index: EntityIndex) -> None:
    plan = parse_question(
        "Which of Jiangning and Gulou will rise more next month?", corpus_index, R
    )
    assert plan.place is not None
    assert (plan.place.op, plan.place.extreme) == (PlaceOp.COMPARE, Extreme.HIGHEST)
    assert plan.place.change is ChangeMeasure.ABSOLUTE
