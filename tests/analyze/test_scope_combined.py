"""Several places' units as one total: "in total", "altogether", "across", 一共, 合计.

Without such a word each place's total is listed (one row a place); with it the answer is
their sum, each place's share in the text. The gold is summed here from the mini CSV.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pandas as pd
import pytest

from foretab.analyze.scope import analyze_scope
from foretab.core.plan import ScopeRef
from foretab.core.series import ScopeOutcome
from foretab.engine import Engine
from foretab.errors import QuestionError
from tests.conftest import MINI_CSV

SH, HP, PD = "Shanghai", "Huangpu District", "Pudong New Area"


@pytest.fixture(scope="module")
def engine(mini_duckdb: str) -> Iterator[Engine]:
    with Engine.open(mini_duckdb) as opened:
        yield opened


@pytest.fixture(scope="module")
def units_2021() -> dict[str, float]:
    csv = pd.read_csv(MINI_CSV)
    rows = csv[(csv.city == SH) & csv.month.str.startswith("2021-")]
    return {d: float(rows[rows.district == d].units_sold.sum()) for d in (HP, PD)}


@pytest.mark.parametrize(
    "question",
    [
        "How many units did Huangpu and Pudong in Shanghai sell in total in 2021?",
        "How many units did Huangpu and Pudong in Shanghai sell altogether in 2021?",
        "What were the total units sold across Huangpu and Pudong in Shanghai in 2021?",
        "2021年上海黄浦区和浦东新区一共卖了多少套？",
        "2021年上海黄浦区和浦东新区的合计销量是多少？",
    ],
)
def test_a_total_over_places_is_their_sum(
    engine: Engine, units_2021: dict[str, float], question: str
) -> None:
    answer = engine.ask(question)
    assert answer.answer == [[units_2021[HP] + units_2021[PD]]]
    for share in units_2021.values():  # each place's share is said
        assert f"{share:,.0f}" in answer.text


def test_without_a_combining_word_each_place_is_listed(
    engine: Engine, units_2021: dict[str, float]
) -> None:
    answer = engine.ask("What were the total units sold in Huangpu and Pudong in Shanghai in 2021?")
    assert answer.answer == [[units_2021[HP]], [units_2021[PD]]]


@pytest.mark.parametrize(
    ("question", "word"),
    [
        # a mean over two places is not their sum: the word is refused by name
        ("What was the average price of Huangpu and Pudong in Shanghai combined in 2021?", "combined"),
        # two projects' totals are each listed: "altogether" would be dropped
        (
            "How many units did Bund Garden and Dapuqiao Terrace in Huangpu, Shanghai sell altogether in 2021?",
            "altogether",
        ),
    ],
)  # fmt: skip
def test_a_combining_word_no_plan_carries_is_refused(
    engine: Engine, question: str, word: str
) -> None:
    with pytest.raises(QuestionError, match=word):
        engine.ask(question)


def test_a_place_inside_another_is_not_counted_twice(engine: Engine) -> None:
    # A plan that holds a city and one of its districts would count the district's
    # projects twice in a sum, so the sum is refused (asked: the test below).
    plan = engine.parse("How many units did Huangpu and Pudong in Shanghai sell in total in 2021?")
    nested = dataclasses.replace(plan, scopes=(ScopeRef(SH), ScopeRef(SH, HP)))
    outcomes = (ScopeOutcome(10, value=100.0), ScopeOutcome(4, value=40.0))
    with pytest.raises(QuestionError, match="inside"):
        analyze_scope(nested, {}, {}, {}, outcomes)


def test_a_city_joined_to_its_own_district_is_a_subject_beside_it(
    engine: Engine, units_2021: dict[str, float]
) -> None:
    # "Shanghai and Pudong" named both; the city was read as Pudong's qualifier and
    # dropped, so the answer was Pudong's alone.
    csv = pd.read_csv(MINI_CSV)
    shanghai = float(csv[(csv.city == SH) & csv.month.str.startswith("2021-")].units_sold.sum())
    answer = engine.ask("How many units did Shanghai and Pudong sell in 2021?")
    assert answer.answer == [[shanghai], [units_2021[PD]]]  # in question order
    for zh in ("2021年上海和浦东新区的销量分别是多少？", "2021年上海和浦东新区分别卖了多少套？"):
        # 分别 right after a place was read as the start of an unknown project's name
        assert engine.ask(zh).answer == answer.answer
    # ... while a city that qualifies its districts is no subject of its own
    qualified = engine.ask(
        "How many units did Huangpu, Shanghai and Pudong, Shanghai sell in 2021?"
    )
    assert qualified.answer == [[units_2021[HP]], [units_2021[PD]]]
    with pytest.raises(QuestionError, match="inside"):  # a sum would count Pudong twice
        engine.ask("How many units did Shanghai and Pudong sell in total in 2021?")
