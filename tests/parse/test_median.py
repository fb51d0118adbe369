"""A window's median (docs/design.md §4.1): one project's months; a place's is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from foretab.analyze.scenarios import reduce
from foretab.analyze.values import dmedian
from foretab.core.canonical import canonical
from foretab.core.months import Month
from foretab.core.plan import Aggregate, Metric
from foretab.errors import QuestionError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question

R = Month(2021, 12)
GL = "Greenland Lixiang City in Jiangning, Nanjing"


@pytest.mark.parametrize(
    "question",
    [
        f"What was the median monthly price of {GL} in 2021?",
        f"Median price of {GL} from March to August 2021?",
        f"What will the median price of {GL} be in the first half of 2022?",
        "南京江宁区绿地理想城2021年月均价的中位数是多少？",
        "南京江宁区绿地理想城2021年3月到8月价格中位数",
    ],
)
def test_median_over_a_window_is_read(corpus_index: EntityIndex, question: str) -> None:
    plan = parse_question(question, corpus_index, R)
    assert plan.aggregate is Aggregate.MEDIAN
    assert "median" in canonical(plan)


def test_median_of_units_is_not_summed(corpus_index: EntityIndex) -> None:
    plan = parse_question(
        f"What was the median monthly units sold of {GL} in 2021?", corpus_index, R
    )
    assert (plan.aggregate, plan.metric) == (Aggregate.MEDIAN, Metric.UNITS)


@pytest.mark.parametrize(
    "question",
    [
        "What was the median price in Longhua, Shenzhen in June 2021?",
        "What was the median price of the projects in Huqiu, Suzhou in December 2021?",
        f"What was the median price of {GL} in May 2021?",
        "2021年6月深圳龙华区均价的中位数是多少？",
    ],
)
def test_a_median_no_plan_carries_is_refused_naming_it(
    corpus_index: EntityIndex, question: str
) -> None:
    with pytest.raises(QuestionError, match=r"median|中位数"):
        parse_question(question, corpus_index, R)


def test_decimal_median() -> None:
    assert dmedian([3.0, 1.0, 2.0]) == 2.0
    assert dmedian([21392.35, 21527.68]) == 21460.02  # .015 rounds half up
    assert dmedian([1.0, 2.0, 3.0, 10.0]) == 2.5


def test_scenario_median_skips_absent_months() -> None:
    values = np.array([[1.0, 5.0, 3.0, 100.0], [4.0, 2.0, 8.0, 100.0]])
    present = np.array([True, True, True, False])
    assert reduce(values, present, Aggregate.MEDIAN).tolist() == [3.0, 4.0]
    assert np.isnan(reduce(values, np.zeros(4, bool), Aggregate.MEDIAN)).all()
