"""``foretab ask`` starts the guard's worker early and has it open the DuckDB store (cold start).

The session's own open then finds DuckDB's database instance open; whatever the
pre-open did, the session's open checks the store as always.
"""

from __future__ import annotations

import pytest

from foretab.cli.main import _duckdb_store
from foretab.sql import worker
from foretab.sql.limits import DEFAULT_MEMORY_BYTES


def test_the_preopened_store_is_handed_to_the_session(mini_duckdb: str) -> None:
    worker._preopen(mini_duckdb, DEFAULT_MEMORY_BYTES)
    assert len(worker._preopened) == 1
    request = worker.OpenRequest("duckdb", mini_duckdb, 5.0, None, DEFAULT_MEMORY_BYTES)
    session = worker._Session(request, worker._Watchdog())
    try:
        assert worker._preopened == []  # closed: the session's connection holds the database
        assert "foretab_catalog" in session.opened().allowed_tables
    finally:
        session.close()


def test_a_store_that_cannot_be_opened_is_left_to_the_session(tmp_path: object) -> None:
    worker._preopen(f"{tmp_path}/missing.duckdb", DEFAULT_MEMORY_BYTES)
    assert worker._preopened == []


@pytest.mark.parametrize(
    ("argv", "db"),
    [
        (["foretab", "ask", "Q", "--db", "corpus.duckdb"], "corpus.duckdb"),
        (["foretab", "ask", "--db=corpus.duckdb", "Q"], "corpus.duckdb"),
        (["foretab", "ask", "Q", "--db", "postgresql://u@h/db"], None),
        (["foretab", "ask", "Q"], None),
        (["foretab", "ask", "Q", "--db"], None),
    ],
)
def test_the_store_is_read_from_the_command_line(argv: list[str], db: str | None) -> None:
    assert _duckdb_store(argv) == db
