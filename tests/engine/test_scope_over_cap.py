"""A place's rows over one query's row cap are read one inner group (district) at a time."""

from __future__ import annotations

import pytest

from foretab.engine.build import build_engine
from foretab.errors import QuestionError

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
