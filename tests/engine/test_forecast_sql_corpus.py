"""forecast() on the real corpus: 50 random series give what `foretab ask` gives, on both backends.

Slow: it ingests the shared corpus (R = 2021-12) and fits the default store model (~25 s);
the PostgreSQL store gets the very same model file (same history, same fit). The fast
version over every series of the demo store is ``tests/sql/test_forecast_sql.py``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from foretab.core.months import Month
from foretab.core.plan import EntityRef
from foretab.engine import Engine

from .conftest import SHARED_CSV

pytestmark = pytest.mark.slow

R = Month(2021, 12)
SERIES = 50
SEED = 29


@pytest.fixture(scope="module")
def trained_duckdb(tmp_path_factory: pytest.TempPathFactory) -> str:
    from foretab.forecast.store import train_store_model
    from foretab.store.ingest import ingest_path

    if not SHARED_CSV.exists():
        pytest.skip(f"shared corpus not found at {SHARED_CSV}")
    db = str(tmp_path_factory.mktemp("forecast-corpus") / "corpus.duckdb")
    ingest_path(SHARED_CSV, db, R)
    train_store_model(db)
    return db


@pytest.fixture(
    scope="module", params=["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def corpus_store(request: pytest.FixtureRequest, trained_duckdb: str) -> Iterator[str]:
    if request.param == "duckdb":
        yield trained_duckdb
        return
    import psycopg

    from foretab.backend.postgres import ensure_reader_role
    from foretab.forecast.store import ARTIFACT_NAME
    from foretab.store import open_history
    from foretab.store.ingest import ingest_path

    server = request.getfixturevalue("pg_server")
    name = server.fresh_dbname("fcorpus")
    db = server.url(name)
    ingest_path(SHARED_CSV, db, R)
    ensure_reader_role(db)
    with open_history(trained_duckdb) as duck:
        model = duck.load_artifact(ARTIFACT_NAME)
    assert model is not None
    with open_history(db) as store:
        store.save_artifact(ARTIFACT_NAME, model)
    yield db
    with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
        for each in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{each}" WITH (FORCE)')


def test_fifty_random_series_equal_ask(corpus_store: str) -> None:
    rng = random.Random(SEED)
    checked = 0
    with Engine.open(corpus_store) as engine:
        tables = [e for e in engine.store.catalog() if e.year == R.year]
        rng.shuffle(tables)
        for table in tables:
            if checked == SERIES:
                break
            result = engine.sql(
                f"SELECT project_name, month, value, lo, hi FROM forecast('{table.table_name}')"
            )
            rows = {(p, Month.from_date(m)): (v, lo, hi) for p, m, v, lo, hi in result.rows}
            names = sorted({p for p, _ in rows})
            for name in rng.sample(names, min(5, len(names), SERIES - checked)):
                month = R + rng.randint(1, 12)
                question = (
                    f"What will the price of {name} in {table.inner}, {table.outer} be in "
                    f"{month.label}?"
                )
                answer = engine.ask(question)
                value, lo, hi = rows[(name, month)]
                assert answer.answer == [[round(value, 2)]], question
                (interval,) = answer.intervals
                assert (round(interval.lo, 2), round(interval.hi, 2)) == (
                    round(lo, 2),
                    round(hi, 2),
                ), question
                point = answer.forecast.points[EntityRef(table.outer, table.inner, name)][month]
                assert (point.value, point.lo, point.hi) == (value, lo, hi), question
                checked += 1
    assert checked == SERIES
