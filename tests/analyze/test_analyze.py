"""Question → Plan → answer on a small in-memory fixture, for every answer family.

Expected answers are written out by hand from the fixture's numbers.
"""

from __future__ import annotations

import pytest

from foretab.analyze import analyze
from foretab.core.months import Month
from foretab.core.plan import Aggregate, ChangeMeasure, Comparison, EntityRef, Task
from foretab.errors import ForecastError, QuestionError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question
from foretab.store.catalog import EntityEntry

R = Month(2021, 12)
CITY, DISTRICT = "Nanjing", "Jiangning District"
A = EntityRef(CITY, DISTRICT, "Sun & Moon Garden Phase 2")
B = EntityRef(CITY, DISTRICT, "Lake and River Bay")
C = EntityRef(CITY, DISTRICT, "Poly Central Park")
D = EntityRef("Shenzhen", "Bao'an District", "Poly Central Park")  # same name elsewhere

HISTORY = {
    A: {Month(2021, 10): 9800.0, Month(2021, 11): 9900.0, Month(2021, 12): 10000.004},
    B: {Month(2021, 9): 1900.0, Month(2021, 11): 2000.0},  # no sale in R: current = Nov
    C: {Month(2021, 12): 5000.0},
    D: {Month(2021, 12): 7000.0},
}
FUTURE = {
    A: {Month(2022, 1): 10500.0, Month(2022, 2): 10200.126, Month(2022, 3): 9700.0},
    B: {Month(2022, 1): 2300.0, Month(2022, 2): 1900.0, Month(2022, 3): 2000.0},
    C: {Month(2022, 1): 5000.001, Month(2022, 2): 4000.0, Month(2022, 3): 6000.0},
    D: {Month(2022, 1): 7000.0},
}


@pytest.fixture(scope="module")
def index() -> EntityIndex:
    entries = [
        EntityEntry(r.outer, r.inner, r.name, Month(2021, 1), Month(2021, 12), 12)
        for r in (A, B, C, D)
    ]
    return EntityIndex(entries)


def ask(index: EntityIndex, question: str) -> list[list[str | float]]:
    plan = parse_question(question, index, R)
    result = analyze(plan, HISTORY, FUTURE)
    assert result.text.endswith(".") and len(result.text) < 400
    return result.answer


CASES = [
    # numeric, one project
    ("What will the price of Sun & Moon Garden Phase 2 in Jiangning, Nanjing be next month?", [[10500.0]]),
    ("what will sun and moon garden phase 2 cost in february 2022", [[10200.13]]),
    ("What is the mean price of Lake and River Bay in Jiangning expected to be in Q1 2022?", [[2066.67]]),
    ("Highest price of Poly Central Park in Jiangning District over the next three months?", [[6000.0]]),
    ("Lowest price of Poly Central Park in Jiangning, Nanjing in the next quarter?", [[4000.0]]),
    ("What will the monthly prices of Lake and River Bay be from January to March 2022?",
     [["January 2022", 2300.0], ["February 2022", 1900.0], ["March 2022", 2000.0]]),
    # numeric, several projects
    ("What will the prices of Lake and River Bay and Sun & Moon Garden Phase 2 be next month?",
     [["Lake and River Bay", 2300.0], ["Sun & Moon Garden Phase 2", 10500.0]]),
    ("What will the prices of Poly Central Park in Jiangning and Lake and River Bay be, month by month, in the first two months of 2022?",
     [["Poly Central Park", "January 2022", 5000.0], ["Poly Central Park", "February 2022", 4000.0],
      ["Lake and River Bay", "January 2022", 2300.0], ["Lake and River Bay", "February 2022", 1900.0]]),
    # vs current (current A = 10000.00, B = 2000.00 from November, C = 5000.00)
    ("Will Sun & Moon Garden Phase 2 rise or fall next month compared with now?", [["Increase"]]),
    ("Will the price of Lake and River Bay go up or down in February 2022?", [["Decrease"]]),
    ("Compared with the current price, will Poly Central Park in Jiangning rise next month?", [["No change"]]),
    ("Will the mean price of Lake and River Bay in Q1 2022 be higher than its current price?", [["Increase"]]),
    # which rise / fall
    ("Which of Sun & Moon Garden Phase 2, Lake and River Bay and Poly Central Park in Jiangning will rise next month?",
     [["Sun & Moon Garden Phase 2"], ["Lake and River Bay"]]),
    ("Which of Sun & Moon Garden Phase 2 or Lake and River Bay will fall next month?", [["None"]]),
    ("Which of Poly Central Park in Jiangning, Sun & Moon Garden Phase 2 will drop in February 2022?",
     [["Poly Central Park"]]),
    # rises / falls most, absolute and relative
    ("Which of Sun & Moon Garden Phase 2 or Lake and River Bay will see a bigger increase next month?",
     [["Sun & Moon Garden Phase 2"]]),
    ("Which of Sun & Moon Garden Phase 2 or Lake and River Bay will see a bigger percentage increase next month?",
     [["Lake and River Bay"]]),
    ("Which of Lake and River Bay and Sun & Moon Garden Phase 2 will fall the most in March 2022?",
     [["Sun & Moon Garden Phase 2"]]),
    ("Which of Lake and River Bay and Sun & Moon Garden Phase 2 will fall the most in relative terms in March 2022?",
     [["Sun & Moon Garden Phase 2"]]),
    ("Which of Sun & Moon Garden Phase 2 or Poly Central Park in Jiangning will rise the most in February 2022?",
     [["Sun & Moon Garden Phase 2"]]),
    ("Which of Lake and River Bay or Poly Central Park in Jiangning will rise the most in February 2022?",
     [["None"]]),
    # highest / lowest (ties go to the first in question order)
    ("Which of Lake and River Bay or Sun & Moon Garden Phase 2 will have the highest price next month?",
     [["Sun & Moon Garden Phase 2"]]),
    ("Which of Lake and River Bay or Poly Central Park in Jiangning will be cheaper in March 2022?",
     [["Lake and River Bay"]]),
    ("Which of Poly Central Park in Jiangning or Lake and River Bay will have the lower peak price in Q1 2022?",
     [["Lake and River Bay"]]),
    # history
    ("What was the price of Sun & Moon Garden Phase 2 last month?", [[9900.0]]),
    ("What were the monthly prices of Lake and River Bay from September to November 2021?",
     [["September 2021", 1900.0], ["November 2021", 2000.0]]),
    ("What was the mean price of Sun & Moon Garden Phase 2 over the past three months?", [[9900.0]]),
]  # fmt: skip


@pytest.mark.parametrize(("question", "answer"), CASES, ids=[q[:60] for q, _ in CASES])
def test_answer(index: EntityIndex, question: str, answer: list) -> None:
    assert ask(index, question) == answer


def test_ties_go_to_the_first_project(index: EntityIndex) -> None:
    history = {**HISTORY, B: {Month(2021, 12): 10000.0}}
    future = {**FUTURE, B: {Month(2022, 1): 10500.0}}
    for first, second in ((A, B), (B, A)):
        question = f"Which of {first.name} or {second.name} will be highest next month?"
        plan = parse_question(question, index, R)
        assert plan.comparison is Comparison.HIGHEST
        assert analyze(plan, history, future).answer == [[first.name]]
        question = f"Which of {first.name} or {second.name} will rise the most next month?"
        assert analyze(parse_question(question, index, R), history, future).answer == [[first.name]]


def test_relative_measure_and_task(index: EntityIndex) -> None:
    plan = parse_question(
        "Which of Sun & Moon Garden Phase 2 or Lake and River Bay grows at a faster rate in Q1 2022?",
        index,
        R,
    )
    assert plan.measure is ChangeMeasure.RELATIVE
    assert plan.comparison is Comparison.RISES_MOST
    assert (plan.task, plan.aggregate) == (Task.REASONING, Aggregate.MEAN)


def test_same_name_in_two_districts_needs_a_place(index: EntityIndex) -> None:
    plan = parse_question("Price of Poly Central Park in Bao'an, Shenzhen next month?", index, R)
    assert plan.entities == (D,)
    assert analyze(plan, HISTORY, FUTURE).answer == [[7000.0]]


def test_missing_forecast_month_is_a_forecast_error(index: EntityIndex) -> None:
    plan = parse_question(
        "Price of Poly Central Park in Shenzhen in Q1 2022, each month?", index, R
    )
    with pytest.raises(ForecastError, match="February 2022"):
        analyze(plan, HISTORY, FUTURE)


def test_history_month_without_sales_is_a_question_error(index: EntityIndex) -> None:
    plan = parse_question("What was the price of Lake and River Bay in October 2021?", index, R)
    with pytest.raises(QuestionError, match="no price"):
        analyze(plan, HISTORY, FUTURE)


def test_no_current_price_is_an_error(index: EntityIndex) -> None:
    plan = parse_question("Will Lake and River Bay rise next month?", index, R)
    with pytest.raises(QuestionError, match="current price"):
        analyze(plan, {B: {}}, FUTURE)
