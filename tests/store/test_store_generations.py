"""Readers see one complete generation of a store: during an ingest, after it, and after a
failed one (both backends); PostgreSQL ingest refuses databases that are not foretab stores.

An ingest is paused at its critical points (after the future side is written; inside the
history transaction, before the switch commits) while a reader opens the store through
every path foretab reads it: the history store, the SQL guard, the future store. Each
version of the data has its own price range, so a mix of two ingests cannot hide.
"""

from __future__ import annotations

import threading
from typing import Any

import pandas as pd
import psycopg
import pytest

from foretab.core.months import Month
from foretab.errors import StoreError
from foretab.sql.guard import GuardedExecutor
from foretab.store import ingest as ingest_module
from foretab.store import open_future, open_history, pg_swap
from foretab.store.ingest import ingest_frame

TABLE_2021 = "project_price_table_jiangning_district_nanjing_2021"
# Version v of the data: prices in [1000 v, 1000 v + 100), reference month per version.
REFERENCE = {1: Month(2021, 6), 2: Month(2021, 12)}


def frame(version: int) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "city": "Nanjing",
                "district": "Jiangning District",
                "project": project,
                "month": f"{year}-{m:02d}",
                "avg_price": 1000.0 * version + (year - 2020) * 12 + m,
                "units_sold": m,
            }
            for project in ("Greenland Lixiang City", "Poly Central Park")
            for year in (2020, 2021, 2022)
            for m in range(1, 13)
        ]
    )


def ingest(db: str, version: int) -> None:
    ingest_frame(frame(version), db, REFERENCE[version])


def _version_of(prices: Any) -> set[int]:
    return {int(float(p) // 1000) for p in prices}


def observe(db: str) -> int:
    """Open the store as every reader does; return the one version it shows (or fail)."""
    with open_history(db) as history:
        seen = _version_of(history.panel()["price"])
        seen |= {v for v, ref in REFERENCE.items() if ref == history.reference_month}
        with GuardedExecutor(history) as guard:
            rows = guard.execute(f"SELECT price FROM {TABLE_2021}").rows
            seen |= _version_of(r[0] for r in rows)
            catalog = guard.execute("SELECT count(*) FROM foretab_catalog").rows[0][0]
        assert catalog == len(history.catalog())
        with open_future(db, history.generation) as future:
            seen |= _version_of(future.panel()["price"])
            assert future.generation == history.generation
            assert future.reference_month == history.reference_month
    assert len(seen) == 1, f"a reader saw a mix of ingests: versions {sorted(seen)}"
    return seen.pop()


@pytest.fixture
def db(empty_store_db: str) -> str:
    return empty_store_db  # on each backend (tests/conftest.py)


class Pauses:
    """Stop an ingest running in a thread at named points until the test lets it go on."""

    def __init__(self) -> None:
        self.reached: dict[str, threading.Event] = {}
        self.go: dict[str, threading.Event] = {}

    def point(self, name: str) -> None:
        self.reached.setdefault(name, threading.Event()).set()
        if not self.go.setdefault(name, threading.Event()).wait(60):
            raise TimeoutError(f"the test never released {name}")

    def wait(self, name: str) -> None:
        assert self.reached.setdefault(name, threading.Event()).wait(60), name

    def release(self, name: str) -> None:
        self.go.setdefault(name, threading.Event()).set()


def _pause_ingest(monkeypatch: pytest.MonkeyPatch, backend: str, pauses: Pauses) -> list[str]:
    """Patch the writers so the ingest stops at its points; return the points in order."""
    if backend == "duckdb":
        real_duck = ingest_module.write_duckdb

        def write_duckdb(path: str, layout: Any, meta: Any, progress: Any) -> None:
            real_duck(path, layout, meta, progress)
            if meta["side"] == "future":  # both files written, not yet renamed in
                pauses.point("after-future")

        monkeypatch.setattr(ingest_module, "write_duckdb", write_duckdb)
        return ["after-future"]
    real_pg = pg_swap.write_postgres

    def write_postgres(url: str, layout: Any, meta: Any, progress: Any, *args: Any) -> None:
        if meta["side"] == "future":
            real_pg(url, layout, meta, progress, *args)
            pauses.point("after-future")  # committed in the future database
            return
        schema, finish = args

        def switch(conn: Any) -> None:
            finish(conn)
            pauses.point("before-switch-commit")  # inside the history transaction

        real_pg(url, layout, meta, progress, schema, switch)

    monkeypatch.setattr(pg_swap, "write_postgres", write_postgres)
    return ["after-future", "before-switch-commit"]


def test_a_reader_sees_old_or_new_never_a_mix(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ingest(db, 1)
    pinned = open_history(db)  # opened before the ingest: must keep reading version 1
    try:
        pauses = Pauses()
        points = _pause_ingest(monkeypatch, "postgresql" if "://" in db else "duckdb", pauses)
        failure: list[BaseException] = []

        def run() -> None:
            try:
                ingest(db, 2)
            except BaseException as exc:  # reported by the main thread
                failure.append(exc)

        worker = threading.Thread(target=run)
        worker.start()
        try:
            for point in points:
                pauses.wait(point)
                assert observe(db) == 1, f"a reader at {point} saw the new store too early"
                pauses.release(point)
        finally:
            for point in points:
                pauses.release(point)
            worker.join(120)
        assert not failure, failure
        assert observe(db) == 2
        # A reader that opened the old generation keeps reading all of it.
        assert _version_of(pinned.panel()["price"]) == {1}
        if pinned.location.backend == "postgresql":
            with GuardedExecutor(pinned) as guard:
                rows = guard.execute(f"SELECT price FROM {TABLE_2021}").rows
            assert _version_of(r[0] for r in rows) == {1}
            with open_future(db, pinned.generation) as future:
                assert _version_of(future.panel()["price"]) == {1}
        else:  # the old generation's files are gone: new connections refused, never mixed
            with pytest.raises(StoreError, match="replaced by another ingest"):
                GuardedExecutor(pinned)
            with pytest.raises(StoreError, match="another ingest"):
                open_future(db, pinned.generation)
    finally:
        pinned.close()


def _fail_history_side(monkeypatch: pytest.MonkeyPatch, *, before_writing: bool) -> None:
    """Make the next ingest's history side fail: before it writes, or in its switch's commit."""
    real_pg = pg_swap.write_postgres

    def write_postgres(url: str, layout: Any, meta: Any, progress: Any, *args: Any) -> None:
        if meta["side"] == "history" and before_writing:
            raise RuntimeError("injected: the process died between the two databases")
        if meta["side"] == "history":
            schema, finish = args

            def switch(conn: Any) -> None:
                finish(conn)
                raise RuntimeError("injected: the switch transaction failed before its commit")

            args = (schema, switch)
        real_pg(url, layout, meta, progress, *args)

    monkeypatch.setattr(pg_swap, "write_postgres", write_postgres)


@pytest.mark.parametrize(
    "where",
    # A kill inside the switch is also a fast case of the kill test below.
    ["between-the-databases", pytest.param("inside-the-switch", marks=pytest.mark.slow)],
)
@pytest.mark.postgres
def test_a_failed_ingest_leaves_the_old_store_usable(
    pg_db: str, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    ingest(pg_db, 1)
    before = generations(pg_db)
    _fail_history_side(monkeypatch, before_writing=where == "between-the-databases")
    with pytest.raises(RuntimeError, match="injected"):
        ingest(pg_db, 2)
    assert observe(pg_db) == 1
    with open_history(pg_db) as history:
        assert history.reference_month == REFERENCE[1]
    # The history side is untouched; the future database holds the unfinished generation.
    after = generations(pg_db)
    assert after["history"] == before["history"]
    assert len(after["future"]) == len(before["future"]) + 1
    monkeypatch.undo()
    ingest(pg_db, 2)
    assert observe(pg_db) == 2
    ingest(pg_db, 1)
    assert observe(pg_db) == 1
    # No leftovers: the current generation and the one it replaced, in both databases.
    final = generations(pg_db)
    assert len(final["history"]) == 2 and final["history"] == final["future"]
    # Other clients' new sessions (psql, scripts) find the current generation unqualified.
    for target, side in ((pg_db, "history"), (pg_db + "_future", "future")):
        with psycopg.connect(target) as conn:
            meta = dict(conn.execute("SELECT key, value FROM foretab_meta").fetchall())
            prices = conn.execute(f"SELECT price FROM {TABLE_2021}").fetchall()
        assert (meta["side"], meta["reference_month"]) == (side, REFERENCE[1].iso)
        assert _version_of(p for (p,) in prices) == {1}  # R = 2021-06: 2021 on both sides


def generations(url: str) -> dict[str, list[str]]:
    """The generation schemas of the history and the future database."""
    out: dict[str, list[str]] = {}
    for side, target in (("history", url), ("future", url + "_future")):
        with psycopg.connect(target, autocommit=True) as conn:
            out[side] = [
                r[0]
                for r in conn.execute(
                    "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'foretab\\_g\\_%' "
                    "ORDER BY 1"
                ).fetchall()
            ]
    return out


# -- PostgreSQL ingest into a database that is not a foretab store -------------------------


def _admin(url: str) -> str:
    return url.rsplit("/", 1)[0] + "/postgres"


def _database_state(url: str) -> tuple[object, ...]:
    with psycopg.connect(_admin(url), autocommit=True) as conn:
        names = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s ORDER BY 1",
            [url.rsplit("/", 1)[1] + "%"],
        ).fetchall()
    state: list[object] = [tuple(names)]
    for (name,) in names:
        with psycopg.connect(url.rsplit("/", 1)[0] + f"/{name}", autocommit=True) as conn:
            state.append(
                conn.execute(
                    "SELECT n.nspname, c.relname, c.relkind FROM pg_class c JOIN pg_namespace n "
                    "ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', "
                    "'information_schema', 'pg_toast') ORDER BY 1, 2"
                ).fetchall()
            )
    return tuple(state)


def _create(url: str, *statements: str) -> None:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(_admin(url), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


@pytest.mark.postgres
@pytest.mark.parametrize(
    "statements",
    [
        pytest.param(["CREATE TABLE customers (id INTEGER, name TEXT)"], id="other-tables"),
        pytest.param(
            [
                "CREATE TABLE foretab_meta (key TEXT, value TEXT)",
                "INSERT INTO foretab_meta VALUES ('reference_month', '2021-01')",
            ],
            id="foretab-meta-without-side",
        ),
        pytest.param(
            ["CREATE SCHEMA accounts", "CREATE VIEW accounts.v AS SELECT 1 AS a"], id="other-schema"
        ),
    ],
)
def test_postgres_ingest_refuses_a_database_that_is_not_a_store(
    pg_db: str, statements: list[str]
) -> None:
    _create(pg_db, *statements)
    before = _database_state(pg_db)
    name = pg_db.rsplit("/", 1)[1]
    with pytest.raises(StoreError) as caught:
        ingest(pg_db, 1)
    message = caught.value.message
    assert f"database {name} exists" in message and "not a foretab store" in message
    assert "changed nothing" in message and "new database name" in message
    assert "DROP DATABASE" in message
    assert _database_state(pg_db) == before  # no _future database either


@pytest.mark.postgres
def test_postgres_ingest_refuses_an_occupied_future_database(pg_db: str) -> None:
    _create(pg_db + "_future", "CREATE TABLE invoices (id INTEGER)")
    before = _database_state(pg_db)
    with pytest.raises(StoreError, match=r"_future \(the future side of --db .*not a foretab"):
        ingest(pg_db, 1)
    assert _database_state(pg_db) == before  # the history database was not created


@pytest.mark.postgres
def test_postgres_ingest_refuses_the_future_database_of_a_store(pg_db: str) -> None:
    ingest(pg_db, 1)
    future = pg_db + "_future"
    before = _database_state(pg_db)
    with pytest.raises(StoreError, match="holds the future side"):
        ingest(future, 2)
    assert _database_state(pg_db) == before


@pytest.mark.postgres
def test_postgres_ingest_accepts_an_empty_database(pg_db: str) -> None:
    _create(pg_db)
    ingest(pg_db, 1)
    assert observe(pg_db) == 1


def test_duckdb_refuses_a_non_store_the_same_way(tmp_path: Any) -> None:
    import duckdb

    path = tmp_path / "other.duckdb"
    with duckdb.connect(str(path)) as conn:
        conn.execute("CREATE TABLE customers AS SELECT 1 AS id")
    with pytest.raises(StoreError, match="changed nothing"):
        ingest(str(path), 1)


@pytest.mark.slow
@pytest.mark.postgres
def test_a_store_of_the_older_public_layout_is_read_and_replaced(pg_db: str) -> None:
    """Stores ingested before generations kept their tables in ``public``."""
    ingest(pg_db, 1)
    (schema,) = generations(pg_db)["history"]
    for target in (pg_db, pg_db + "_future"):
        with psycopg.connect(target, autocommit=True) as conn:
            tables = conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = %s", [schema]
            ).fetchall()
            for (name,) in tables:
                conn.execute(f'ALTER TABLE "{schema}"."{name}" SET SCHEMA public')
            conn.execute(f'DROP SCHEMA "{schema}"')
            conn.execute("DROP TABLE IF EXISTS public.foretab_current")
    assert observe(pg_db) == 1  # read from public, the guard included
    ingest(pg_db, 2)
    assert observe(pg_db) == 2
    for target in (pg_db, pg_db + "_future"):
        with psycopg.connect(target, autocommit=True) as conn:
            left = conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
            ).fetchall()
        assert left == ([("foretab_current",)] if target == pg_db else [])


_KILLER = """
import os, signal, sys
sys.path.insert(0, {tests!r})
from test_store_generations import ingest
from foretab.store import pg_swap

point = sys.argv[2]
real_write, real_clean = pg_swap.write_postgres, pg_swap.clean_leftovers

def die(name):
    if point == name:
        os.kill(os.getpid(), signal.SIGKILL)

def write_postgres(url, layout, meta, progress, schema, finish=None):
    if meta["side"] == "history":
        die("after-future")
        def switch(conn):
            finish(conn)
            die("before-switch-commit")
        real_write(url, layout, meta, progress, schema, switch)
        die("after-switch")
        return
    die("in-future")
    real_write(url, layout, meta, progress, schema, finish)

def clean_leftovers(location):
    real_clean(location)
    die("after-cleanup")

pg_swap.write_postgres, pg_swap.clean_leftovers = write_postgres, clean_leftovers
ingest(sys.argv[1], 2)
"""

KILL_POINTS = ["in-future", "after-future", "before-switch-commit", "after-switch"]


def _kill_postgres_ingest(pg_db: str, point: str) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    ingest(pg_db, 1)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    code = _KILLER.format(tests=str(Path(__file__).parent))
    done = subprocess.run([sys.executable, "-c", code, pg_db, point], env=env, check=False)
    assert done.returncode == -9, done
    # Killed before its commit: the old store; after it: the new one. Never a mix.
    expected = 2 if point == "after-switch" else 1
    assert observe(pg_db) == expected
    ingest(pg_db, 1)
    assert observe(pg_db) == 1
    final = generations(pg_db)
    assert len(final["history"]) == 2 and final["history"] == final["future"]


@pytest.mark.postgres
def test_a_killed_postgres_ingest_leaves_old_or_new(pg_db: str) -> None:
    _kill_postgres_ingest(pg_db, "before-switch-commit")


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize("point", KILL_POINTS)
def test_a_postgres_ingest_killed_at_every_step_leaves_old_or_new(pg_db: str, point: str) -> None:
    _kill_postgres_ingest(pg_db, point)


@pytest.mark.slow
def test_readers_racing_repeated_ingests_never_see_a_mix(db: str) -> None:
    """No pauses: ingests back to back while readers open the store as fast as they can.

    A reader may be refused (its generation replaced twice under it), never shown a mix.
    """
    from foretab.errors import QueryError

    ingest(db, 1)
    done = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            for version in (2, 1, 2, 1):
                ingest(db, version)
        except BaseException as exc:
            failure.append(exc)
        finally:
            done.set()

    worker = threading.Thread(target=run)
    worker.start()
    seen, refused = set(), 0
    while not done.is_set():
        try:
            seen.add(observe(db))  # asserts a single version
        except (StoreError, QueryError):
            refused += 1
    worker.join()
    assert not failure, failure
    assert seen <= {1, 2} and observe(db) == 1


@pytest.mark.postgres
def test_a_reader_that_cannot_read_the_pointer_is_a_store_error(pg_db: str) -> None:
    ingest(pg_db, 1)
    with psycopg.connect(pg_db, autocommit=True) as conn:
        conn.execute("REVOKE SELECT ON public.foretab_current FROM foretab_reader")
    with pytest.raises(StoreError, match=r"store generation.*foretab ingest"):
        GuardedExecutor(pg_db)
    assert observe_history_only(pg_db) == 1  # foretab's own reads (the owner) still work


def observe_history_only(db: str) -> int:
    with open_history(db) as history:
        (version,) = _version_of(history.panel()["price"])
    return version


# -- PostgreSQL: many tables a side, committed in batches -----------------------------------

DISTRICTS = ("Jiangning District", "Gulou District", "Xuanwu District", "Qinhuai District")


def wide_frame(version: int) -> pd.DataFrame:
    """``frame(version)`` in four districts: eight history tables, eight future ones."""
    return pd.concat([frame(version).assign(district=d) for d in DISTRICTS], ignore_index=True)


def _record_locks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """At each batch's commit: the relation locks the writing session holds."""
    from foretab.store import writers

    held: list[int] = []
    real = writers._write_postgres

    def write(conn: Any, *args: Any) -> None:
        *rest, commit = args

        def counted() -> None:
            row = conn.execute(
                "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() "
                "AND locktype = 'relation'"
            ).fetchone()
            held.append(int(row[0]))
            commit()

        real(conn, *rest, counted)

    monkeypatch.setattr(writers, "_write_postgres", write)
    monkeypatch.setattr(writers, "PG_TABLES_PER_COMMIT", 2)
    return held


@pytest.mark.postgres
def test_postgres_tables_are_committed_in_batches(
    pg_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A created table holds three locks to its commit; a server's lock table holds ~7,800
    for every session together, so 100x the corpus (30,592 tables) in one transaction
    failed. The tables go ``PG_TABLES_PER_COMMIT`` a transaction, the store as before."""
    held = _record_locks(monkeypatch)
    ingest_frame(wide_frame(1), pg_db, REFERENCE[1])
    # 8 tables a side, 2 a batch: three commits a side before the last transaction.
    assert len(held) == 6
    # What a commit releases does not grow with the tables written before it (the first
    # batch also holds the metadata table's); one transaction a side held 3 × 8 and more.
    assert held[1] == held[2] == held[4] == held[5]
    assert max(held) < 3 * 8
    assert observe(pg_db) == 1
    with open_history(pg_db) as history:
        catalog = history.catalog()
        for entity in history.entities():
            assert history.last_month(entity.outer, entity.inner, entity.name) == (
                entity.last_month
            )
    assert len(catalog) == 8 and len({e.inner for e in catalog}) == 4
    # A refusal's read of one project (``last_month``) is by an index, not a scan.
    (schema,) = generations(pg_db)["history"]
    with psycopg.connect(pg_db, autocommit=True) as conn:
        indexes = conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND tablename = %s",
            [schema, "foretab_projects"],
        ).fetchall()
    assert [d for (d,) in indexes if "(city, district, project)" in d]
    ingest_frame(wide_frame(2), pg_db, REFERENCE[2])
    assert observe(pg_db) == 2
    ingest_frame(wide_frame(1), pg_db, REFERENCE[1])  # drops the first generation, in batches
    assert observe(pg_db) == 1
    final = generations(pg_db)
    assert len(final["history"]) == 2 and final["history"] == final["future"]


@pytest.mark.postgres
def test_a_failed_batched_ingest_drops_what_it_committed(
    pg_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ingest_frame(wide_frame(1), pg_db, REFERENCE[1])
    before = generations(pg_db)
    _record_locks(monkeypatch)
    _fail_history_side(monkeypatch, before_writing=False)
    with pytest.raises(RuntimeError, match="injected"):
        ingest_frame(wide_frame(2), pg_db, REFERENCE[2])
    assert observe(pg_db) == 1
    after = generations(pg_db)
    # The history side's committed batches are gone again; the future side is complete
    # and unnamed (the next ingest drops it), as with one transaction a side.
    assert after["history"] == before["history"]
    assert len(after["future"]) == len(before["future"]) + 1


@pytest.mark.postgres
def test_a_killed_first_batched_ingest_leaves_nothing_that_stops_the_next(
    pg_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kill part-way leaves committed batches in a schema no pointer names (no cleanup
    runs): the next ingest into the same database is not refused and drops them."""
    from foretab.store import writers

    _record_locks(monkeypatch)
    monkeypatch.setattr(writers, "drop_schema", lambda conn, schema: None)  # the kill
    real_pg = pg_swap.write_postgres

    def write_postgres(url: str, layout: Any, meta: Any, progress: Any, *args: Any) -> None:
        if meta["side"] == "history":
            count, report = [0], progress

            def die(name: str) -> None:
                count[0] += 1
                if count[0] == 5:  # after two batches' commits
                    raise KeyboardInterrupt
                report(name)

            progress = die
        real_pg(url, layout, meta, progress, *args)

    monkeypatch.setattr(pg_swap, "write_postgres", write_postgres)
    with pytest.raises(KeyboardInterrupt):
        ingest_frame(wide_frame(1), pg_db, REFERENCE[1])
    left = generations(pg_db)
    assert len(left["history"]) == 1  # the first batch, committed, no pointer names it
    monkeypatch.undo()
    monkeypatch.setattr(writers, "PG_TABLES_PER_COMMIT", 2)
    ingest_frame(wide_frame(2), pg_db, REFERENCE[2])
    assert observe(pg_db) == 2
    final = generations(pg_db)
    assert len(final["history"]) == 1 and final["history"] == final["future"]
    assert final["history"] != left["history"]
