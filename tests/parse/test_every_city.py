"""Every city as the subject when none is named ("which city is the most expensive?").

Before, these were refused as "no project is named"; the gold answers are checked on the
real corpus in tests/engine/test_compose_matrix.py (the "cities×…" cells).
"""

from __future__ import annotations

import pytest

from foretab.core.canonical import canonical
from foretab.core.months import Month
from foretab.core.plan import PlaceOp
from foretab.errors import QuestionError
from foretab.parse.entities import EntityIndex
from foretab.parse.parser import parse_question

R = Month(2021, 12)


@pytest.mark.parametrize(
    ("question", "op", "n", "said"),
    [
        ("Which city has the highest average price in 2021?", PlaceOp.RANK, 1,
         "the city with the highest mean price"),
        ("What are the 3 cities with the highest average price in 2021?", PlaceOp.RANK, 3,
         "the top 3 cities by mean price"),
        ("What were the two cheapest cities last month?", PlaceOp.RANK, 2,
         "the bottom 2 cities by mean price"),
        ("List the average price of every city in December 2021.", PlaceOp.EVERY, 1,
         "every city"),
        ("2021年哪个城市房价最高？", PlaceOp.RANK, 1, "最高的城市"),
        ("2021年房价最低的3个城市", PlaceOp.RANK, 3, "最低的3个城市"),
        ("2021年各城市的均价", PlaceOp.EVERY, 1, "各城市"),
    ],
)  # fmt: skip
def test_every_city_is_ranked_or_listed(
    corpus_index: EntityIndex, question: str, op: PlaceOp, n: int, said: str
) -> None:
    plan = parse_question(question, corpus_index, R)
    assert plan.place is not None and plan.place.op is op
    assert op is PlaceOp.EVERY or plan.place.n == n
    assert {s.outer for s in plan.scopes} == set(corpus_index.outers)
    assert all(s.inner is None for s in plan.scopes)
    assert said in canonical(plan)


@pytest.mark.parametrize(
    ("question", "word"),
    [
        # a project's extreme, not the places' means (districts were answered so before)
        ("Which city has the most expensive project?", "project"),
        ("Which district of Nanjing has the most expensive project?", "project"),
        ("南京哪个区的项目最贵？", "项目"),
        ("Which district of Nanjing has the most projects?", "projects"),
        # every district of every city is not a subject
        ("Which district of which city is the most expensive?", "district"),
    ],
)
def test_a_question_about_projects_or_all_districts_is_refused(
    corpus_index: EntityIndex, question: str, word: str
) -> None:
    with pytest.raises(QuestionError, match=word):
        parse_question(question, corpus_index, R)


def test_a_named_city_and_a_project_named_city_are_unchanged(corpus_index: EntityIndex) -> None:
    plan = parse_question(
        "Which district of Nanjing has the highest average project price in 2021?",
        corpus_index,
        R,
    )
    assert plan.place is not None and {s.outer for s in plan.scopes} == {"Nanjing"}
    plan = parse_question(
        "What was the price of Greenland Lixiang City in Jiangning, Nanjing in 2021?",
        corpus_index,
        R,
    )
    assert plan.place is None and len(plan.entities) == 1
