"""Fixtures for the guard tests: the demo store on both backends, a clean working folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sql_stores import SqlStore, build_store, close_snapshot_connections


@pytest.fixture(
    scope="session",
    params=["duckdb", pytest.param("postgresql", marks=pytest.mark.postgres)],
)
def store(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SqlStore]:
    """The demo store on each backend, built once per session for every guard test module.

    The tests must not change it; the ones that try assert with ``snapshot`` that they did
    not.
    """
    tmp = tmp_path_factory.mktemp(f"sqlstore-{request.param}")
    if request.param == "postgresql":
        server = request.getfixturevalue("pg_server")
        name = server.fresh_dbname("guard")
        built = build_store("postgresql", tmp, server.url(name))
        yield built
        close_snapshot_connections()
        import psycopg

        with psycopg.connect(server.url("postgres"), autocommit=True) as conn:
            for db in (name, f"{name}_future"):
                conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
    else:
        yield build_store("duckdb", tmp, None)


@pytest.fixture
def clean_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Run in an empty folder and prove afterwards that nothing was written there."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    yield cwd
    assert sorted(os.listdir(cwd)) == [], "a statement wrote a file into the working directory"
