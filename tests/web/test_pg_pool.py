"""PostgreSQL connections of a server process come from a bounded psycopg_pool pool.

``foretab serve`` calls ``use_connection_pool(n)`` in each worker: every engine's store
connections and every generation check borrow from a pool per database, at most ``n`` open,
handed back reset (the generation pin gone) — across re-ingests too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import psycopg
import pytest

from foretab.backend.postgres import close_connection_pools, pool_sizes, use_connection_pool
from foretab.core.months import Month
from foretab.web import EnginePool
from foretab.web.pool import engine_factory
from tests.web.test_pool_reload import QUESTION, ingest_scaled


@pytest.fixture
def pg_db(pg_server) -> Iterator[str]:  # type: ignore[no-untyped-def]
    name = pg_server.fresh_dbname("pooled")
    yield pg_server.url(name)
    close_connection_pools()
    with psycopg.connect(pg_server.url("postgres"), autocommit=True) as conn:
        for each in (name, f"{name}_future"):
            conn.execute(f'DROP DATABASE IF EXISTS "{each}" WITH (FORCE)')


def _server_connections(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND usename = current_user"
        ).fetchone()
    return int(row[0]) if row else 0


def test_engines_borrow_from_a_bounded_pool_across_reingests(pg_db: str, tmp_path: Path) -> None:
    ingest_scaled(pg_db, tmp_path, 1.0, Month(2021, 12))
    use_connection_pool(6)
    pool = EnginePool(engine_factory(pg_db), size=2, default="none", reload_check_s=0.0)

    def price() -> float:
        return float(anyio.run(pool.ask, "rules", None, QUESTION, lambda a: a).answer[0][0])

    try:
        first = price()
        for factor, month in ((2.0, Month(2021, 12)), (3.0, Month(2021, 11))):
            ingest_scaled(pg_db, tmp_path, factor, month)
            for _ in range(3):
                assert price() == pytest.approx(factor * first, abs=0.02)
        sizes = pool_sizes()
        assert sizes and all(1 <= n <= 6 for n in sizes.values()), sizes
        # The owner's sessions on the server are the pool's (the guard logs in as the reader).
        assert _server_connections(pg_db) <= 6
    finally:
        pool.close()
        close_connection_pools()
    assert pool_sizes() == {}
