"""Write a ``SideLayout`` to DuckDB or PostgreSQL.

Both writers build the new store completely before it becomes visible: DuckDB into a
new generation's files (``foretab.store.swap``), PostgreSQL into a new generation's schema,
one transaction per database (``foretab.store.pg_swap``). A failure leaves the old store
as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import duckdb
import pandas as pd
import psycopg
from psycopg import sql

from foretab.store.layout import SideLayout
from foretab.store.naming import (
    ARTIFACTS_TABLE,
    CATALOG_TABLE,
    META_TABLE,
    PROJECTS_TABLE,
    is_table_name,
)

Progress = Callable[[str], None]  # called once per table written, with its name

#: The PostgreSQL index of ``foretab_projects`` by (city, district, project).
PROJECTS_INDEX = "foretab_projects_place"

_CATALOG_COLUMNS = (
    "table_name TEXT, caption TEXT, city TEXT, district TEXT, year INTEGER, rows INTEGER"
)
_PROJECT_COLUMNS = (
    "city TEXT, district TEXT, project TEXT, first_month DATE, last_month DATE, "
    "n_months INTEGER, project_zh TEXT, city_zh TEXT, district_zh TEXT"
)


#: Tables created per DuckDB transaction by ``write_duckdb``: the real corpus's 304
#: history tables in one, as before; at 100x the corpus (30,590) about 30.
TABLES_PER_COMMIT = 1_000


#: DuckDB's memory limit while ``write_duckdb`` builds a store file.
WRITE_MEMORY_LIMIT = "2GB"


def write_duckdb(
    path: str, layout: SideLayout, meta: Mapping[str, str], progress: Progress
) -> None:
    """Create a new DuckDB store file at ``path`` (which must not exist yet)."""
    # Tables written stay in DuckDB's buffer pool up to its memory limit (80% of RAM by
    # default): at 100x the corpus the ingest's RSS grew with the 11 GB file. Written
    # blocks are on disk, so a lower limit only evicts them.
    conn = duckdb.connect(path, config={"memory_limit": WRITE_MEMORY_LIMIT})
    try:
        # Each row's table as its index in ``layout.tables``: an integer filter is pruned
        # by the sorted temp table's zone maps, a text one only on its first 8 bytes
        # (most table names share them), which made every table scan all rows.
        names = [spec.table_name for spec in layout.tables]
        codes = pd.Categorical(layout.rows["_table"], categories=names).codes
        incoming = layout.rows.drop(columns="_table").assign(_table_id=codes)
        # Copy the frame into DuckDB once; scanning a pandas frame per table is far slower.
        conn.register("incoming_frame", incoming)
        # Sorted by table: each table's filter below reads only its own row groups.
        conn.execute(
            "CREATE TEMP TABLE incoming_rows AS SELECT * FROM incoming_frame ORDER BY _table_id"
        )
        conn.unregister("incoming_frame")
        del incoming
        extras = "".join(f', CAST("{c}" AS VARCHAR) AS "{c}"' for c in layout.extra_columns)
        # Column names come from the corpus schema (validated identifiers), quoted anyway.
        cols = layout.columns
        casts = [(cols.entity, "VARCHAR"), (cols.month, "DATE"), (cols.value, "DOUBLE")]
        casts += [(cols.summed, "INTEGER")] if cols.summed else []
        select = ", ".join(f'CAST("{c}" AS {t}) AS "{c}"' for c, t in casts)
        # One transaction per TABLES_PER_COMMIT tables: a commit per table costs more than
        # the table, and one for all of them holds every table in memory until the end.
        # (The file is a new generation nobody reads before ``swap_in`` renames it in.)
        for start in range(0, len(names), TABLES_PER_COMMIT):
            conn.execute("BEGIN TRANSACTION")
            for index in range(start, min(start + TABLES_PER_COMMIT, len(names))):
                conn.execute(
                    f'CREATE TABLE "{names[index]}" AS SELECT {select}{extras} '
                    f"FROM incoming_rows WHERE _table_id = ? "
                    f'ORDER BY "{cols.entity}", "{cols.month}"',
                    [index],
                )
                progress(names[index])
            conn.execute("COMMIT")
        conn.execute("BEGIN TRANSACTION")
        conn.execute("DROP TABLE incoming_rows")
        _write_metadata_duckdb(conn, layout, meta)
        conn.execute("COMMIT")
        conn.execute("CHECKPOINT")
    finally:
        conn.close()


def _write_metadata_duckdb(
    conn: duckdb.DuckDBPyConnection, layout: SideLayout, meta: Mapping[str, str]
) -> None:
    conn.execute(f"CREATE TABLE {CATALOG_TABLE} ({_CATALOG_COLUMNS})")
    catalog = pd.DataFrame(
        [[s.table_name, s.caption, s.outer, s.inner, s.year, s.rows] for s in layout.tables],
        columns=["table_name", "caption", "city", "district", "year", "rows"],
    )
    conn.register("incoming_catalog", catalog)  # executemany is slow in DuckDB
    conn.execute(f"INSERT INTO {CATALOG_TABLE} SELECT * FROM incoming_catalog")
    conn.unregister("incoming_catalog")
    conn.execute(f"CREATE TABLE {PROJECTS_TABLE} ({_PROJECT_COLUMNS})")
    conn.register("incoming_projects", layout.projects)
    conn.execute(f"INSERT INTO {PROJECTS_TABLE} SELECT * FROM incoming_projects")
    conn.unregister("incoming_projects")
    conn.execute(f"CREATE TABLE {META_TABLE} (key TEXT, value TEXT)")
    conn.executemany(f"INSERT INTO {META_TABLE} VALUES (?, ?)", list(meta.items()))


#: Tables created per PostgreSQL transaction by ``write_postgres`` (and dropped per
#: transaction by ``drop_schema``). A table created in a transaction holds three locks until
#: it commits (the table, its TOAST table and the TOAST index; a drop five), and the
#: server's lock table is shared by every session: ``max_locks_per_transaction`` (64) ×
#: its connections, about 7,800 locks on a default server. The 30,592 tables of 100x the
#: corpus in one transaction failed with "out of shared memory"; 500 hold 1,500. The real
#: corpus's 304 tables are still written in one transaction.
PG_TABLES_PER_COMMIT = 500


def write_postgres(
    url: str,
    layout: SideLayout,
    meta: Mapping[str, str],
    progress: Progress,
    schema: str,
    finish: Callable[[psycopg.Connection[Any]], None] | None = None,
) -> None:
    """Write one side of a new generation into the new schema ``schema``.

    The tables are committed ``PG_TABLES_PER_COMMIT`` at a time, the metadata table with
    the first; the last of them, the catalog and projects tables (with the projects'
    index) and ``finish(conn)`` (the history side's switch) in one last transaction, so a
    store of up to ``PG_TABLES_PER_COMMIT`` tables is written in one. Nothing that exists
    is changed: readers see the schema only once a pointer names it. On an error the
    schema is dropped again (a kill leaves it to the next ingest's ``clean_leftovers``).
    """
    committed: list[bool] = []  # set once a batch is committed: the schema is this writer's to drop

    def commit() -> None:
        conn.commit()
        committed.append(True)

    with psycopg.connect(url) as conn:  # the last transaction: commit on success
        try:
            _write_postgres(conn, layout, meta, progress, schema, finish, commit)
        except BaseException:
            conn.rollback()
            if committed:
                with contextlib.suppress(psycopg.Error):  # a lost connection: a later ingest's
                    drop_schema(conn, schema)
            raise


def _write_postgres(
    conn: psycopg.Connection[Any],
    layout: SideLayout,
    meta: Mapping[str, str],
    progress: Progress,
    schema: str,
    finish: Callable[[psycopg.Connection[Any]], None] | None,
    commit: Callable[[], None],
) -> None:
    conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(schema)))
    # The metadata first: a schema an ingest killed part-way leaves behind says which side
    # it is, so the next ingest into the database is not refused (``check_target``).
    meta_table = sql.Identifier(schema, META_TABLE)
    conn.execute(sql.SQL("CREATE TABLE {} (key TEXT, value TEXT)").format(meta_table))
    with conn.cursor() as cur:
        cur.executemany(
            sql.SQL("INSERT INTO {} VALUES (%s, %s)").format(meta_table), list(meta.items())
        )
    extras = [sql.SQL(", {} TEXT").format(sql.Identifier(c)) for c in layout.extra_columns]
    cols = layout.columns
    columns = [*cols.standard, *layout.extra_columns]
    types = [(cols.entity, "TEXT"), (cols.month, "DATE"), (cols.value, "DOUBLE PRECISION")]
    types += [(cols.summed, "INTEGER")] if cols.summed else []
    definitions = sql.SQL(", ").join(
        sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(t)) for c, t in types
    )
    groups = dict(tuple(layout.rows.groupby("_table", sort=False)))
    for number, spec in enumerate(layout.tables):
        if number and number % PG_TABLES_PER_COMMIT == 0:
            commit()  # see PG_TABLES_PER_COMMIT: the locks go with the commit
        ident = sql.Identifier(schema, spec.table_name)
        conn.execute(
            sql.SQL("CREATE TABLE {} ({}{})").format(ident, definitions, sql.SQL("").join(extras))
        )
        part = groups[spec.table_name].sort_values([cols.entity, cols.month])
        _copy_rows(conn, ident, part[columns].itertuples(index=False, name=None), columns)
        progress(spec.table_name)

    def named(table: str) -> sql.Composed:
        return sql.SQL("{}").format(sql.Identifier(schema, table))

    conn.execute(sql.SQL("CREATE TABLE {} (" + _CATALOG_COLUMNS + ")").format(named(CATALOG_TABLE)))
    _copy_rows(
        conn,
        named(CATALOG_TABLE),
        ([s.table_name, s.caption, s.outer, s.inner, s.year, s.rows] for s in layout.tables),
    )
    conn.execute(
        sql.SQL("CREATE TABLE {} (" + _PROJECT_COLUMNS + ")").format(named(PROJECTS_TABLE))
    )
    # COPY: 563,400 projects at 100x the corpus.
    _copy_rows(conn, named(PROJECTS_TABLE), layout.projects.itertuples(index=False, name=None))
    # A forecast's refusal reads one project's row (``HistoryStore.last_month``): without
    # an index a scan of every project (30 ms at 100x the corpus, growing with it).
    conn.execute(
        sql.SQL("CREATE INDEX {} ON {} (city, district, project)").format(
            sql.Identifier(PROJECTS_INDEX), named(PROJECTS_TABLE)
        )
    )
    if finish is not None:
        finish(conn)


def drop_legacy_tables(conn: psycopg.Connection[Any]) -> None:
    """Drop the ``public`` tables of a store of the older single-schema layout.

    Only what foretab made: the tables its old catalog lists, and its own metadata.
    """
    has_catalog = conn.execute("SELECT to_regclass('public.foretab_catalog')").fetchone()
    names: list[str] = []
    if has_catalog and has_catalog[0] is not None:
        listed = conn.execute(f"SELECT table_name FROM public.{CATALOG_TABLE}").fetchall()
        # A crafted catalog must not make ingest drop tables foretab never wrote.
        names = [r[0] for r in listed if is_table_name(r[0])]
    # Fitted models describe the old data: drop them with it.
    for name in [*names, CATALOG_TABLE, PROJECTS_TABLE, META_TABLE, ARTIFACTS_TABLE]:
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier("public", name)))


def _copy_rows(
    conn: psycopg.Connection[Any],
    table: sql.Composable,
    rows: Iterable[Sequence[object]],
    columns: Sequence[str] | None = None,
) -> None:
    """``COPY table [(columns)] FROM STDIN`` of ``rows`` (NaN and NA as NULL)."""
    listed = (
        sql.SQL(" ({})").format(sql.SQL(", ").join(map(sql.Identifier, columns)))
        if columns is not None
        else sql.SQL("")
    )
    with conn.cursor().copy(sql.SQL("COPY {}{} FROM STDIN").format(table, listed)) as copy:
        for record in rows:
            copy.write_row([_pg_value(v) for v in record])


def drop_schema(conn: psycopg.Connection[Any], schema: str) -> None:
    """Drop ``schema`` and everything in it, ``PG_TABLES_PER_COMMIT`` tables a transaction.

    One ``DROP SCHEMA … CASCADE`` of 100x the corpus's generation takes five locks for each
    of its 30,592 tables, far more than a default server's lock table holds. Commits as it
    goes: a failure part-way leaves the rest (of a generation nobody reads) for later.
    """
    while True:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT c.relname FROM pg_class AS c JOIN pg_namespace AS n "
                "ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind = 'r' "
                "ORDER BY 1 LIMIT %s",
                [schema, PG_TABLES_PER_COMMIT],
            ).fetchall()
        ]
        if not names:
            break
        conn.execute(
            sql.SQL("DROP TABLE {} CASCADE").format(
                sql.SQL(", ").join(sql.Identifier(schema, n) for n in names)
            )
        )
        conn.commit()
    conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    conn.commit()


def _pg_value(value: object) -> object:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:
        return None
    if hasattr(value, "item"):
        return value.item()  # numpy scalar → Python
    return value
