"""Every project of a district or city as the subject (docs/design.md §4.1)."""

from __future__ import annotations

import pytest

from foretab.core.canonical import canonical
from foretab.core.months import Month
from foretab.core.plan import Metric, PlaceOp, ScopeOp
from foretab.errors import QuestionError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question

R = Month(2021, 12)


@pytest.mark.parametrize(
    ("question", "metric"),
    [
        ("List the price of every project in Gusu, Suzhou in December 2021.", Metric.VALUE),
        ("What was the average price of each project in Huqiu, Suzhou in December 2021?", Metric.VALUE),
        ("What were the prices of all projects in Yantian, Shenzhen in June 2021?", Metric.VALUE),
        ("What will the price of every project in Gusu, Suzhou be next month?", Metric.VALUE),
        ("How many units did every project in Yantian, Shenzhen sell in 2021?", Metric.UNITS),
        ("2021年12月苏州姑苏区每个项目的均价", Metric.VALUE),
        ("2021年12月虎丘区各项目均价分别是多少？", Metric.VALUE),
    ],
)  # fmt: skip
def test_every_project_lists_each_one(
    corpus_index: EntityIndex, question: str, metric: Metric
) -> None:
    plan = parse_question(question, corpus_index, R)
    assert plan.scope is not None and plan.scope.op is ScopeOp.EACH
    assert plan.scope.metric is metric
    assert "every project" in canonical(plan)


def test_a_place_as_a_whole_is_still_its_mean(corpus_index: EntityIndex) -> None:
    plan = parse_question(
        "What was the average price in Huqiu, Suzhou in December 2021?", corpus_index, R
    )
    assert plan.scope is None or plan.scope.op is ScopeOp.MEAN
    assert plan.place is None or plan.place.op is PlaceOp.VALUE


def test_all_projects_in_a_range_is_still_a_filter(corpus_index: EntityIndex) -> None:
    q = "请列出南京市溧水区内2021年4月房价位于5000至10000元之间的所有小区。"
    plan = parse_question(q, corpus_index, R)
    assert plan.scope is not None and plan.scope.op is ScopeOp.FILTER


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("What was the highest price of every project in Yantian, Shenzhen in 2021?", "highest"),
        ("List the price of every project in Yantian, Shenzhen for each month of Q4 2021", "each month"),
        ("2021年盐田区每个项目的最高价", "最高"),
        ("What was the median price of every project in Yantian, Shenzhen in 2021?", "median"),
    ],
)  # fmt: skip
def test_what_every_project_cannot_carry_is_refused_by_name(
    corpus_index: EntityIndex, question: str, word: str
) -> None:
    with pytest.raises(QuestionError, match=word):
        parse_question(question, corpus_index, R)
