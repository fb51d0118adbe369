"""The mini fixture corpus (``tests/fixtures/corpus/mini.csv``) as stores on both backends.

Built once per session; R = 2021-12, so 2022 is the future store. No forecaster is
trained here: tests that need the model stage inject one (``naive_source``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from foretab.core.months import Month

MINI_CSV = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "mini.csv"
REFERENCE = Month(2021, 12)


def mini_frame() -> pd.DataFrame:
    return pd.read_csv(MINI_CSV, dtype={"month": str})


def _ingest(db: str) -> None:
    from foretab.store.ingest import ingest_path

    ingest_path(MINI_CSV, db, REFERENCE)


@pytest.fixture(scope="session")
def mini_duckdb(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("mini") / "mini.duckdb")
    _ingest(db)
    return db


@pytest.fixture(scope="session")
def mini_postgresql(pg_server) -> Iterator[str]:
    import psycopg

    name = pg_server.fresh_dbname("mini")
    url = pg_server.url(name)
    _ingest(url)
    yield url
    with psycopg.connect(pg_server.url("postgres"), autocommit=True) as conn:
        for db in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


@pytest.fixture(params=["duckdb", "postgresql"])
def mini_db(request: pytest.FixtureRequest) -> str:
    """The mini store on each backend in turn."""
    return request.getfixturevalue(f"mini_{request.param}")
