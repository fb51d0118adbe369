"""The second line of defence: the connection itself refuses writes, files and the future.

These tests bypass the AST rules and send statements straight to the connection the
guard's worker opens (``Backend.connect(purpose="guard")``), as a bug in the rules would.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from sql_stores import FUTURE_2022, HISTORY_2021

from foretab.backend.postgres import READER_ROLE
from foretab.sql.connect import resolve_target
from foretab.sql.guard import GuardedExecutor


@contextmanager
def guard_connection(db: str, timeout_s: float = 5.0) -> Iterator[Any]:
    """The driver connection exactly as the guard's worker opens it."""
    target = resolve_target(db)
    conn = target.backend.connect(target.history, purpose="guard", timeout_s=timeout_s)
    try:
        yield conn
    finally:
        conn.close()


DUCK_RAW = [
    pytest.param("CREATE TABLE evil (a INTEGER)", id="create"),
    pytest.param(f"DELETE FROM {HISTORY_2021}", id="delete"),
    pytest.param("ATTACH '{fut}' AS fut", id="attach-future"),
    pytest.param("SELECT * FROM read_csv('/etc/passwd')", id="read-csv"),
    pytest.param("SELECT * FROM '{fut}'", id="future-file-scan"),
    pytest.param("COPY (SELECT 1) TO 'evil.csv'", id="copy-to"),
    pytest.param("SET enable_external_access = true", id="unlock-external"),
    pytest.param("SET lock_configuration = false", id="unlock-config"),
    pytest.param("INSTALL httpfs", id="install"),
]


@pytest.mark.parametrize("statement", DUCK_RAW)
def test_duckdb_connection_refuses(store, clean_cwd, statement) -> None:
    if store.backend != "duckdb":
        pytest.skip("DuckDB connection settings")
    import duckdb

    before = store.snapshot()
    with guard_connection(store.db) as conn, pytest.raises(duckdb.Error):
        conn.driver.execute(statement.format(fut=store.location.future))
    assert store.snapshot() == before


def test_duckdb_guard_connection_runs_without_the_two_optimizers(store) -> None:
    if store.backend != "duckdb":
        pytest.skip("DuckDB connection settings")
    from foretab.backend.duck import GUARD_DISABLED_OPTIMIZERS

    with guard_connection(store.db) as conn:
        (setting,) = conn.driver.execute("SELECT current_setting('disabled_optimizers')").fetchone()
        threads = conn.driver.execute("SELECT current_setting('threads')").fetchone()[0]
    assert sorted(setting.split(",")) == sorted(GUARD_DISABLED_OPTIMIZERS.split(","))
    assert "join_order" not in setting  # users' joins keep their planning
    assert int(threads) == 1


PG_RAW = [
    pytest.param("CREATE TABLE evil (a INTEGER)", id="create"),
    pytest.param(f"DELETE FROM {HISTORY_2021}", id="delete"),
    pytest.param("SELECT pg_read_file('/etc/passwd')", id="read-file"),
    pytest.param("SELECT * FROM pg_ls_dir('.')", id="ls-dir"),
    pytest.param("SELECT lo_import('/etc/passwd')", id="lo-import"),
    pytest.param("SELECT * FROM foretab_meta", id="non-catalog-table"),
    pytest.param("COPY (SELECT 1) TO '/tmp/foretab-evil.csv'", id="copy-to"),
    pytest.param("SET ROLE postgres", id="set-role"),
]


@pytest.mark.parametrize("statement", PG_RAW)
def test_postgres_connection_refuses(store, clean_cwd, statement) -> None:
    if store.backend != "postgresql":
        pytest.skip("PostgreSQL roles and transactions")
    import psycopg

    before = store.snapshot()
    with guard_connection(store.db) as conn:
        assert conn.role == READER_ROLE
        with pytest.raises(psycopg.Error):
            conn.driver.execute(statement)
        conn.driver.rollback()
    assert store.snapshot() == before


def test_postgres_session_is_read_only_with_a_timeout(store) -> None:
    if store.backend != "postgresql":
        pytest.skip("PostgreSQL settings")
    with guard_connection(store.db, timeout_s=2.5) as guard_conn:
        conn = guard_conn.driver
        assert conn.execute("SHOW transaction_read_only").fetchone()[0] == "on"
        assert conn.execute("SHOW statement_timeout").fetchone()[0] == "2500ms"
        assert conn.execute("SELECT current_user").fetchone()[0] == READER_ROLE
        conn.rollback()


def test_postgres_reader_cannot_connect_to_the_future(store) -> None:
    if store.backend != "postgresql":
        pytest.skip("PostgreSQL databases")
    import psycopg

    from foretab.backend.postgres import with_user as _with_user

    with pytest.raises(psycopg.OperationalError, match="permission denied"):
        psycopg.connect(_with_user(store.location.future, READER_ROLE, None))


def test_the_future_store_is_not_visible(store) -> None:
    """The executor's connection has no database or table of the future store at all."""
    with guard_connection(store.db) as guard_conn:
        conn = guard_conn.driver
        if store.backend == "duckdb":
            names = {
                r[0]
                for r in conn.execute("SELECT database_name FROM duckdb_databases()").fetchall()
            }
            # DuckDB names the database after the file: the current generation's history.
            stem = Path(os.path.realpath(store.location.history)).stem
            assert names == {stem, "system", "temp"}
            tables = {
                r[0] for r in conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()
            }
        else:
            tables = {
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema()"
                ).fetchall()
            }
            conn.rollback()
    assert FUTURE_2022 not in tables
    assert HISTORY_2021 in tables


@pytest.mark.postgres
def test_postgres_without_reader_grants_is_refused(pg_db, clean_cwd) -> None:
    """A database the reader role was never granted: refused, never the owner's session."""
    import psycopg

    from foretab.errors import StoreError

    admin_url = pg_db.rsplit("/", 1)[0] + "/postgres"
    name = pg_db.rsplit("/", 1)[1]
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(pg_db, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE foretab_catalog (table_name TEXT, caption TEXT, city TEXT, "
            "district TEXT, year INTEGER, rows INTEGER)"
        )
        conn.execute("CREATE TABLE project_price_table_d_c_2021 (price DOUBLE PRECISION)")
        conn.execute(
            "INSERT INTO foretab_catalog VALUES "
            "('project_price_table_d_c_2021', 'T', 'C', 'D', 2021, 1)"
        )
    with pytest.raises(StoreError, match="never falls back to the owner"):
        GuardedExecutor(pg_db)


def test_the_future_store_is_refused_as_history(store, clean_cwd) -> None:
    from foretab.errors import StoreError
    from foretab.store import open_future, open_history

    future = store.location.future
    with pytest.raises(StoreError):
        GuardedExecutor(future)
    with pytest.raises(StoreError, match="future side"):
        open_history(future)
    with open_future(store.db) as fut:
        assert fut.meta["side"] == "future"
    with open_history(store.db) as hist:
        assert hist.meta["side"] == "history"


@pytest.mark.postgres
def test_url_user_cannot_override_the_reader(store, clean_cwd) -> None:
    if store.backend != "postgresql":
        pytest.skip("PostgreSQL roles")
    for suffix in ("?user=postgres", "?options=-c%20role%3Dpostgres"):
        with GuardedExecutor(store.db + suffix) as guard:
            assert guard.role == READER_ROLE


@pytest.mark.postgres
def test_passwords_never_reach_messages(pg_server, clean_cwd, monkeypatch) -> None:
    from foretab.errors import StoreError

    monkeypatch.setenv("FORETAB_PG_READER_PASSWORD", "reader-s3cret")
    url = f"postgresql://postgres:admin-s3cret@{pg_server.host}:1/nowhere"
    with pytest.raises(StoreError) as caught:
        GuardedExecutor(url)
    assert "s3cret" not in caught.value.message
    assert "***" in caught.value.message or "127.0.0.1" in caught.value.message


@pytest.mark.postgres
def test_ingest_without_createrole_writes_nothing_when_it_could_not_finish(
    pg_server, monkeypatch
) -> None:
    import psycopg
    from sql_stores import demo_frame

    from foretab.backend import postgres as pg
    from foretab.backend.postgres import with_user as _with_user
    from foretab.core.months import Month
    from foretab.errors import StoreError
    from foretab.store.ingest import ingest_frame

    admin = pg_server.url("postgres")
    limited = f"limited_{pg_server.fresh_dbname('r')}"
    name = pg_server.fresh_dbname("limited")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{limited}" LOGIN CREATEDB')
    url = f"postgresql://{limited}@{pg_server.host}:{pg_server.port}/{name}"
    # A reader role that does not exist yet, and a user that may not create it.
    monkeypatch.setattr(pg, "READER_ROLE", f"absent_reader_{name}")
    with pytest.raises(StoreError, match="nothing was written"):
        ingest_frame(demo_frame(), url, Month.parse("2021-12"))
    with psycopg.connect(admin, autocommit=True) as conn:
        found = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", (f"{name}%",)
        ).fetchall()
    assert found == []
    # With the reader role in place, the same user ingests completely, grants included.
    monkeypatch.undo()
    ingest_frame(demo_frame(), url, Month.parse("2021-12"))
    with GuardedExecutor(url) as guard:
        assert guard.role == READER_ROLE
    bystander = f"bystander_{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE ROLE "{bystander}" LOGIN')
    future = pg_server.url(f"{name}_future")
    for role in (READER_ROLE, bystander):  # PUBLIC has no CONNECT on the future database
        with pytest.raises(psycopg.OperationalError, match="permission denied"):
            psycopg.connect(_with_user(future, role, None))
