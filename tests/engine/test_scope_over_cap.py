"""Places read over the row cap one district at a time; every project of a place, forecast."""

from __future__ import annotations

import pytest

from foretab.engine import Engine
from foretab.engine.build import build_engine
from foretab.errors import QuestionError
from foretab.forecast.source import ModelSource
from tests.doubles import SpreadStoreModel

# (question, a cap each district's rows fit under and the city's do not)
CITY_EACH_MONTH = ("List the average price in Shanghai for each month of 2021.", 100)  # 87 + 89
CITY_NEXT_MONTH = (
    "Will the average price in Shanghai rise next month?",
    200,
)  # 24 months: ~186 each


@pytest.mark.parametrize(("question", "cap"), [CITY_EACH_MONTH, CITY_NEXT_MONTH])
def test_a_city_over_the_cap_is_read_by_district(mini_duckdb: str, question: str, cap: int) -> None:
    with build_engine(mini_duckdb, "rules", future="oracle") as engine:
        whole = engine.ask(question)
    with build_engine(mini_duckdb, "rules", future="oracle", max_rows=cap) as engine:
        split = engine.ask(question)
    assert split.answer == whole.answer
    assert whole.trace.sql.count("LIMIT") == 1
    assert split.trace.sql.count("LIMIT") == 2  # one statement per district


def test_a_district_over_the_cap_is_still_refused(mini_duckdb: str) -> None:
    question = "List the average price in Pudong, Shanghai for each month of 2021."
    with (
        build_engine(mini_duckdb, "rules", future="oracle", max_rows=50) as engine,
        pytest.raises(QuestionError, match="more rows than one query may return"),
    ):
        engine.ask(question)


def test_every_project_next_month_carries_each_ones_interval(mini_duckdb: str) -> None:
    spread = lambda e: ModelSource.with_store_dates(SpreadStoreModel(), e.store)  # noqa: E731
    with Engine.open(mini_duckdb, future_source=spread) as engine:
        answer = engine.ask(
            "What will the price of every project in Pudong, Shanghai be next month?"
        )
    assert len(answer.answer) >= 2
    assert [i.row for i in answer.intervals] == list(range(len(answer.answer)))
    for i in answer.intervals:
        assert i.lo <= answer.answer[i.row][1] <= i.hi
    assert "(80%:" in answer.text
