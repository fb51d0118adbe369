"""A DuckDB store is opened by the guard's worker only (cold start at 100x the corpus).

The worker sends the store's metadata and catalog rows with its ``Opened`` reply; the
engine's process builds its ``HistoryStore`` from them and opens the file itself only when
something needs its own connection (docs/scale.md, "Cold start").
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

from foretab.core.answer import Answer
from foretab.core.months import Month
from foretab.core.schema import dumps
from foretab.engine import Engine, StoreContext
from foretab.errors import StoreError
from foretab.sql.guard import GuardedExecutor
from foretab.sql.worker import StoreDescription
from foretab.store import HistoryStore, StoreLocation, open_history
from foretab.store import stores as stores_module
from foretab.store.ingest import ingest_path
from tests.conftest import MINI_CSV

QUESTION = "What was the average price of Bund Garden in Huangpu District, Shanghai last month?"


def test_the_engines_process_never_opens_the_duckdb_file(
    mini_duckdb: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The old way: the context's own connection (``StoreContext.connect`` opens the file).
    with Engine.open(StoreContext.open(mini_duckdb), future="none") as old:
        assert old.store._opened is not None
        expected = _doc(old.ask(QUESTION))

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the engine's process opened the store file")

    monkeypatch.setattr(stores_module, "open_side", refused)
    with Engine.open(mini_duckdb, future="none") as engine:
        assert engine.store._opened is None
        answer = _doc(engine.ask(QUESTION))
    assert answer == expected


def _doc(answer: Answer) -> object:
    """The JSON answer without its timings."""

    def clean(value: object) -> object:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k not in ("timings", "ms")}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return clean(json.loads(dumps(answer.to_doc())))


def test_the_described_store_is_the_store_it_would_have_read(mini_duckdb: str) -> None:
    with GuardedExecutor(mini_duckdb, describe=True) as guard, open_history(mini_duckdb) as own:
        assert guard.store_description is not None
        described = HistoryStore(
            StoreLocation.parse(mini_duckdb), described=guard.store_description
        )
        assert described.meta == own.meta
        assert described.catalog() == own.catalog()
        assert described.generation == own.generation
        assert described.reference_month == own.reference_month
        assert described.schema == own.schema
    assert (
        StoreContext.open_session(mini_duckdb).context.catalog
        == StoreContext.open(mini_duckdb).catalog
    )


def test_a_guard_asked_for_nothing_describes_nothing(mini_duckdb: str) -> None:
    with GuardedExecutor(mini_duckdb) as guard:
        assert guard.store_description is None


def test_a_crafted_description_is_checked_as_the_stores_own_read(mini_duckdb: str) -> None:
    with GuardedExecutor(mini_duckdb, describe=True) as guard:
        real = guard.store_description
    assert real is not None
    location = StoreLocation.parse(mini_duckdb)
    bad_row = ("not a table; DROP", "caption", "Shanghai", "Huangpu", 2021, 3)
    with pytest.raises(StoreError, match="invalid foretab_catalog row"):
        HistoryStore(location, described=StoreDescription(real.meta, (bad_row,)))
    future_side = tuple((k, "future" if k == "side" else v) for k, v in real.meta)
    with pytest.raises(StoreError, match="future side"):
        HistoryStore(location, described=StoreDescription(future_side, real.catalog))


def test_the_own_connection_opens_on_demand_and_refuses_another_generation(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "store.duckdb")
    csv = tmp_path / "mini.csv"
    shutil.copy(MINI_CSV, csv)
    ingest_path(csv, db, Month(2021, 12))
    with GuardedExecutor(db, describe=True) as guard:
        description = guard.store_description
    assert description is not None
    store = HistoryStore(StoreLocation.parse(db), described=description)
    assert store._opened is None
    assert store.last_month("Shanghai", "Huangpu District", "Bund Garden") is not None
    assert store._opened is not None  # opened for the read above
    store.close()

    ingest_path(csv, db, Month(2021, 12))  # a new generation under the same path
    stale = HistoryStore(StoreLocation.parse(db), described=description)
    with pytest.raises(StoreError, match="replaced by another ingest"):
        stale.last_month("Shanghai", "Huangpu District", "Bund Garden")
    stale.close()


def test_a_file_that_is_no_store_fails_as_before(tmp_path: Path) -> None:
    db = str(tmp_path / "other.duckdb")
    duckdb.connect(db).close()
    with pytest.raises(StoreError) as old:
        open_history(db)
    with pytest.raises(StoreError) as new:
        StoreContext.open_session(db)
    assert new.value.message == old.value.message


def test_duckdb_reads_its_relations_once_for_both_checks(mini_duckdb: str) -> None:
    from foretab.backend import get_backend

    conn = get_backend("duckdb").connect(mini_duckdb, purpose="guard")
    try:
        driver = conn.driver
        tables = {
            r[0]
            for r in driver.execute(
                "SELECT table_name FROM duckdb_tables() WHERE NOT internal AND NOT temporary"
            ).fetchall()
        }
        names = {
            str(r[0]).lower()
            for r in driver.execute(
                "SELECT table_name FROM duckdb_tables() UNION SELECT view_name FROM "
                "duckdb_views() UNION SELECT sequence_name FROM duckdb_sequences()"
            ).fetchall()
        }
        assert conn.base_table_names() == tables
        assert conn.relation_names() == names
    finally:
        conn.close()
