"""The units-weighted price (docs/design.md §4.1: "weighted by units" asks for it and says so)."""

from __future__ import annotations

import pytest

from foretab.analyze.values import weighted_mean
from foretab.core.canonical import canonical
from foretab.core.months import Month
from foretab.core.plan import Aggregate, Metric, ScopeOp
from foretab.errors import QuestionError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question

R = Month(2021, 12)


@pytest.mark.parametrize(
    "question",
    [
        "What was the units-weighted average price in Jiangning, Nanjing in June 2021?",
        "What was the average price in Jiangning, Nanjing in June 2021, weighted by units sold?",
        "What was the sales-weighted average price in Suzhou in December 2021?",
        "2021年6月南京江宁区按成交套数加权的均价是多少？",
        "2021年姑苏区成交量加权均价",
    ],
)
def test_a_place_weighted_by_units(corpus_index: EntityIndex, question: str) -> None:
    plan = parse_question(question, corpus_index, R)
    assert plan.scope is not None and plan.scope.op is ScopeOp.WEIGHTED
    assert plan.metric is Metric.VALUE  # the units weigh the price; they are not the measure
    assert "weighted by" in canonical(plan)


def test_a_project_weighted_over_a_window(corpus_index: EntityIndex) -> None:
    q = "What was the units-weighted average price of Greenland Lixiang City in Jiangning, Nanjing in 2021?"
    plan = parse_question(q, corpus_index, R)
    assert (plan.aggregate, plan.metric) == (Aggregate.WEIGHTED, Metric.VALUE)


@pytest.mark.parametrize(
    ("question", "word"),
    [
        ("What will the units-weighted average price in Jiangning, Nanjing be next month?", "past months"),
        ("Which of Jiangning or Jianye had the higher units-weighted average price in 2021?", "units-weighted"),
        ("What was the weighted average price in Jiangning, Nanjing in June 2021?", "weighted"),
    ],
)  # fmt: skip
def test_a_weight_no_plan_carries_is_refused(
    corpus_index: EntityIndex, question: str, word: str
) -> None:
    with pytest.raises(QuestionError, match=word):
        parse_question(question, corpus_index, R)


def test_weighted_mean_is_exact() -> None:
    assert weighted_mean([(10.0, 1.0), (20.0, 3.0)]) == 17.5
    assert weighted_mean([(0.01, 1.0), (0.02, 1.0)]) == 0.02  # 0.015 rounds half up
    with pytest.raises(QuestionError):
        weighted_mean([(10.0, 0.0)])
