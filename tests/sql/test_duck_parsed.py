"""A DuckDB connection runs a text it has parsed before from DuckDB's own parse of it.

``DuckDBConnection.fetch_text`` keeps DuckDB's parse of each text (``extract_statements``)
and runs it with the call's values: the rows, errors and limits are those of running the
text, and a text that is not exactly one statement is run as text.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from foretab.backend import duck
from foretab.backend.duck import DuckDBBackend
from foretab.errors import QueryError


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[duck.DuckDBConnection]:
    path = tmp_path / "t.duckdb"
    with duckdb.connect(str(path)) as setup:
        setup.execute("CREATE TABLE t AS SELECT range AS i, range * 2 AS j FROM range(100)")
    opened = DuckDBBackend().connect(str(path), purpose="guard")
    yield opened
    opened.close()


def _plain(conn: duck.DuckDBConnection, sql: str, values: list[object]) -> list[tuple[object, ...]]:
    return conn.driver.execute(sql, values).fetchall()


def test_a_reparsed_text_gives_the_rows_of_the_text(conn: duck.DuckDBConnection) -> None:
    sql = "SELECT i, j FROM t WHERE i BETWEEN ? AND ? ORDER BY i"
    for lo, hi in ((0, 3), (10, 12), (50, 49), (95, 200)):
        rows = conn.fetch_text(sql, [lo, hi], max_rows=10, max_bytes=1 << 20)
        assert list(rows.rows) == _plain(conn, sql, [lo, hi])[:10]
    assert list(conn._parsed) == [sql]  # parsed once


def test_limits_and_errors_are_those_of_the_text(conn: duck.DuckDBConnection) -> None:
    sql = "SELECT i FROM t ORDER BY i"
    assert conn.fetch_text(sql, [], max_rows=5).more
    assert conn.fetch_text(sql, [], max_rows=5).more  # parsed, the cap holds
    with pytest.raises(QueryError):
        conn.fetch_text("SELECT i FROM t WHERE i = ?", [])  # a missing value
    with pytest.raises(QueryError):
        conn.fetch_text("SELECT i FROM t WHERE i = ?", [1, 2])
    with pytest.raises(QueryError):
        conn.fetch_text("SELECT nope FROM t", [])
    with pytest.raises(QueryError):
        conn.fetch_text("SELEC 1", [])


def test_a_text_of_two_statements_is_not_kept(conn: duck.DuckDBConnection) -> None:
    sql = "SELECT 1; SELECT 2"
    assert conn._statement(sql) == sql
    assert sql not in conn._parsed


def test_the_parsed_texts_are_bounded(
    conn: duck.DuckDBConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(duck, "PARSED_KEPT", 3)
    for i in range(6):
        conn.fetch_text(f"SELECT {i} AS x", [])
    assert list(conn._parsed) == [f"SELECT {i} AS x" for i in (3, 4, 5)]
    conn.close()
    assert not conn._parsed
