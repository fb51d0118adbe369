"""Plans of the issue-10 families over the real corpus's catalog (R = 2021-12)."""

from __future__ import annotations

import pytest

from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    ChangeMeasure,
    Comparison,
    Extreme,
    Language,
    Metric,
    ScopeOp,
)
from foretab.errors import QuestionError, UnknownEntityError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question

R = Month(2021, 12)
GL = "Greenland Lixiang City in Jiangning, Nanjing"


def plan(index: EntityIndex, question: str):
    return parse_question(question, index, R)


def test_units_over_a_window_are_summed(corpus_index: EntityIndex) -> None:
    p = plan(corpus_index, f"How many units did {GL} sell in 2021?")
    assert (p.metric, p.aggregate) == (Metric.UNITS, Aggregate.SUM)


def test_average_over_a_window_is_the_mean(corpus_index: EntityIndex) -> None:
    assert (
        plan(corpus_index, f"What was the average price of {GL} in 2020?").aggregate
        is Aggregate.MEAN
    )
    each = plan(corpus_index, f"What was the price of {GL} in each month of 2020?")
    assert each.aggregate is Aggregate.EACH


def test_change_threshold_which_month(corpus_index: EntityIndex) -> None:
    p = plan(corpus_index, f"By what percentage will the price of {GL} change by March 2022?")
    assert (p.change, p.comparison) == (ChangeMeasure.RELATIVE, Comparison.NONE)
    t = plan(corpus_index, f"Will the price of {GL} be above 25,000 in February 2022?")
    assert t.threshold is not None and t.threshold.above and t.threshold.value == 25000
    w = plan(corpus_index, f"In which month of 2021 was {GL} most expensive?")
    assert w.which_month is Extreme.HIGHEST


def test_no_time_defaults_are_recorded(corpus_index: EntityIndex) -> None:
    now = plan(corpus_index, f"How much does {GL} cost?")
    assert (now.window.first, now.current) == (R, True) and "no time" in now.assumption
    rise = plan(corpus_index, f"Is {GL} going up?")
    assert rise.window.first == R + 1 and rise.comparison is Comparison.VS_CURRENT
    assert "next month" in rise.assumption


def test_scopes(corpus_index: EntityIndex) -> None:
    top = plan(corpus_index, "What are the top 5 most expensive projects in Shanghai next month?")
    assert top.scope is not None and (top.scope.op, top.scope.n) == (ScopeOp.TOP, 5)
    assert [s.outer for s in top.scopes] == ["Shanghai"] and top.scopes[0].inner is None
    # a future scope's candidates are its projects observed in R-11..R
    assert top.entities and all(r.outer == "Shanghai" for r in top.entities)
    both = plan(
        corpus_index,
        "What was the average price in Jianye and Jiangning, Nanjing respectively in August 2021?",
    )
    assert [s.inner for s in both.scopes] == ["Jianye District", "Jiangning District"]
    pick = plan(
        corpus_index,
        "Among the five best-selling projects in Jiangning, Nanjing in May 2021, which had the lowest price?",
    )
    assert pick.scope is not None
    assert (pick.scope.op, pick.scope.rank_by, pick.scope.extreme, pick.scope.n) == (
        ScopeOp.TOP_THEN_PICK, Metric.UNITS, Extreme.LOWEST, 5,
    )  # fmt: skip


def test_chinese(corpus_index: EntityIndex) -> None:
    p = plan(corpus_index, "南京市江宁区绿地理想城下个月的价格是多少？")
    assert p.language is Language.ZH and p.window.first == R + 1
    assert p.entities[0].name_zh == "绿地理想城"
    r = plan(
        corpus_index, "请问在2019年9月，苏州市吴江区哪些小区的均价在10000-20000之间并且销量最高？"
    )
    assert r.scope is not None and r.scope.op is ScopeOp.FILTER_THEN_PICK
    assert (r.scope.low, r.scope.high) == (10000, 20000)


@pytest.mark.parametrize(
    ("question", "cause"),
    [
        (f"Who is the developer of {GL}?", "developer"),
        (f"What is the floor area of {GL}?", "floor area"),
        (f"What is the monthly rent at {GL}?", "rent"),
        (f"Why did the price of {GL} fall in 2021?", "why"),
        (f"What was the price of {GL} in 2021 and what will it be next year?", "two questions"),
        (f"What will the price of {GL} be in 2030?", "2030"),
        ("南京市江宁区绿地理想城的开发商是谁？", "开发商"),
    ],
)
def test_refusals_name_the_cause(corpus_index: EntityIndex, question: str, cause: str) -> None:
    with pytest.raises(QuestionError, match=cause):
        plan(corpus_index, question)


def test_unknown_places_are_named(corpus_index: EntityIndex) -> None:
    with pytest.raises(UnknownEntityError, match="Chengdu"):
        plan(corpus_index, "What is the average price in Chengdu next month?")


@pytest.mark.parametrize(
    "question",
    [
        "what is the price of sunshine towers in jiangning next month",
        "南京市江宁区阳光天堂下个月的价格是多少？",
    ],
)
def test_an_unknown_project_in_a_place_is_not_read_as_the_place(
    corpus_index: EntityIndex, question: str
) -> None:
    with pytest.raises(UnknownEntityError, match="unknown project"):
        plan(corpus_index, question)


def test_scope_phrasings_are_not_refused(corpus_index: EntityIndex) -> None:
    for question in (
        "Name the five priciest communities in Xuhui, Shanghai in June 2021.",
        "What was the total number of homes sold in Jianye, Nanjing in March 2021?",
        "请问在2022年7月，武汉市江汉区最便宜的五个小区分别是哪几个？",
    ):
        assert plan(corpus_index, question).scope is not None


def test_chinese_reasoning_and_change(corpus_index: EntityIndex) -> None:
    fall = plan(corpus_index, "南京市江宁区绿地理想城下季度会下跌吗？")
    assert (fall.comparison, fall.aggregate) == (Comparison.VS_CURRENT, Aggregate.MEAN)
    more = plan(corpus_index, "南京市江宁区绿地理想城2022年3月的价格比现在高多少？")
    assert more.change is ChangeMeasure.ABSOLUTE
    pct = plan(corpus_index, "南京市江宁区绿地理想城到2022年3月的涨幅是多少？")
    assert pct.change is ChangeMeasure.RELATIVE
