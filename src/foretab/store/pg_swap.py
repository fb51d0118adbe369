"""PostgreSQL stores: one schema per generation, switched by one commit in the history database.

``--db postgresql://…/NAME`` is two databases::

    NAME          public.foretab_current            the pointer: (generation, previous)
                  foretab_g_<generation>.*          price tables, foretab_catalog,
                                                    foretab_projects, foretab_meta,
                                                    foretab_artifacts (the fitted model)
    NAME_future   foretab_g_<generation>.*          the same ingest's future side

An ingest writes the new generation's future schema first (no pointer names it, so no
reader sees it), then its history schema, and in the last history transaction the
reader role's grants and the pointer: that commit is the single switch point. A side's
tables are committed ``PG_TABLES_PER_COMMIT`` (500) at a time (its metadata table with
the first, its last tables, catalog and projects tables with its last transaction; a
store of up to 500 tables a side is one transaction a side): thousands of tables created
in one transaction exhaust the server's lock table. Readers pin a generation when they
open (``foretab.backend.postgres``), so they read the old generation or the new one, in
both databases, never a mix. A failure or a kill before the switch leaves the old store
as it was.

The generation just replaced is kept, so a reader that opened it shortly before the switch
still reads a complete store; the ingest after that drops it, with anything an interrupted
ingest left behind (``clean_leftovers``).

Ingest writes only into a database that does not exist, is empty, or is a foretab store of
the right side (``check_target``): anything else is refused before a single write.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import psycopg
from psycopg import sql

from foretab.backend.postgres import (
    POINTER_TABLE,
    READER_PASSWORD_ENV,
    SCHEMA_LIKE,
    check_can_grant_reader,
    current_generation,
    ensure_reader_role,
    generation_schema,
    redact_text,
)
from foretab.errors import StoreError
from foretab.store.layout import SideLayout
from foretab.store.location import StoreLocation
from foretab.store.naming import GENERATION_KEY, META_TABLE, SIDE_KEY
from foretab.store.writers import drop_legacy_tables, drop_schema, write_postgres

Step = Callable[[str], None]
# Schemas PostgreSQL itself owns; anything else in a database is somebody's data.
_SYSTEM_SCHEMAS = "('pg_catalog', 'information_schema', 'pg_toast')"
_LOCK_TIMEOUT = "5s"  # dropping an old generation waits this long for its last readers


def swap_in(
    location: StoreLocation,
    history: SideLayout,
    future: SideLayout | None,
    meta: Mapping[str, str],
    step: Step,
) -> None:
    """Write a new generation of both sides and make it current in one history commit."""
    generation = meta[GENERATION_KEY]
    schema = generation_schema(generation)
    history_db = location.database_name("history")
    password = os.environ.get(READER_PASSWORD_ENV) or None

    def switch(conn: psycopg.Connection[Any]) -> None:
        # Inside the history transaction: the new tables, their grants and the pointer
        # commit together, or not at all.
        _point(conn, generation)
        ensure_reader_role(conn, history_db, password=password, schema=schema)
        _default_search_path(conn, (history_db, location.database_name("future")), schema)

    try:
        # Before anything is written: an ingest that could not finish must not start.
        check_can_grant_reader(location.history)
        with _ingest_lock(location) as admin:
            check_target(location, admin)
            future_db = location.database_name("future")
            for name in (history_db, future_db):
                _create_database(admin, name)
            # The future database is closed to PUBLIC before it holds a single row.
            admin.execute(
                sql.SQL("REVOKE CONNECT ON DATABASE {} FROM PUBLIC").format(
                    sql.Identifier(future_db)
                )
            )
            if future is not None:
                write_postgres(location.future, future, {**meta, SIDE_KEY: "future"}, step, schema)
            write_postgres(
                location.history, history, {**meta, SIDE_KEY: "history"}, step, schema, switch
            )
            clean_leftovers(location)
    except psycopg.Error as exc:
        detail = redact_text(str(exc).strip(), location.history)
        raise StoreError(f"Cannot write to {location.describe()}: {detail}") from None


def _point(conn: psycopg.Connection[Any], generation: str) -> str | None:
    """Name ``generation`` current (the previous one is remembered, to be kept one round)."""
    pointer = sql.Identifier("public", POINTER_TABLE)
    conn.execute(
        sql.SQL("CREATE TABLE IF NOT EXISTS {} (generation TEXT NOT NULL, previous TEXT)").format(
            pointer
        )
    )
    # Row locks: a concurrent switch (prevented by the ingest lock anyway) would wait here.
    row = conn.execute(sql.SQL("SELECT generation FROM {} FOR UPDATE").format(pointer)).fetchone()
    previous = row[0] if row else None
    conn.execute(sql.SQL("DELETE FROM {}").format(pointer))
    conn.execute(
        sql.SQL("INSERT INTO {} (generation, previous) VALUES (%s, %s)").format(pointer),
        [generation, previous],
    )
    return previous


def _default_search_path(
    conn: psycopg.Connection[Any], databases: tuple[str, ...], schema: str
) -> None:
    """New sessions of other clients (psql, scripts) find the current generation unqualified.

    Database settings live in a shared catalog, so both databases' defaults switch in the
    history transaction, with the pointer. foretab's own readers pin explicitly anyway.
    """
    for name in databases:
        try:
            with conn.transaction():  # a savepoint: a database we do not own keeps its own
                conn.execute(
                    sql.SQL("ALTER DATABASE {} SET search_path = {}, public").format(
                        sql.Identifier(name), sql.Identifier(schema)
                    )
                )
        except psycopg.errors.InsufficientPrivilege:
            pass


def _create_database(admin: psycopg.Connection[Any], name: str) -> None:
    exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
    if not exists:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


@contextlib.contextmanager
def _ingest_lock(location: StoreLocation) -> Iterator[psycopg.Connection[Any]]:
    """One ingest per store at a time (a session advisory lock, released on disconnect).

    Yields the lock's autocommit connection to the ``postgres`` database, for the ingest's
    other cluster-level statements.
    """
    key = f"foretab-ingest:{location.database_name('history')}"
    with psycopg.connect(location.history, dbname="postgres", autocommit=True) as conn:
        got = conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [key])
        row = got.fetchone()
        if not (row and row[0]):
            raise StoreError(
                f"another `foretab ingest` into {location.describe()} is running; nothing was "
                "written. Wait for it to finish, then run this ingest again."
            )
        try:
            yield conn
        finally:
            # Released explicitly: the lock would also go with the connection, but a closed
            # connection's server process may hold it a moment longer, and an ingest started
            # right after this one would then be refused as "running".
            with contextlib.suppress(psycopg.Error):  # a lost connection took the lock along
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", [key])


def check_target(location: StoreLocation, admin: psycopg.Connection[Any]) -> None:
    """Refuse (writing nothing) unless each database is missing, empty or a store of its side.

    ``admin``: an autocommit connection to the server's ``postgres`` database.
    """
    for side in ("history", "future"):
        name = location.database_name(side)
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            continue
        with psycopg.connect(location.history, dbname=name, autocommit=True) as conn:
            verdict = _classify(conn, side)
        if verdict is None:
            continue
        which = "" if side == "history" else f" (the future side of --db {location.describe()})"
        raise StoreError(
            f"PostgreSQL database {name}{which} exists and {verdict}, so ingest changed nothing. "
            "Choose a new database name in --db (`foretab ingest` creates it), or drop that "
            f"database yourself if nothing in it is needed (DROP DATABASE {name})."
        )


def _classify(conn: psycopg.Connection[Any], side: str) -> str | None:
    """None if ingest may write to this database, else why not (for the message)."""
    sides = _marked_sides(conn)
    if side in sides:
        return None
    if sides:
        other = sorted(sides)[0]
        hint = (
            "pass the history database (the name without _future)"
            if other == "future"
            else ("it is the history database of another store")
        )
        return f"holds the {other} side of a foretab store, not the {side} side ({hint})"
    found = conn.execute(
        "SELECT n.nspname, c.relname FROM pg_class AS c JOIN pg_namespace AS n "
        "ON n.oid = c.relnamespace WHERE n.nspname NOT IN " + _SYSTEM_SCHEMAS + " "
        "AND n.nspname NOT LIKE 'pg\\_%' ORDER BY 1, 2 LIMIT 3"
    ).fetchall()
    schemas = conn.execute(
        "SELECT nspname FROM pg_namespace WHERE nspname NOT IN " + _SYSTEM_SCHEMAS + " "
        "AND nspname <> 'public' AND nspname NOT LIKE 'pg\\_%' ORDER BY 1 LIMIT 3"
    ).fetchall()
    if not found and not schemas:
        return None  # an empty database (e.g. made with createdb for this store)
    names = [f"{s}.{r}" for s, r in found] or [f"schema {s}" for (s,) in schemas]
    return (
        f"is not a foretab store (it has no foretab_meta side row and holds "
        f"{', '.join(names)}{', …' if len(names) >= 3 else ''})"
    )


def _marked_sides(conn: psycopg.Connection[Any]) -> set[str]:
    """The store sides this database's foretab metadata declares (new or older layout)."""
    sides: set[str] = set()
    if current_generation(conn) is not None:
        sides.add("history")
    schemas = [
        r[0]
        for r in conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", [SCHEMA_LIKE]
        ).fetchall()
    ]
    for schema in [*schemas, "public"]:
        meta = sql.Identifier(schema, META_TABLE)
        has = conn.execute("SELECT to_regclass(%s)", [f'"{schema}".{META_TABLE}']).fetchone()
        if not has or has[0] is None:
            continue
        row = conn.execute(
            sql.SQL("SELECT value FROM {} WHERE key = %s").format(meta), [SIDE_KEY]
        ).fetchone()
        if row and row[0] in ("history", "future"):
            sides.add(str(row[0]))
    return sides


def clean_leftovers(location: StoreLocation) -> None:
    """Drop every generation but the current and the previous one, in both databases.

    Also the ``public`` tables of a store of the older layout, once a generation is current.
    A generation still being read when its drop times out is left (perhaps in part: the
    drop commits every ``PG_TABLES_PER_COMMIT`` tables) for the next ingest.
    """
    row = None
    with contextlib.suppress(psycopg.Error), psycopg.connect(location.history) as conn:
        row = conn.execute(
            sql.SQL("SELECT generation, previous FROM {}").format(
                sql.Identifier("public", POINTER_TABLE)
            )
        ).fetchone()
    if row is None:
        return
    keep = {generation_schema(g) for g in row if g}
    for side in ("history", "future"):
        target = location.history if side == "history" else location.future
        with contextlib.suppress(psycopg.Error), psycopg.connect(target) as conn:
            conn.execute(f"SET lock_timeout = '{_LOCK_TIMEOUT}'")
            conn.commit()
            schemas = conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s ORDER BY 1",
                [SCHEMA_LIKE],
            ).fetchall()
            conn.commit()
            for (schema,) in schemas:
                if schema not in keep:
                    # A batch at a time: one DROP SCHEMA of 100x the corpus's generation
                    # needs more locks than a default server has (``drop_schema``).
                    _attempt(conn, lambda c, s=schema: drop_schema(c, s))
            _attempt(conn, drop_legacy_tables)


def _attempt(conn: psycopg.Connection[Any], action: Callable[[Any], object]) -> None:
    """Run ``action`` in its own transaction; a failure leaves it for the next ingest.

    The switch has committed by now: the new store is live whatever happens here, and an
    old generation still being read (a lock timeout) is harmless where it is.
    """
    try:
        action(conn)
        conn.commit()
    except psycopg.Error:
        conn.rollback()
