"""The PostgreSQL fixture starts a real server on loopback."""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.postgres


def test_pg_server_accepts_connections(pg_server) -> None:
    with psycopg.connect(pg_server.url("postgres")) as conn:
        version = conn.execute("SHOW server_version_num").fetchone()[0]
    assert int(version) >= 150000
    assert pg_server.base_url.startswith("postgresql://postgres@127.0.0.1:")


def test_fresh_db_names_are_unique(pg_server) -> None:
    assert pg_server.fresh_dbname() != pg_server.fresh_dbname()
