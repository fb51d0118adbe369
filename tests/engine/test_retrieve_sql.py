"""Retrieval (canonical captions, BM25 fallback) and the history SQL builder, on both backends."""

from __future__ import annotations

import pandas as pd
import pytest

from foretab.core.months import Month
from foretab.core.plan import Aggregate, EntityRef, Plan, Task, TimeWindow
from foretab.retrieve import Retriever, required_captions
from foretab.sql.build import history_query
from foretab.sql.guard import GuardedExecutor
from foretab.store import open_history
from foretab.store.ingest import ingest_frame

R = Month(2021, 12)
POLY = EntityRef("Nanjing", "Jiangning District", "Poly Central Park")
GREEN = EntityRef("Nanjing", "Jiangning District", "Greenland Lixiang City")
VANKE = EntityRef("Shenzhen", "Bao'an District", "Vanke Future Light")


def corpus(*, sparse: bool = True) -> pd.DataFrame:
    rows = []
    for ref, base in ((POLY, 21000.0), (GREEN, 18000.0), (VANKE, 65000.0)):
        for i, month in enumerate(m for m in (Month(2019, 6) + k for k in range(43))):
            if sparse and (i + len(ref.name)) % 5 == 0:
                continue  # sparse, like the real corpus
            rows.append((ref.outer, ref.inner, ref.name, month.iso, base + 10 * i, i))
    return pd.DataFrame(
        rows, columns=["city", "district", "project", "month", "avg_price", "units_sold"]
    )


@pytest.fixture(scope="module", params=["duckdb", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The corpus on each backend, ingested once for the module: the tests only read it."""
    if request.param == "duckdb":
        target = str(tmp_path_factory.mktemp("retrieve") / "c.duckdb")
    else:
        server = request.getfixturevalue("pg_server")
        target = server.url(server.fresh_dbname("retrieve"))
    ingest_frame(corpus(), target, R)
    return target


def plan(projects: tuple[EntityRef, ...], first: Month, last: Month, task: Task) -> Plan:
    return Plan("q", R, projects, TimeWindow(first, last, "x"), Aggregate.EACH, task)


def test_captions_for_forecast_cover_the_lookback() -> None:
    p = plan((POLY, VANKE), R + 1, R + 3, Task.FORECAST)
    assert required_captions(p) == [
        "Project Price Table for Jiangning District, Nanjing, 2020",
        "Project Price Table for Jiangning District, Nanjing, 2021",
        "Project Price Table for Bao'an District, Shenzhen, 2020",
        "Project Price Table for Bao'an District, Shenzhen, 2021",
    ]


def test_captions_for_history_cover_the_window() -> None:
    p = plan((POLY,), Month(2019, 11), Month(2020, 2), Task.HISTORY)
    assert required_captions(p) == [
        "Project Price Table for Jiangning District, Nanjing, 2019",
        "Project Price Table for Jiangning District, Nanjing, 2020",
    ]


def test_exact_bm25_and_missing(db: str) -> None:
    with open_history(db) as store:
        retriever = Retriever(store.catalog())
    exact = retriever.match("Project Price Table for Bao'an District, Shenzhen, 2021")
    assert exact.method == "exact"
    fuzzy = retriever.match("project price table for baoan district, shenzhen, 2021")
    assert fuzzy.method == "bm25" and fuzzy.table == exact.table
    missing = retriever.match("Project Price Table for Bao'an District, Shenzhen, 2015")
    assert missing.method == "missing" and missing.table is None


def test_history_query_matches_the_frame(db: str) -> None:
    p = plan((POLY, GREEN, VANKE), R + 1, R + 12, Task.FORECAST)
    with open_history(db) as store:
        retrieval = Retriever(store.catalog()).retrieve(p)
    query = history_query(retrieval.tables, p.entities, R - 23, R)
    assert query is not None
    text = query.sql()
    assert "UNION ALL" in text and "Poly Central Park" not in text  # values are bound
    with GuardedExecutor(db) as guard:
        result = guard.execute(query.ast, query.params)
    got = sorted((r[0], r[1], r[2], Month.from_date(r[3]).iso, r[4]) for r in result.rows)
    frame = corpus()
    window = frame[(frame.month >= (R - 23).iso) & (frame.month <= R.iso)]
    want = sorted(
        (c, d, p_, m, float(v))
        for c, d, p_, m, v in window[
            ["city", "district", "project", "month", "avg_price"]
        ].itertuples(index=False)
    )
    assert got == want
