"""Past scope questions: the SQL path (``foretab.sql.scope``) agrees with the series path.

A seeded store full of ties (equal prices, means that round onto a neighbour's price,
equal units), missing months, blank and zero units, and names whose byte order differs
from a dictionary's ("Zeta" < "apple" < "Éclair"), on DuckDB and PostgreSQL. Every scope
operation is computed both ways — in SQL through the guard, and by the analyzer's rules
over the rows read — and the outcomes (candidates, chosen projects in order, values) and
the answers must be identical.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from foretab.analyze.answer import analyze
from foretab.analyze.scope import scope_outcome as _outcome
from foretab.core.catalog import EntityEntry
from foretab.core.months import Month
from foretab.core.plan import (
    Aggregate,
    EntityRef,
    Extreme,
    Metric,
    Plan,
    ScopeOp,
    ScopeQuery,
    ScopeRef,
    Task,
    TimeWindow,
)
from foretab.errors import ForetabError
from foretab.read.reader import GuardedHistoryReader, rows_to_history
from foretab.retrieve import Retriever, history_span
from foretab.sql.build import scope_query
from foretab.sql.guard import GuardedExecutor
from foretab.store import open_history
from foretab.store.ingest import ingest_path

R = Month(2021, 12)
NAMES = [
    "Apple Court", "apple Court", "Zeta Garden", "Éclair Garden", "Bay Terrace", "bay Terrace",
    "Cedar Yard", "Delta Park", "Elm Lofts", "Fir Heights", "Grove Mansion", "Harbour One",
]  # fmt: skip
PLACES = [("Nanjing", "Jiangning District"), ("Nanjing", "Jianye District"), ("Suzhou", "Wuzhong")]


def _frame(seed: int = 7) -> pd.DataFrame:
    rng = random.Random(seed)
    # Few distinct prices, so equal values are common; x.005 means round up onto x.01.
    prices = [20000.00, 20000.01, 20000.02, 25000.50, 25000.51, 18000.00, 30000.00]
    rows = []
    for city, district in PLACES:
        for name in NAMES:
            for month in range(1, 13):
                if rng.random() < 0.3:
                    continue  # a missing month
                units = "" if rng.random() < 0.25 else str(rng.choice([0, 3, 5, 5, 8]))
                rows.append(
                    {
                        "city": city,
                        "district": district,
                        "project": name,
                        "month": f"2021-{month:02d}",
                        "avg_price": rng.choice(prices),
                        "units_sold": units,
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture(
    scope="module",
    params=["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def tie_db(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    tmp: Path = tmp_path_factory.mktemp(f"ties-{request.param}")
    csv = tmp / "ties.csv"
    _frame().to_csv(csv, index=False)
    if request.param == "duckdb":
        db = str(tmp / "ties.duckdb")
        ingest_path(csv, db, R)
        yield db
        return
    import psycopg

    server = request.getfixturevalue("pg_server")
    name = server.fresh_dbname("ties")
    ingest_path(csv, server.url(name), R)
    yield server.url(name)
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        for db in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


WINDOWS = [
    TimeWindow(Month(2021, 3), Month(2021, 3), "March 2021"),
    TimeWindow(Month(2021, 2), Month(2021, 7), "February to July 2021"),
    TimeWindow(Month(2021, 1), Month(2021, 12), "2021"),
    TimeWindow(Month(2021, 2), Month(2021, 9), "February and September 2021",
               (Month(2021, 2), Month(2021, 9))),
]  # fmt: skip
H, L = Extreme.HIGHEST, Extreme.LOWEST
QUERIES = [
    ScopeQuery(ScopeOp.PICK, extreme=H),
    ScopeQuery(ScopeOp.PICK, extreme=L),
    ScopeQuery(ScopeOp.PICK, Metric.UNITS, H, Metric.UNITS),
    ScopeQuery(ScopeOp.TOP, extreme=H, n=3),
    ScopeQuery(ScopeOp.TOP, extreme=L, n=5),
    ScopeQuery(ScopeOp.TOP, Metric.VALUE, H, Metric.UNITS, n=4),
    ScopeQuery(ScopeOp.TOP, Metric.UNITS, H, Metric.UNITS, n=40),
    ScopeQuery(ScopeOp.FILTER, low=20000.01, high=25000.50),
    ScopeQuery(ScopeOp.FILTER, low=25000.51),
    ScopeQuery(ScopeOp.FILTER, high=20000.00),
    ScopeQuery(ScopeOp.FILTER, low=90000.0),
    ScopeQuery(ScopeOp.FILTER_THEN_PICK, extreme=H, rank_by=Metric.UNITS, low=20000.0, high=26000),
    ScopeQuery(ScopeOp.TOP_THEN_PICK, extreme=L, rank_by=Metric.UNITS, n=3),
    ScopeQuery(ScopeOp.TOP_THEN_PICK, extreme=H, rank_by=Metric.UNITS, n=5),
    ScopeQuery(ScopeOp.MEAN),
    ScopeQuery(ScopeOp.MEAN, Metric.UNITS, rank_by=Metric.UNITS),
    ScopeQuery(ScopeOp.TOTAL, Metric.UNITS, rank_by=Metric.UNITS),
    ScopeQuery(ScopeOp.COUNT, Metric.UNITS, rank_by=Metric.UNITS),
]
SCOPES = [
    (ScopeRef("Nanjing", "Jiangning District"),),
    (ScopeRef("Nanjing"),),
    (ScopeRef("Suzhou", "Wuzhong"), ScopeRef("Nanjing", "Jianye District")),
]


@functools.cache
def _entries(db: str) -> tuple[EntityEntry, ...]:
    store = open_history(db)
    try:
        return tuple(store.entities())
    finally:
        store.close()


def _plan(db: str, scopes: tuple[ScopeRef, ...], query: ScopeQuery, window: TimeWindow) -> Plan:
    entries = _entries(db)
    candidates = tuple(
        EntityRef(e.outer, e.inner, e.name)
        for scope in scopes
        for e in sorted(entries, key=lambda e: (e.outer, e.inner, e.name))
        if e.outer == scope.outer
        and scope.inner in (None, e.inner)
        and e.first_month <= window.last
        and e.last_month >= window.first
    )
    return Plan(
        question="test",
        reference_month=R,
        entities=candidates,
        window=window,
        aggregate=Aggregate.VALUE if len(window.months) == 1 else Aggregate.MEAN,
        task=Task.HISTORY,
        metric=query.metric,
        scopes=scopes,
        scope=query,
    )


def _answer(plan: Plan, history, scopes=()) -> object:
    try:
        result = analyze(plan, history.series, {}, history.units, scopes)
    except ForetabError as error:
        return type(error).__name__, error.message
    return result.answer, result.text


def _compare(db: str, cases: list[tuple[tuple[ScopeRef, ...], TimeWindow, ScopeQuery]]) -> None:
    store = open_history(db)
    retriever = Retriever(store.catalog())
    store.close()
    with GuardedExecutor(db) as guard:
        reader = GuardedHistoryReader(guard)
        for scopes, window, query in cases:
            plan = _plan(db, scopes, query, window)
            retrieval = retriever.retrieve(plan)
            read = reader.read(plan, retrieval)
            assert len(read.history.scopes) == len(scopes), "a past scope question is SQL's"
            assert "ORDER BY scope, pos" in read.sql and read.params
            first, last = history_span(plan)
            rows = scope_query(retrieval.tables, first, last)
            assert rows is not None
            series = rows_to_history(
                guard.execute(rows.ast, rows.params), plan.entities, plan.metric, scope=True
            )
            for i, scope in enumerate(scopes):
                want = _outcome(plan, scope, series.series, {}, series.units)
                assert read.history.scopes[i] == want, (scope, query, window)
            assert _answer(plan, read.history, read.history.scopes) == _answer(plan, series)


def test_sql_and_series_paths_agree_on_every_operation(tie_db: str) -> None:
    # Every operation once, windows and scopes taken in turn (the full product is slow).
    cases = [
        (SCOPES[i % len(SCOPES)], WINDOWS[i % len(WINDOWS)], query)
        for i, query in enumerate(QUERIES)
    ]
    _compare(tie_db, cases)


@pytest.mark.slow
def test_sql_and_series_paths_agree_on_every_scope_window_and_operation(tie_db: str) -> None:
    _compare(tie_db, [(s, w, q) for s in SCOPES for w in WINDOWS for q in QUERIES])


def test_ties_go_to_the_first_project_in_byte_order(tie_db: str) -> None:
    # Every project at the same price in one month: the first in catalog (byte) order wins
    # the highest and the lowest alike, and a top 3 lists the first three.
    query = ScopeQuery(ScopeOp.TOP, extreme=Extreme.HIGHEST, n=3)
    frame = _frame()
    month = frame[(frame.city == "Suzhou") & (frame.month == "2021-03")]
    assert month.avg_price.duplicated().any(), "the fixture must hold ties in March 2021"
    plan = _plan(tie_db, (ScopeRef("Suzhou", "Wuzhong"),), query, WINDOWS[0])
    store = open_history(tie_db)
    retrieval = Retriever(store.catalog()).retrieve(plan)
    store.close()
    with GuardedExecutor(tie_db) as guard:
        outcome = GuardedHistoryReader(guard).read(plan, retrieval).history.scopes[0]
    top = month.sort_values("project", key=lambda s: s.map(lambda n: n.encode()))
    top = top.sort_values("avg_price", ascending=False, kind="stable").head(3)
    assert [ref.name for ref, _ in outcome.picked] == list(top.project)
