"""The page's example questions name places only where the corpus has them."""

from __future__ import annotations

from foretab.core.catalog import EntityEntry
from foretab.core.months import Month
from foretab.web.examples import candidate_questions

R = Month(2009, 3)


def entry(outer: str, inner: str, name: str) -> EntityEntry:
    return EntityEntry(outer, inner, name, Month(2000, 1), R, 111)


def test_a_one_level_corpus_gets_examples_without_empty_places() -> None:
    questions = candidate_questions([entry("", "", "AAPL"), entry("", "", "MSFT")], R)
    assert questions == [
        "What will the monthly prices of AAPL be in the next six months?",
        "Which of AAPL or MSFT will see a bigger price increase next year?",
        "What will the price of MSFT be next month?",
        "What was the highest price of AAPL in 2009?",
    ]


def test_a_three_level_corpus_names_the_district_and_city() -> None:
    questions = candidate_questions([entry("Shanghai", "Huangpu District", "Bund Garden")] * 2, R)
    assert "What will the price of Bund Garden in Huangpu District, Shanghai be next month?" in (
        questions
    )
    assert "Which project in Huangpu District, Shanghai will be the most expensive next month?" in (
        questions
    )
