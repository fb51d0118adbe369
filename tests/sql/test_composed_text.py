"""A history or scope statement's text written from parts is the text its AST renders.

``HistoryQuery.compose`` writes a new shape's text from per-kind select texts rendered once
by sqlglot, without building the statement's AST; the worker checks whatever text it gets,
but the text must still be exactly what the AST renders (the trace shows it, and a
verdict is remembered per text).
"""

from __future__ import annotations

import random

import pytest
from tests.sql.test_scope_text import QUERIES, WINDOWS

from foretab.core.catalog import CatalogEntry
from foretab.core.months import Month
from foretab.core.plan import EntityRef, ScopeRef
from foretab.corpus.schema import TableColumns, default_schema
from foretab.sql import build
from foretab.sql.build import history_query, scope_query
from foretab.sql.scope import scope_answer_query

PLACES = [
    ("Nanjing", "Jiangning District"),
    ("Nanjing", "Jianye District"),
    ("Suzhou", "Wuzhong"),
    ("Suzhou", "Gusu"),
    ("Shanghai", "Pudong"),
]
TABLES = [
    CatalogEntry(f"project_price_table_{i}_{year}", "", outer, inner, year, 10)
    for i, (outer, inner) in enumerate(PLACES)
    for year in (2019, 2020, 2021)
]
DIALECTS = ("duckdb", "postgres")

# What each text is checked against: the AST ``build()`` has just made for that check alone,
# rendered with ``copy=False``. The generator copies the tree only so that its own rewrites
# leave the caller's tree as it was; a tree rendered once and dropped renders the same text
# either way, and copying it was ~45% of this module's CPU (~2 ms a statement).


def _entities(rng: random.Random) -> list[EntityRef]:
    return [
        EntityRef(*rng.choice(PLACES), f"Project {rng.randint(0, 30)}")
        for _ in range(rng.randint(1, 8))
    ]


def _months(rng: random.Random) -> tuple[Month, Month]:
    first = Month(rng.choice((2019, 2020, 2021)), rng.randint(1, 12))
    last = Month(rng.choice((2019, 2020, 2021, 2022)), rng.randint(1, 12))
    return (first, last) if first <= last else (last, first)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_history_text_from_parts_is_the_rendered_one(dialect: str) -> None:
    rng = random.Random(1)
    seen = 0
    for _ in range(300):
        tables = rng.sample(TABLES, rng.randint(1, 8))
        query = history_query(tables, _entities(rng), *_months(rng))
        if query is None:
            continue
        assert query.compose is not None
        assert query.compose(dialect) == query.build().sql(dialect=dialect, copy=False)
        seen += 1
    assert seen > 150


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_scope_read_text_from_parts_is_the_rendered_one(dialect: str) -> None:
    rng = random.Random(2)
    for _ in range(100):
        query = scope_query(rng.sample(TABLES, rng.randint(1, 9)), *_months(rng))
        if query is None:
            continue
        assert query.compose is not None
        assert query.compose(dialect) == query.build().sql(dialect=dialect, copy=False)


# 300 random scope answers per dialect cost ~2 s of CPU each (most shapes are new, and a
# new shape's parts are rendered from its AST): the first 100 of the same draws are the
# fast variant, all 300 the slow one.
@pytest.mark.slow_variant("300")
@pytest.mark.parametrize("draws", [100, 300])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_scope_answer_text_from_parts_is_the_rendered_one(dialect: str, draws: int) -> None:
    rng = random.Random(3)
    scopes = [ScopeRef(*place) for place in PLACES] + [ScopeRef("Nanjing"), ScopeRef("Suzhou")]
    seen = 0
    for _ in range(draws):
        months = rng.choice(WINDOWS)
        question = rng.choice(QUERIES)
        query = scope_answer_query(rng.sample(scopes, rng.randint(1, 3)), question, TABLES, months)
        if query is None:
            continue
        assert query.compose is not None
        text = query.compose(dialect)
        assert text == query.build().sql(dialect=dialect, copy=False)
        assert text.count("?" if dialect == "duckdb" else "%s") == len(query.params)
        seen += 1
    assert seen > draws // 2


def test_the_remembered_text_is_the_composed_one() -> None:
    build._TEXT_BY_SHAPE.clear()
    query = history_query(TABLES[:3], [EntityRef("Nanjing", "Jiangning District", "A")],
                          Month(2019, 1), Month(2021, 12))  # fmt: skip
    assert query is not None
    assert query.sql() == query.build().sql(dialect="duckdb", copy=False)
    assert "ast" not in query.__dict__  # written from parts: no AST was built


def test_a_name_sqlglot_quotes_is_quoted_in_the_parts() -> None:
    # A store's names are plain, but the parts must render any name as the AST does.
    odd = [CatalogEntry(name, "", "Nanjing", "Jiangning District", 2021, 1)
           for name in ("select_2021", "Weird Name_2021", "x\"y_2021")]  # fmt: skip
    for table in odd:
        for dialect in DIALECTS:
            query = scope_query([table], Month(2021, 1), Month(2021, 3))
            assert query is not None and query.compose is not None
            assert query.compose(dialect) == query.build().sql(dialect=dialect, copy=False)


@pytest.mark.parametrize(
    "cols",
    [
        default_schema().columns,
        TableColumns("symbol", "month", "close", None, "market", "sector", "stock"),
    ],
)
def test_other_schemas_columns_compose_as_rendered(cols: TableColumns) -> None:
    rng = random.Random(4)
    for _ in range(40):
        query = history_query(rng.sample(TABLES, 3), _entities(rng), *_months(rng), cols)
        if query is None:
            continue
        for dialect in DIALECTS:
            assert query.compose is not None
            assert query.compose(dialect) == query.build().sql(dialect=dialect, copy=False)
        months = rng.choice(WINDOWS)
        answer = scope_answer_query([ScopeRef(*PLACES[0])], rng.choice(QUERIES), TABLES, months,
                                    cols)  # fmt: skip
        if answer is not None and answer.compose is not None:
            assert answer.compose("duckdb") == answer.build().sql(dialect="duckdb", copy=False)
