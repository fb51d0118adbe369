"""The scope answer query's SQL text, remembered per shape, is the text built afresh.

``scope_answer_query`` builds its AST only when its shape's text is not known yet; a
remembered text must be exactly what a fresh build renders for every query of that shape,
and its parameters must fill the text's placeholders one for one.
"""

from __future__ import annotations

import itertools
import random

from foretab.core.catalog import CatalogEntry
from foretab.core.months import Month
from foretab.core.plan import Extreme, Metric, ScopeOp, ScopeQuery, ScopeRef
from foretab.sql import build
from foretab.sql.scope import scope_answer_query

PLACES = [("Nanjing", "Jiangning District"), ("Nanjing", "Jianye District"), ("Suzhou", "Wuzhong")]
TABLES = [
    CatalogEntry(f"t_{i}_{year}", "", outer, inner, year, 10)
    for i, (outer, inner) in enumerate(PLACES)
    for year in (2020, 2021)
]
SCOPES = [ScopeRef("Nanjing", "Jiangning District"), ScopeRef("Nanjing"), ScopeRef("Suzhou")]


BOUNDED = (ScopeOp.FILTER, ScopeOp.FILTER_THEN_PICK)


def _queries() -> list[ScopeQuery]:
    """Every operation, measure, extreme and bound pattern (invalid combinations left out)."""
    found = []
    bounds = ((3, None, None), (2, 15000.0, None), (5, None, 30000.0), (1, 1.0, 2.0))
    for op, metric, extreme, rank_by in itertools.product(
        ScopeOp, Metric, Extreme, (Metric.VALUE, Metric.UNITS)
    ):
        for n, low, high in bounds:
            bounded = low is not None or high is not None
            if op is ScopeOp.WEIGHTED or bounded != (op in BOUNDED):
                continue
            try:
                found.append(ScopeQuery(op, metric, extreme, rank_by, n, low, high))
            except ValueError:
                continue
    return found


QUERIES = _queries()
WINDOWS = [
    [Month(2021, 3)],
    [Month(2020, 11), Month(2020, 12), Month(2021, 1)],  # one run over two years
    [Month(2021, 1), Month(2021, 4), Month(2021, 5)],  # months with a gap: an IN list
    [Month(2020, 1), Month(2020, 6), Month(2021, 12)],
]


def _fresh(query: build.HistoryQuery) -> str:
    return query.build().sql(dialect="duckdb", copy=False)  # a fresh tree, rendered once


def test_a_remembered_scope_text_is_the_one_built_afresh() -> None:
    rng = random.Random(0)
    build._TEXT_BY_SHAPE.clear()
    for _ in range(120):
        scopes = rng.sample(SCOPES, rng.randint(1, 2))
        question = rng.choice(QUERIES)
        months = rng.choice(WINDOWS)
        query = scope_answer_query(scopes, question, TABLES, months)
        if query is None:
            continue
        text = query.sql("duckdb")  # remembered from an earlier question of its shape, or new
        assert text == _fresh(query)
        assert text.count("?") == len(query.params)


def test_queries_of_one_shape_differ_only_in_their_parameters() -> None:
    build._TEXT_BY_SHAPE.clear()
    months = [Month(2021, 2), Month(2021, 3)]
    low = scope_answer_query(
        [ScopeRef("Nanjing", "Jiangning District")], ScopeQuery(ScopeOp.FILTER, low=1.0), TABLES,
        months,
    )  # fmt: skip
    high = scope_answer_query(
        [ScopeRef("Nanjing", "Jianye District")], ScopeQuery(ScopeOp.FILTER, low=9.0), TABLES,
        months,
    )  # fmt: skip
    assert low is not None and high is not None
    assert low.shape != high.shape  # other tables: another text
    assert low.sql() != high.sql()
    again = scope_answer_query(
        [ScopeRef("Nanjing", "Jiangning District")],
        ScopeQuery(ScopeOp.FILTER, low=5.0),
        TABLES,
        [Month(2021, 6), Month(2021, 7)],
    )
    assert again is not None and again.shape == low.shape
    assert again.sql() == low.sql() == _fresh(again)
    assert again.params != low.params
